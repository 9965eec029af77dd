// A foothold in a shared runtime's container, on a real Incus container of a
// small stand-in image (`_fake_shared_site.ts`: the real control's routes
// and folders, none of WordPress): the web server's user (uid 33) can neither
// plant a socket in the runtime's /run/ws nor rename an env's folder; what
// the runtime's root links in place of the control's or an env's sockets
// never reaches the host; and the runtime has a process limit.
import { assert, assertEquals, assertNotEquals } from "@std/assert";
import { fileURLToPath } from "node:url";
import { Gateway } from "../../../sandboxes/gateway.ts";
import { SandboxError } from "../../../sandboxes/errors.ts";
import { IncusClient } from "../../../sandboxes/incus/client.ts";
import { SharedRuntimeSandbox } from "../../../sandboxes/incus/shared_runtime_sandbox.ts";
import { buildImages } from "../../../sandboxes/image/build_images.ts";
import { fakeServer, incusExec as exec, plantLink } from "../_hostile.ts";

const POOL = Deno.env.get("WEBSERV_INCUS_POOL") ?? "webserv-btrfs";
const IMAGE = "webserv-sharedfake";
const SITE = fileURLToPath(new URL("./_fake_shared_site.ts", import.meta.url));

Deno.test({
  name:
    "SharedRuntimeSandbox: a foothold in the runtime reaches neither another env's folder nor the host",
  async fn(t) {
    using client = new IncusClient();
    // Seconds to build; up to date (not imported again) when it did not change.
    await buildImages(SITE, { incus: client, log: () => {} });
    await using gateway = new Gateway();
    await using sandbox = await SharedRuntimeSandbox.open({
      gateway,
      image: IMAGE,
      pool: POOL,
      readyTimeoutMs: 60_000,
    });
    await using a = await sandbox.create({ seed: 1 });
    await using b = await sandbox.create({ seed: 1 });
    const views = async (env: typeof a) =>
      await (await env.state.fetch("/views", { signal: AbortSignal.timeout(10_000) })).json();
    assertEquals(await views(a), { views: 0, key: a.key });
    const runtime = a.runtimeName;

    await t.step("the runtime has a process limit", async () => {
      const { config } = await client.request("GET", `/1.0/instances/${runtime}`) as {
        config: Record<string, string>;
      };
      assertEquals(config["limits.processes"], "32768");
    });

    await t.step("uid 33 can neither write /run/ws nor rename an env's folder", async () => {
      const planted = await exec(
        runtime,
        ["/bin/sh", "-c", "echo x > /run/ws/planted && echo WROTE"],
        33,
      );
      assertEquals(planted.output.includes("WROTE"), false, planted.output);
      assert(/denied/i.test(planted.output), planted.output);
      const renamed = await exec(runtime, [
        "/bin/deno",
        "eval",
        `Deno.renameSync("/run/ws/env-${a.key}", "/run/ws/env-taken"); console.log("RE" + "NAMED");`,
      ], 33);
      assertEquals(renamed.output.includes("RENAMED"), false, renamed.output);
      assertNotEquals(renamed.code, 0, renamed.output);
      // Refused for want of permission, not for any other failure of the command.
      assert(/denied/i.test(renamed.output), renamed.output);
      assertEquals(await views(a), { views: 0, key: a.key });
    });

    await t.step(
      "the runtime's root links an env's state.sock to a host socket: never dialled",
      async () => {
        await using fake = await fakeServer({ views: 999 });
        const planted = await exec(runtime, [
          "/bin/deno",
          "eval",
          plantLink(`env-${a.key}/state.sock`, fake.path),
        ]);
        assertEquals(planted.code, 0, planted.output);
        try {
          assertEquals(await views(a), { views: 0, key: a.key });
        } catch (error) {
          assert(error instanceof SandboxError, String(error));
        }
        assertEquals(fake.hits, 0, "the verifier dialled the socket the runtime pointed it at");
      },
    );

    await t.step(
      "the runtime's root moves B's folder over A's: A's verifier still reads A",
      async () => {
        const moved = await exec(runtime, [
          "/bin/deno",
          "eval",
          `Deno.removeSync("/run/ws/env-${a.key}", { recursive: true });
Deno.renameSync("/run/ws/env-${b.key}", "/run/ws/env-${a.key}");`,
        ]);
        assertEquals(moved.code, 0, moved.output);
        try {
          assertEquals(await views(a), { views: 0, key: a.key });
        } catch (error) {
          assert(error instanceof SandboxError, String(error));
        }
      },
    );

    await t.step(
      "the runtime's root links control.sock and site.sock to a host socket: never dialled",
      async () => {
        await using fake = await fakeServer({ envs: 999, spares: 0, sparesLost: 0 });
        for (const socket of ["control.sock", `env-${a.key}/site.sock`]) {
          const planted = await exec(runtime, ["/bin/deno", "eval", plantLink(socket, fake.path)]);
          assertEquals(planted.code, 0, planted.output);
        }
        assertEquals((await sandbox.health(1)).envs, 2);
        const page = await gateway.request(a.origin, "/", { signal: AbortSignal.timeout(10_000) });
        const text = await page.text();
        assert(!text.includes("999"), text);
        assertEquals(fake.hits, 0, "the host dialled the socket the runtime pointed it at");
      },
    );
  },
});
