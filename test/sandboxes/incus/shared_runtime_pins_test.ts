// The host's side of a shared runtime's sockets, with no container: the
// runtime's control and each env's sockets are dialled only once pinned in
// the host's folder, so a runtime that links them elsewhere (to a host
// daemon's socket, to another env's state server) is refused, and what it
// does after the pin moves nothing.
import { assertEquals, assertRejects } from "@std/assert";
import { join } from "node:path";
import { SocketTamperedError } from "../../../sandboxes/errors.ts";
import { SocketDirectory } from "../../../sandboxes/_socket_directory.ts";
import { Runtime } from "../../../sandboxes/incus/_shared_runtime_control.ts";
import { fakeServer } from "../_hostile.ts";

/** A runtime's host folder with its container's folder (`ws/`), as the sandbox makes them. */
async function withRuntimeFolder(run: (folder: string, mounted: string) => Promise<void>) {
  const root = await Deno.makeTempDir({ prefix: "webserv-shared-" });
  const folder = join(root, "wsshared-rt-test");
  using directory = new SocketDirectory(folder);
  await directory.create();
  try {
    await run(folder, directory.mounted);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
}

Deno.test("Runtime.pin() refuses a control.sock the runtime linked to a host socket", async () => {
  await withRuntimeFolder(async (folder, mounted) => {
    await using fake = await fakeServer({ envs: 0, spares: 0, sparesLost: 0 });
    await Deno.symlink(fake.path, join(mounted, "control.sock"));
    const runtime = new Runtime("wsshared-rt-test", folder, { uid: 0, gid: 0 });
    try {
      await assertRejects(() => runtime.pin(), SocketTamperedError);
      // Never pinned, never dialled: the call finds no socket at all.
      await assertRejects(() => runtime.call("GET", "/healthz", undefined, 2_000));
      assertEquals(fake.hits, 0);
    } finally {
      runtime.close();
    }
  });
});

Deno.test("Runtime.call() keeps reaching the pinned control when the runtime links control.sock elsewhere", async () => {
  await withRuntimeFolder(async (folder, mounted) => {
    const control = Deno.serve(
      { path: join(mounted, "control.sock"), onListen() {} },
      () => Response.json({ envs: 1, spares: 2, sparesLost: 0 }),
    );
    const runtime = new Runtime("wsshared-rt-test", folder, { uid: 0, gid: 0 });
    try {
      assertEquals(await runtime.pin(), true);
      await using fake = await fakeServer({ envs: 999, spares: 0, sparesLost: 0 });
      await Deno.remove(join(mounted, "control.sock"));
      await Deno.symlink(fake.path, join(mounted, "control.sock"));
      assertEquals(await runtime.call("GET", "/healthz", undefined, 5_000), {
        envs: 1,
        spares: 2,
        sparesLost: 0,
      });
      assertEquals(fake.hits, 0);
    } finally {
      runtime.close();
      await control.shutdown();
    }
  });
});

Deno.test("an env's sockets in a shared runtime are refused when another user of the runtime made them", async () => {
  await withRuntimeFolder(async (folder, mounted) => {
    const owner = { uid: 0, gid: 0 };
    // The control made the env's folder; another uid (www-data) bound the state socket.
    await Deno.mkdir(join(mounted, "env-k"), { mode: 0o755 });
    const state = Deno.serve(
      { path: join(mounted, "env-k", "state.sock"), onListen() {} },
      () => new Response("fake"),
    );
    try {
      await Deno.chown(join(mounted, "env-k", "state.sock"), 1_000_033, 1_000_033);
      using env = new SocketDirectory(join(folder, "env-k"), {
        mounted: join(mounted, "env-k"),
        owner,
      });
      await env.create({ mounted: false });
      await assertRejects(() => env.pinNow(["state.sock"]), SocketTamperedError);
    } finally {
      await state.shutdown();
    }
  });
});
