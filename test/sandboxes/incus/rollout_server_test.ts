// The rollout server on the Incus backend: a session on a real Incus
// instance of the forum site, its task bound to that container's state, and
// the placement target passed through to Incus.
import { assert, assertEquals, assertStringIncludes } from "@std/assert";
import { startServer } from "../../../adapters/http/server.ts";
import { WebServClient, WebServError } from "../../../adapters/client/mod.ts";
import { generateTask, siteByName } from "../../../fixtures/sites/mod.ts";
import { sessionAsEnv } from "../../_util/session_env.ts";

const POOL = Deno.env.get("WEBSERV_INCUS_POOL") ?? "webserv-btrfs";

Deno.test("startServer() runs a forum task on a real Incus instance to the verifier's reward", async () => {
  await using server = await startServer({ port: 0, backend: "incus", incusPool: POOL });
  const client = new WebServClient(server.url);
  const task = generateTask(siteByName("forum"), "join-forum", 2);
  const created = await client.createSession({ task: task.id });
  const instance = server.sessions.instance(created.id) as { containerName?: string };
  assert(instance.containerName?.startsWith("ws-"), JSON.stringify(instance.containerName));
  await siteByName("forum").templates.find((t) => t.id === "join-forum")!
    .solve(sessionAsEnv(client, created.id), task);
  assertEquals((await client.state(created.id)).rewards, [1]);
  // A reset brings the container's state back: the membership is gone.
  await client.reset(created.id);
  assertEquals((await client.verify(created.id)).reward, 0);
  assertEquals(await client.close(created.id), true);
  assertEquals(server.sessions.live, 0);
});

Deno.test("createSession() passes its placement target to Incus on the incus backend only", async () => {
  await using server = await startServer({ port: 0, backend: "incus", incusPool: POOL });
  const client = new WebServClient(server.url);
  // This daemon is not a cluster, so Incus itself refuses a target: the refusal
  // shows the target reached it.
  const refused = await client.createSession({ site: "demo", target: "member-2" }).catch((e) => e);
  assert(refused instanceof WebServError && refused.status === 503, String(refused));
  assertStringIncludes(refused.message, "Target only allowed when clustered");

  await using fixture = await startServer({ port: 0 });
  const other = new WebServClient(fixture.url);
  const bad = await other.createSession({ site: "demo", target: "member-2" }).catch((e) => e);
  assert(bad instanceof WebServError && bad.status === 400, String(bad));
  assertEquals(bad.code, "bad-spec");
});
