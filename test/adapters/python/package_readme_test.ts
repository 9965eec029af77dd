// adapters/python/README.md runs as written: each python block in the venv
// .ci/python.sh makes (the installed package, from a directory where the
// source is not importable) against a real server whose cap is below the
// blocks' batches. The Ray block needs Ray: ray_test.ts runs it.
import { assert, assertEquals } from "@std/assert";
import { startServer } from "../../../adapters/http/server.ts";
import { venvPython } from "./_venv.ts";
import { packageReadmeBlocks } from "./_package_readme.ts";

Deno.test("the Python package's README runs as written against the installed package", async () => {
  const python = venvPython();
  const blocks = await packageReadmeBlocks(false);
  assertEquals(blocks.length, 5, "the README's python blocks (besides Ray)");
  await using server = await startServer({ port: 0, maxSessions: 3 });
  const cwd = await Deno.makeTempDir();
  try {
    for (const [index, code] of blocks.entries()) {
      const output = await new Deno.Command(python, {
        args: ["-c", code],
        cwd,
        env: { WEBSERV_URL: server.url },
        stdout: "piped",
        stderr: "piped",
      }).output();
      const stderr = new TextDecoder().decode(output.stderr);
      assert(output.code === 0, `Block ${index + 1} failed:\n${code}\n${stderr}`);
    }
  } finally {
    await Deno.remove(cwd, { recursive: true });
  }
  assertEquals(server.sessions.live, 0, "a block left a session open");
});
