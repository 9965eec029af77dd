// Readiness of an instance's socket folder: the state socket answering is not
// enough when the gateway reaches the site through site.sock (an image may
// start its site relay beside its state server, and the state server can
// answer first under load).
import { assertRejects, assertStringIncludes } from "@std/assert";
import { SocketDirectory } from "../../sandboxes/_socket_directory.ts";
import { SandboxTimeoutError } from "../../sandboxes/errors.ts";

async function withStateServer(
  run: (directory: SocketDirectory) => Promise<void>,
): Promise<void> {
  const path = await Deno.makeTempDir({ prefix: "webserv-sockets-" });
  using directory = new SocketDirectory(path);
  const state = Deno.serve(
    { path: directory.stateSocket, onListen() {} },
    () => new Response("ok"),
  );
  try {
    await run(directory);
  } finally {
    await state.shutdown();
    await Deno.remove(path, { recursive: true });
  }
}

Deno.test("waitUntilReady answers on the state socket alone when the site is not reached through site.sock", async () => {
  await withStateServer(async (directory) => {
    await directory.waitUntilReady({ timeoutMs: 20_000 });
  });
});

Deno.test("waitUntilReady with site waits for site.sock and names it when it never listens", async () => {
  await withStateServer(async (directory) => {
    const error = await assertRejects(
      () => directory.waitUntilReady({ timeoutMs: 1_000, site: true }),
      SandboxTimeoutError,
    );
    assertStringIncludes(error.message, directory.siteSocket);
    const site = Deno.serve(
      { path: directory.siteSocket, onListen() {} },
      () => new Response("site"),
    );
    try {
      await directory.waitUntilReady({ timeoutMs: 20_000, site: true });
    } finally {
      await site.shutdown();
    }
  });
});
