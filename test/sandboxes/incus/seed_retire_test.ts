// Seeds are bounded on the Incus backend too: once a seed's last session closes and its grace
// passes, its spare containers are removed (and found gone on the daemon), and the server holds
// no state for it.
import { assertEquals } from "@std/assert";
import { startServer } from "../../../adapters/http/server.ts";
import { WebServClient } from "../../../adapters/client/mod.ts";
import { ownerTag } from "../../../sandboxes/_owner.ts";
import { IncusClient } from "../../../sandboxes/incus/client.ts";
import { waitFor } from "../../_util/wait.ts";

const POOL = Deno.env.get("WEBSERV_INCUS_POOL") ?? "webserv-btrfs";

/** The env containers of this process that Incus has (sessions' and spares'). */
async function envContainers(client: IncusClient): Promise<string[]> {
  return (await client.listInstances()).filter((instance) =>
    instance.config["user.webserv.owner"] === ownerTag() &&
    instance.config["user.webserv.role"] === "env"
  ).map((instance) => instance.name);
}

Deno.test("on the incus backend an idle seed's spares are removed after the grace period", async () => {
  await using server = await startServer({
    port: 0,
    backend: "incus",
    incusPool: POOL,
    spares: 1,
    seedGraceMs: 50,
  });
  using incus = new IncusClient();
  const client = new WebServClient(server.url);
  const created = await client.createSession({ site: "demo", seed: 0 });
  await waitFor(async () => (await server.readySpares()) === 1, {
    message: "the seed's spare is launched",
    timeoutMs: 120_000,
    intervalMs: 100,
  });
  await client.close(created.id);
  await waitFor(async () => (await server.readySpares()) === 0, {
    message: "the idle seed's spare is removed",
    timeoutMs: 60_000,
    intervalMs: 50,
  });
  const metrics = await (await fetch(`${server.url}/metrics`)).text();
  assertEquals(metrics.match(/^webserv_seed_state (\d+)$/m)?.[1], "0");
  await waitFor(async () => (await envContainers(incus)).length === 0, {
    message: "no env container of this process is left on the daemon",
    timeoutMs: 60_000,
    intervalMs: 200,
  });
});

Deno.test("on the incus backend the placement targets' backends are bounded: one with no live session makes room", async () => {
  await using server = await startServer({
    port: 0,
    backend: "incus",
    incusPool: POOL,
    maxTargets: 2,
  });
  const open = (target: string) =>
    fetch(`${server.url}/v1/sessions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ site: "demo", target }),
    });
  // This daemon is no cluster: Incus refuses every target, and each named one opened a backend.
  for (const target of ["member-a", "member-b", "member-c", "member-d"]) {
    const refused = await open(target);
    assertEquals(refused.status, 503);
    await refused.body?.cancel();
  }
  const metrics = await (await fetch(`${server.url}/metrics`)).text();
  assertEquals(metrics.match(/^webserv_target_sandboxes (\d+)$/m)?.[1], "2");
});
