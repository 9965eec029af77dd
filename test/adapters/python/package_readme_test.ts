// adapters/python/README.md runs as written: each python block in the venv
// .ci/python.sh makes (the installed package, from a directory where the
// source is not importable) against a real server whose cap is below the
// blocks' batches. The Ray block needs Ray: ray_test.ts runs it.
import { assertEquals } from "@std/assert";
import { startServer } from "../../../adapters/http/server.ts";
import { venvPython } from "./_venv.ts";
import { assertBlocksRun, packageReadmeBlocks } from "./_package_readme.ts";

Deno.test("the Python package's README runs as written against the installed package", async () => {
  const python = venvPython();
  const blocks = await packageReadmeBlocks(false);
  assertEquals(blocks.length, 5, "the README's python blocks (besides Ray)");
  await using server = await startServer({ port: 0, maxSessions: 3 });
  const cwd = await Deno.makeTempDir();
  try {
    await assertBlocksRun(python, blocks, server.url, cwd);
  } finally {
    await Deno.remove(cwd, { recursive: true });
  }
  assertEquals(server.sessions.live, 0, "a block left a session open");
});
