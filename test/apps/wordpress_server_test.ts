/**
 * The rollout server runs WordPress (`deno task test:apps`): on the incus
 * backend its tasks are in the catalog, a group of 8 on one WordPress task
 * gets 8 isolated instances (a comment written in one is in that instance's
 * state diff and in no other's), and warm spares hand a session an instance
 * that was launched ahead.
 *
 * Fails, never skips, when the image is missing: build it with
 * `deno task image:apps wordpress`.
 */
import { assert, assertEquals } from "@std/assert";
import type { ServerOptions } from "../../adapters/http/server.ts";
import { IncusClient } from "../../sandboxes/incus/client.ts";
import type { ContainerInstance } from "../../sandboxes/_container_instance.ts";
import { waitFor } from "../_util/wait.ts";
import { assertCommentInOneOnly, openGroup, openWordPressServer } from "./_wordpress.ts";

const SEED = 5;
const TASK = `wordpress/approve-comment/${SEED}`;

/** The rollout server on the incus backend, and its client. */
function openServer(options: Pick<ServerOptions, "maxSessions" | "spares" | "warm">) {
  return openWordPressServer({ backend: "incus", stepTimeoutMs: 180_000, ...options });
}

Deno.test({
  name: "startServer() gives a group of 8 on one WordPress task 8 isolated Incus instances",
  // The spares launched in the background outlive single requests by design.
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const opened = await openServer({ maxSessions: 8 });
    const { server, client } = opened;
    await using _server = server;
    const { group, instances } = await openGroup<ContainerInstance>(opened, TASK, 8);
    assertEquals(new Set(instances.map((i) => i.containerName)).size, 8);

    // An anonymous comment through the first instance's own site, as a
    // visitor's browser would post it (the gateway routes by Host).
    const [first, ...others] = instances as [ContainerInstance, ...ContainerInstance[]];
    await assertCommentInOneOnly(first, others);
    for (const session of group.sessions) assertEquals(await client.close(session.id), true);
  },
});

Deno.test({
  name: "startServer() with warm spares opens a WordPress session on a spare launched ahead",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const { server, client } = await openServer({ spares: 1, warm: [`wordpress/${SEED}`] });
    await using _server = server;
    // The seed's base is made and its spare launched before any session opens.
    await waitFor(async () => await server.readySpares() === 1, {
      message: "a WordPress spare should be ready",
      timeoutMs: 600_000,
      intervalMs: 500,
    });
    using incus = new IncusClient();
    const before = new Set((await incus.listInstances()).map((i) => i.name));
    const session = await client.createSession({ task: TASK });
    const instance = server.sessions.instance(session.id) as ContainerInstance;
    // It took the spare: no container was launched for it.
    assert(before.has(instance.containerName), `${instance.containerName} was launched for it`);
    assertEquals(await client.close(session.id), true);
  },
});
