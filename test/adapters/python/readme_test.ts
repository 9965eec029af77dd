// The trainer page runs as written: every python block of docs/python.md,
// in the venv .ci/python.sh makes, against a real server (the webserv.ray
// block needs a Ray cluster: ray_test.ts runs it on one).
import { assert } from "@std/assert";
import { startServer } from "../../../adapters/http/server.ts";
import { venvPython } from "./_venv.ts";
import { assertBlocksRun, pythonBlocks } from "./_package_readme.ts";

const PAGE = new URL("../../../docs/python.md", import.meta.url);

async function trainerBlocks(): Promise<string[]> {
  return (await pythonBlocks(PAGE)).filter((code) => !code.includes("webserv.ray"));
}

Deno.test("the trainer snippets of docs/python.md run as written", async () => {
  const python = venvPython();
  const blocks = await trainerBlocks();
  assert(blocks.length >= 3, `Found ${blocks.length} python blocks in docs/python.md`);
  await using server = await startServer({ port: 0, maxSessions: 4 });
  await assertBlocksRun(python, blocks, server.url);
  assert(server.sessions.live === 0, "a snippet left a session open");
});
