// The trainer page runs as written: every python block of docs/python.md,
// in the venv .ci/python.sh makes, against a real server (the webserv.ray
// block needs a Ray cluster: ray_test.ts runs it on one).
import { assert } from "@std/assert";
import { startServer } from "../../../adapters/http/server.ts";
import { venvPython } from "./_venv.ts";

const PAGE = new URL("../../../docs/python.md", import.meta.url);

function trainerBlocks(text: string): string[] {
  return [...text.matchAll(/```python\n([\s\S]*?)```/g)].map((m) => m[1]!)
    .filter((code) => !code.includes("webserv.ray"));
}

Deno.test("the trainer snippets of docs/python.md run as written", async () => {
  const python = venvPython();
  const blocks = trainerBlocks(await Deno.readTextFile(PAGE));
  assert(blocks.length >= 3, `Found ${blocks.length} python blocks in docs/python.md`);
  await using server = await startServer({ port: 0, maxSessions: 4 });
  for (const [index, code] of blocks.entries()) {
    const output = await new Deno.Command(python, {
      args: ["-c", code],
      env: { WEBSERV_URL: server.url },
      stdout: "piped",
      stderr: "piped",
    }).output();
    const stderr = new TextDecoder().decode(output.stderr);
    assert(output.code === 0, `Block ${index + 1} failed:\n${code}\n${stderr}`);
  }
  assert(server.sessions.live === 0, "a snippet left a session open");
});
