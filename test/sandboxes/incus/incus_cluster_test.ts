// Beyond one host, on Incus's own cluster: two incusd on this machine, each in
// a network namespace of its own and joined over a veth pair
// (`tools/incus_cluster.ts`), form a real Incus cluster; instances are placed
// on either member by `target`, and a member lost mid-run (its incusd and its
// containers killed, as if its machine went away) is an `env_error` to the
// session, recovered by a reset that lands on the other member. Everything the
// test made is removed at the end, and the host's own incusd is never changed.
import { assert, assertEquals, assertStringIncludes } from "@std/assert";
import { Gateway } from "../../../sandboxes/gateway.ts";
import { IncusSandbox } from "../../../sandboxes/incus/incus_sandbox.ts";
import type { ContainerInstance } from "../../../sandboxes/_container_instance.ts";
import { startServer } from "../../../adapters/http/server.ts";
import { WebServClient } from "../../../adapters/client/mod.ts";
import { IncusCluster } from "../../../tools/incus_cluster.ts";
import { waitFor } from "../../_util/wait.ts";

/** Where each instance of the cluster is, by name. */
async function locations(cluster: IncusCluster): Promise<Map<string, string>> {
  using client = cluster.client(cluster.members[0]!);
  return new Map((await client.listInstances()).map((i) => [i.name, i.location]));
}

Deno.test({
  name: "IncusCluster places envs by target, and a lost member's session recovers on the other",
  // The daemons and namespaces are processes and files of the machine, not of
  // this test's event loop; close() removes them and is checked below.
  sanitizeResources: false,
  sanitizeOps: false,
  async fn(t) {
    const cluster = await IncusCluster.start();
    // The containers the test made, whose host socket folders must go too.
    const made: string[] = [];
    const [m1, m2] = cluster.members as [typeof cluster.members[0], typeof cluster.members[0]];
    try {
      await t.step("the two daemons form one cluster, both members online", async () => {
        using client = cluster.client(m2);
        const members = await client.clusterMembers();
        assertEquals(
          members.map((m) => [m.name, m.status, m.url]).sort(),
          [
            [m1.name, "Online", `https://${m1.address}`],
            [m2.name, "Online", `https://${m2.address}`],
          ],
        );
      });

      await t.step("IncusSandbox places each env on the member its client targets", async () => {
        await using gateway = new Gateway();
        for (const member of cluster.members) {
          // Asked through the other member's socket: the cluster forwards.
          const other = member === m1 ? m2 : m1;
          const client = cluster.client(other, member.name);
          try {
            await using sandbox = await IncusSandbox.open({
              gateway,
              client,
              image: cluster.image,
              pool: cluster.pool,
              prefix: "cl-ws-",
            });
            await using env = await sandbox.create({ seed: 2 });
            const name = (env as ContainerInstance).containerName;
            made.push(name);
            assertEquals((await locations(cluster)).get(name), member.name);
            const page = await gateway.request(env.origin, "/");
            assertEquals(page.status, 200);
            assertStringIncludes(await page.text(), "Notes");
          } finally {
            client.close();
          }
        }
      });

      await t.step(
        "a lost member is env_error to its session; a reset lands on the other",
        async () => {
          await using server = await startServer({
            port: 0,
            backend: "incus",
            incusSocket: m1.socket,
            incusPool: cluster.pool,
            stepTimeoutMs: 60_000,
          });
          const client = new WebServClient(server.url, { timeoutMs: 120_000 });
          const session = await client.createSession({ task: "demo/add-note/3", target: m2.name });
          const before = server.sessions.instance(session.id) as ContainerInstance;
          made.push(before.containerName);
          assertEquals((await locations(cluster)).get(before.containerName), m2.name);
          assertEquals((await client.step(session.id, { action: "reload" })).status, "ok");

          await cluster.kill(m2.name);
          const lost = await client.step(session.id, { action: "reload" });
          assertEquals(lost.status, "env_error", JSON.stringify(lost));
          assertEquals(lost.info.error?.code, "sandbox-lost");
          // Incus declares the member offline after `cluster.offline_threshold`
          // (11 s here) without a heartbeat; until then a reset is a 503 to retry.
          await waitFor(async () => {
            using incus = cluster.client(m1);
            return (await incus.clusterMembers()).find((m) => m.name === m2.name)?.status ===
              "Offline";
          }, {
            message: `Incus should declare ${m2.name} offline`,
            timeoutMs: 60_000,
            intervalMs: 500,
          });

          const reset = await client.reset(session.id);
          assertStringIncludes(reset.observation.text ?? "", "Notes");
          const after = server.sessions.instance(session.id) as ContainerInstance;
          made.push(after.containerName);
          assertEquals((await locations(cluster)).get(after.containerName), m1.name);
          const step = await client.step(session.id, { action: "reload" });
          assertEquals(step.status, "ok", JSON.stringify(step.info));
          assertEquals(await client.close(session.id), true);
        },
      );
    } finally {
      await cluster.close();
    }
    // Nothing of the cluster is left: no namespaces, daemons, mounts or folders.
    const netns = await new Deno.Command("ip", { args: ["netns", "list"] }).output();
    const names = new TextDecoder().decode(netns.stdout);
    assert(!names.includes(m1.netns) && !names.includes(m2.netns), names);
    const mounts = await Deno.readTextFile("/proc/self/mountinfo");
    assert(!mounts.includes(m1.dir) && !mounts.includes(m2.dir), "a member's mount is left");
    const gone = async (path: string) => await Deno.stat(path).then(() => false, () => true);
    assert(await gone(m1.dir), `${m1.dir} is left`);
    assertEquals(made.length, 4);
    for (const name of made) {
      assert(await gone(`/run/webserv/incus/${name}`), `the socket folder of "${name}" is left`);
    }
  },
});
