// A shared runtime whose control cannot copy a live env (an image built before it could, here the
// small stand-in of `_fake_shared_site.ts`, whose health says nothing of forks): its envs have no
// `fork`, and the rollout server answers a fork of a session on one with 409 `fork-unsupported`,
// the session going on unharmed.
import { assert, assertEquals } from "@std/assert";
import { fileURLToPath } from "node:url";
import { type Backend, BACKEND_REGISTRY } from "../../../adapters/http/backends.ts";
import { defaultCatalog } from "../../../adapters/http/catalog.ts";
import { startServer } from "../../../adapters/http/server.ts";
import { WebServClient, WebServError } from "../../../adapters/client/mod.ts";
import { buildImages } from "../../../sandboxes/image/build_images.ts";
import { IncusClient } from "../../../sandboxes/incus/client.ts";
import { SharedRuntimeSandbox } from "../../../sandboxes/incus/shared_runtime_sandbox.ts";

const POOL = Deno.env.get("WEBSERV_INCUS_POOL") ?? "webserv-btrfs";
const IMAGE = "webserv-sharedfake";
const SITE = fileURLToPath(new URL("./_fake_shared_site.ts", import.meta.url));

// Every session's site runs on the stand-in's runtime (this test module's registry alone).
BACKEND_REGISTRY.register({
  name: "sharedfake",
  summary: "the shared runtime's stand-in image, for tests",
  catalog: () => defaultCatalog([]),
  options: () => undefined,
  open: (_site, _options, { gateway }) =>
    SharedRuntimeSandbox.open({ gateway, image: IMAGE, pool: POOL, readyTimeoutMs: 60_000 }),
});

Deno.test("a shared runtime that cannot copy a live env: no Instance.fork, and the server's fork is 409 fork-unsupported", async () => {
  {
    using client = new IncusClient();
    // Seconds to build; up to date (not imported again) when it did not change.
    await buildImages(SITE, { incus: client, log: () => {} });
  }
  // The server takes any registered name; its option's type lists the shipped ones.
  const backend = "sharedfake" as Backend;
  await using server = await startServer({ port: 0, backend, maxSessions: 2 });
  const client = new WebServClient(server.url);
  const session = await client.createSession({ site: "demo" });
  const instance = server.sessions.instance(session.id);
  assert(instance, "the session has an instance");
  assertEquals(instance.fork, undefined);

  const refused = await client.fork(session.id, 1).catch((error) => error);
  assert(refused instanceof WebServError, String(refused));
  assertEquals([refused.status, refused.code], [409, "fork-unsupported"]);
  assertEquals(server.sessions.live, 1, "no fork was left open");
  // The session goes on.
  assertEquals((await client.observe(session.id)).url.startsWith("http://env-"), true);
  assertEquals(await client.close(session.id), true);
});
