// An instance's socket folder on the host. Readiness: the state socket
// answering is not enough when the gateway reaches the site through site.sock
// (an image may start its site relay beside its state server, and the state
// server can answer first under load), nor is a site socket that accepts (a
// real application's relay answers 502 while its web server is down). Tampering: the container's folder is
// the container's to change, so the host dials only what it pinned outside
// it, and refuses a symlink, anything but a socket, or another uid's socket.
import { assert, assertEquals, assertRejects, assertStringIncludes } from "@std/assert";
import { join } from "node:path";
import { SITE_PROBE_PATH, SocketDirectory } from "../../sandboxes/_socket_directory.ts";
import { relay } from "../../fixtures/sites/kit/site_relay.ts";
import { SandboxTimeoutError, SocketTamperedError } from "../../sandboxes/errors.ts";
import { fakeServer } from "./_hostile.ts";

/** A uid no process of the test runs as: another user inside a container. */
const OTHER_UID = 1_000_033;

async function withDirectory(run: (directory: SocketDirectory) => Promise<void>): Promise<void> {
  const root = await Deno.makeTempDir({ prefix: "webserv-sockets-" });
  using directory = new SocketDirectory(join(root, "ws-test"));
  await directory.create();
  try {
    await run(directory);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
}

/** A loopback port nothing listens on (now). */
function freePort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const { port } = listener.addr as Deno.NetAddr;
  listener.close();
  return port;
}

/** The instance's state server, where the container listens. */
function serveState(directory: SocketDirectory, body = "ok"): Deno.HttpServer {
  return Deno.serve(
    { path: join(directory.mounted, "state.sock"), onListen() {} },
    () => new Response(body),
  );
}

Deno.test("SocketDirectory.create() makes the container's folder writable by the container's root alone", async () => {
  await withDirectory(async (directory) => {
    const host = await Deno.lstat(directory.path);
    const mounted = await Deno.lstat(directory.mounted);
    assertEquals(host.mode! & 0o7777, 0o755);
    assertEquals(host.uid, 0);
    assertEquals(mounted.mode! & 0o7777, 0o755);
    await directory.own({ uid: OTHER_UID, gid: OTHER_UID });
    const owned = await Deno.lstat(directory.mounted);
    assertEquals([owned.uid, owned.gid, owned.mode! & 0o7777], [OTHER_UID, OTHER_UID, 0o755]);
  });
});

Deno.test("waitUntilReady answers on the state socket alone when the site is not reached through site.sock", async () => {
  await withDirectory(async (directory) => {
    const state = serveState(directory);
    try {
      await directory.waitUntilReady({ timeoutMs: 20_000 });
      assert((await Deno.lstat(directory.stateSocket)).isSocket, "the state socket was not pinned");
    } finally {
      await state.shutdown();
    }
  });
});

Deno.test("waitUntilReady with site waits for site.sock and names it when it never listens", async () => {
  await withDirectory(async (directory) => {
    const state = serveState(directory);
    try {
      const error = await assertRejects(
        () => directory.waitUntilReady({ timeoutMs: 1_000, site: true }),
        SandboxTimeoutError,
      );
      assertStringIncludes(error.message, join(directory.mounted, "site.sock"));
      const site = Deno.serve(
        { path: join(directory.mounted, "site.sock"), onListen() {} },
        () => new Response("site"),
      );
      try {
        await directory.waitUntilReady({ timeoutMs: 20_000, site: true });
      } finally {
        await site.shutdown();
      }
    } finally {
      await state.shutdown();
    }
  });
});

Deno.test("waitUntilReady with site waits while the site's relay answers 502 (its web server down), and is ready once the web server answers", async () => {
  await withDirectory(async (directory) => {
    const state = serveState(directory);
    // The relay real applications run in their container, in front of a port nothing listens on
    // yet: Apache not started, as in a copy whose init took a stale pid file for a live Apache.
    const port = freePort();
    const site = relay(join(directory.mounted, "site.sock"), port);
    try {
      const error = await assertRejects(
        () => directory.waitUntilReady({ timeoutMs: 1_500, site: true }),
        SandboxTimeoutError,
      );
      assertStringIncludes(error.message, join(directory.mounted, "site.sock"));
      assertStringIncludes(String((error.cause as Error).message), "502");
      const paths: string[] = [];
      const web = Deno.serve({ hostname: "127.0.0.1", port, onListen() {} }, (request) => {
        paths.push(new URL(request.url).pathname);
        return new Response("not found", { status: 404 });
      });
      try {
        await directory.waitUntilReady({ timeoutMs: 20_000, site: true });
        // What it asked for runs none of the application (see SITE_PROBE_PATH).
        assertEquals(paths, [SITE_PROBE_PATH]);
      } finally {
        await web.shutdown();
      }
    } finally {
      await site.shutdown();
      await state.shutdown();
    }
  });
});

Deno.test("waitUntilReady refuses a state.sock symlinked to a host socket, and never dials it", async () => {
  await withDirectory(async (directory) => {
    await using fake = await fakeServer({ views: 999 });
    await Deno.symlink(fake.path, join(directory.mounted, "state.sock"));
    const error = await assertRejects(
      () => directory.waitUntilReady({ timeoutMs: 5_000 }),
      SocketTamperedError,
    );
    assertStringIncludes(error.message, "symlink");
    assertEquals(fake.hits, 0);
  });
});

Deno.test("waitUntilReady refuses a site.sock symlinked to a host socket, and never dials it", async () => {
  await withDirectory(async (directory) => {
    const state = serveState(directory);
    try {
      await using fake = await fakeServer({ api: "the host's daemon" });
      await Deno.symlink(fake.path, join(directory.mounted, "site.sock"));
      await assertRejects(
        () => directory.waitUntilReady({ timeoutMs: 5_000, site: true }),
        SocketTamperedError,
      );
      assertEquals(fake.hits, 0);
    } finally {
      await state.shutdown();
    }
  });
});

Deno.test("waitUntilReady refuses a state server of another uid than the container's root", async () => {
  await withDirectory(async (directory) => {
    // Another user of the container (www-data, say) bound its own state server.
    const state = serveState(directory, "fake");
    try {
      await Deno.chown(join(directory.mounted, "state.sock"), OTHER_UID, OTHER_UID);
      const error = await assertRejects(
        () => directory.waitUntilReady({ timeoutMs: 5_000 }),
        SocketTamperedError,
      );
      assertStringIncludes(error.message, `uid ${OTHER_UID}`);
    } finally {
      await state.shutdown();
    }
  });
});

Deno.test("waitUntilReady refuses a state.sock that is not a socket", async () => {
  await withDirectory(async (directory) => {
    await Deno.writeTextFile(join(directory.mounted, "state.sock"), "not a socket");
    await assertRejects(
      () => directory.waitUntilReady({ timeoutMs: 5_000 }),
      SocketTamperedError,
    );
  });
});

Deno.test("the state client keeps the pinned socket when the container links state.sock elsewhere after readiness", async () => {
  await withDirectory(async (directory) => {
    const state = serveState(directory, "real");
    try {
      await directory.waitUntilReady({ timeoutMs: 20_000 });
      await using fake = await fakeServer({ views: 999 });
      await Deno.remove(join(directory.mounted, "state.sock"));
      await Deno.symlink(fake.path, join(directory.mounted, "state.sock"));
      assertEquals(
        await (await directory.state.fetch("/views", { signal: AbortSignal.timeout(10_000) }))
          .text(),
        "real",
      );
      assertEquals(fake.hits, 0);
    } finally {
      await state.shutdown();
    }
  });
});

Deno.test("a shared runtime's env folder swapped for a symlink is refused", async () => {
  await withDirectory(async (runtime) => {
    // The runtime container makes env-KEY/ itself; here it is a symlink to
    // another container's folder, whose sockets have the same owner.
    const other = join(runtime.path, "other");
    await Deno.mkdir(other);
    const server = Deno.serve(
      { path: join(other, "state.sock"), onListen() {} },
      () => new Response("another env's state"),
    );
    try {
      await Deno.symlink(other, join(runtime.mounted, "env-k"));
      using env = new SocketDirectory(join(runtime.path, "env-k"), {
        mounted: join(runtime.mounted, "env-k"),
      });
      await env.create({ mounted: false });
      await assertRejects(() => env.pinNow(["state.sock"]), SocketTamperedError);
    } finally {
      await server.shutdown();
    }
  });
});
