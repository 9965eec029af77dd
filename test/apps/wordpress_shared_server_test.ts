/**
 * The rollout server on the shared backend (`deno task test:apps`): WordPress
 * served by one runtime container per seed, a `mariadbd` of its own per
 * session. A group of 4 on one task gets 4 isolated envs (a comment written
 * through one is in that env's state diff and no other's), a session's reset
 * brings its env back to the seeded hash, `warm` starts a seed's runtime
 * before its first session, and when one env's own database
 * server dies mid-episode its steps and its verdict are ours (`env_error`,
 * never an action error, never a reward) while its neighbour goes on, and a
 * reset recovers it; when the runtime's Apache stops, a reset moves the
 * session to a new runtime of its seed.
 *
 * `Env` alone, as a trainer or the site checker uses it, says the same: a
 * step on an env whose database died, or whose runtime's Apache stopped, is
 * an `EnvError("sandbox-lost")`, whatever the page showed and whether or not
 * the action itself failed.
 *
 * Instances are named `wsshared-…` (`WEBSERV_SHARED_PREFIX` sets another
 * prefix); the seeded base is kept for the next run, as the mode does.
 * Fails, never skips, when the image is missing: build it with
 * `deno task image:apps wordpress`.
 */
import { assert, assertEquals, assertRejects, assertStringIncludes } from "@std/assert";
import type { ServerOptions } from "../../adapters/http/server.ts";
import { WebServError } from "../../adapters/client/mod.ts";
import type { SharedRuntimeInstance } from "../../sandboxes/incus/shared_runtime_sandbox.ts";
import type { StateHash } from "../../fixtures/sites/kit/types.ts";
import { Browser, EnvError } from "../../mod.ts";
import { Env } from "../../engine/env.ts";
import { parseElements } from "../../engine/observe/parse_observation.ts";
import { Gateway } from "../../sandboxes/gateway.ts";
import { execIn, openShared, SHARED_PREFIX } from "./_shared.ts";
import { IncusClient } from "../../sandboxes/incus/client.ts";
import { waitFor } from "../_util/wait.ts";
import { requireIncusImage } from "./_apps.ts";
import {
  assertCommentInOneOnly,
  openGroup,
  openWordPressServer,
  stateOf,
  WORDPRESS,
} from "./_wordpress.ts";

const PREFIX = SHARED_PREFIX;
const SEED = 1;
const TASK = `wordpress/approve-comment/${SEED}`;

/** The server on the shared backend, and a client that waits as long as a base takes to seed. */
function openServer(options: Pick<ServerOptions, "maxSessions" | "warm">) {
  return openWordPressServer({
    backend: "shared",
    incusPrefix: PREFIX,
    stepTimeoutMs: 60_000,
    ...options,
  });
}

/** Kills the env's own `mariadbd` inside the runtime container, as the OOM killer would. */
async function killDatabase(instance: SharedRuntimeInstance): Promise<void> {
  // The env's server is the one on its slot's datadir (`--datadir=… --socket=…`).
  const pids = (await execIn(
    instance,
    "pgrep",
    "-f",
    `datadir=/var/lib/wsdb/slot-${instance.slot} --socket`,
  )).split("\n").filter((line) => line !== "");
  assertEquals(pids.length, 1, `mariadbd of slot ${instance.slot}: ${pids.join(", ")}`);
  await execIn(instance, "kill", "-9", pids[0]!);
}

/** Stops the runtime's Apache (every env's), and waits until it no longer answers. */
async function stopApache(instance: SharedRuntimeInstance): Promise<void> {
  // apache2ctl returns once it signalled Apache, before Apache is gone.
  await execIn(instance, "apache2ctl", "-k", "stop");
  await waitFor(() => instance.checkWebServer().then(() => false, () => true), {
    message: "the runtime's Apache should stop",
    timeoutMs: 30_000,
    intervalMs: 100,
  });
}

Deno.test({
  name: "startServer() on shared gives a group of 4 on one WordPress task 4 isolated envs",
  // The runtime's spares fill in the background, outliving single requests by design.
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const opened = await openServer({ maxSessions: 4 });
    const { server, client } = opened;
    await using _server = server;
    const { group, instances } = await openGroup<SharedRuntimeInstance>(opened, TASK, 4);
    // One runtime, four databases of their own (and four origins).
    assertEquals(new Set(instances.map((i) => i.runtimeName)).size, 1);
    assertEquals(new Set(instances.map((i) => i.key)).size, 4);
    assertEquals(new Set(instances.map((i) => i.slot)).size, 4);
    const [first, ...others] = instances as [SharedRuntimeInstance, ...SharedRuntimeInstance[]];
    const seeded = await stateOf<StateHash>(first, "/hash");

    await assertCommentInOneOnly(first, others);
    for (const other of others) {
      assertEquals(
        (await stateOf<StateHash>(other, "/hash")).hash,
        seeded.hash,
        `env ${other.key}`,
      );
    }

    // The session's reset puts its env on a fresh copy: the seeded state, the same origin.
    const firstId = group.sessions[0]!.id;
    assert((await stateOf<StateHash>(first, "/hash")).hash !== seeded.hash);
    const reset = await client.reset(firstId);
    assertStringIncludes(reset.observation.text ?? "", "Log In");
    assertEquals(server.sessions.instance(firstId), first);
    assertEquals((await stateOf<StateHash>(first, "/hash")).hash, seeded.hash);
    assertEquals((await client.state(firstId)).step, 0);

    for (const session of group.sessions) assertEquals(await client.close(session.id), true);
  },
});

Deno.test({
  name: "startServer() on shared with warm starts a seed's runtime before its first session",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const { server, client } = await openServer({ maxSessions: 1, warm: [`wordpress/${SEED}`] });
    await using _server = server;
    // This process's runtime of the seed, running before any session asked for it.
    using incus = new IncusClient();
    const owner = `${Deno.hostname()}/`;
    const runtime = await waitFor(
      async () =>
        (await incus.listInstances()).find((instance) =>
          instance.name.startsWith(`${PREFIX}rt-${SEED}-`) && instance.status === "Running" &&
          instance.config["user.webserv.owner"]?.startsWith(owner) &&
          instance.config["user.webserv.owner"]?.endsWith(`/${Deno.pid}`)
        ),
      {
        message: "the warmed seed's runtime should run",
        timeoutMs: 900_000,
        intervalMs: 500,
      },
    );
    assertEquals(server.sessions.live, 0);
    const session = await client.createSession({ task: TASK });
    const instance = server.sessions.instance(session.id) as SharedRuntimeInstance;
    assertEquals(instance.runtimeName, runtime.name);
    assertEquals(await client.close(session.id), true);
  },
});

Deno.test({
  name:
    "startServer() on shared reports an env whose mariadbd died as env_error, and reset recovers it",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const { server, client } = await openServer({ maxSessions: 2 });
    await using _server = server;
    const victim = await client.createSession({ task: TASK });
    const neighbour = await client.createSession({ task: TASK });
    const instance = server.sessions.instance(victim.id) as SharedRuntimeInstance;
    const seeded = await stateOf<StateHash>(instance, "/hash");
    const front = { action: "goto" as const, url: `${instance.origin}/` };
    const first = await client.step(victim.id, front);
    assertEquals(first.status, "ok", JSON.stringify(first.info));
    // A post's link on the front page, as the agent saw it.
    const link = parseElements(first.observation?.text ?? "")
      .find((el) => el.role === "link" && el.href?.startsWith("/?p="))?.id ?? 0;
    assert(link > 0, first.observation?.text);

    await killDatabase(instance);

    // Following the link (its page needs the database), acting on an id that
    // went with the page, loading a page, ending the episode: each is ours.
    for (
      const action of [{ action: "click" as const, id: link }, {
        action: "click" as const,
        id: link,
      }, front]
    ) {
      const step = await client.step(victim.id, action);
      assertEquals(
        step.status,
        "env_error",
        `${JSON.stringify(action)}: ${JSON.stringify(step.info)}`,
      );
      assertEquals(step.info.error?.code, "sandbox-lost");
      assertEquals(step.reward, undefined);
    }
    const stop = await client.step(victim.id, { action: "stop", answer: "done" });
    assertEquals(stop.status, "env_error", JSON.stringify(stop.info));
    assertEquals(stop.reward, undefined);
    const verdict = await assertRejects(() => client.verify(victim.id), WebServError);
    assertEquals(verdict.status, 503);
    assertEquals(verdict.code, "sandbox-lost");

    // The neighbour in the same runtime goes on.
    const other = await client.step(neighbour.id, {
      action: "goto",
      url: `${server.sessions.instance(neighbour.id)!.origin}/`,
    });
    assertEquals(other.status, "ok", JSON.stringify(other.info));

    // A reset recovers the env: a live database at the seeded state.
    await client.reset(victim.id);
    const recovered = server.sessions.instance(victim.id) as SharedRuntimeInstance;
    assertEquals((await stateOf<StateHash>(recovered, "/hash")).hash, seeded.hash);
    const again = await client.step(victim.id, { action: "goto", url: `${recovered.origin}/` });
    assertEquals(again.status, "ok", JSON.stringify(again.info));
    assert(!again.observation?.text?.includes("Error establishing"), again.observation?.text);

    assertEquals(await client.close(victim.id), true);
    assertEquals(await client.close(neighbour.id), true);
  },
});

Deno.test({
  name: "startServer() on shared moves a session off a runtime whose Apache stopped at its reset",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const { server, client } = await openServer({ maxSessions: 1 });
    await using _server = server;
    const session = await client.createSession({ task: TASK });
    const before = server.sessions.instance(session.id) as SharedRuntimeInstance;
    const seeded = await stateOf<StateHash>(before, "/hash");
    await stopApache(before);
    const front = { action: "goto" as const, url: `${before.origin}/` };
    const step = await client.step(session.id, front);
    assertEquals(step.status, "env_error", JSON.stringify(step.info));
    assertEquals(step.info.error?.code, "sandbox-lost");
    assertEquals(step.reward, undefined);

    // The runtime is retired: the reset lands in a new one of the seed.
    const reset = await client.reset(session.id);
    assertStringIncludes(reset.observation.text ?? "", "Log In");
    const after = server.sessions.instance(session.id) as SharedRuntimeInstance;
    assert(after.runtimeName !== before.runtimeName, after.runtimeName);
    assertEquals((await stateOf<StateHash>(after, "/hash")).hash, seeded.hash);
    const again = await client.step(session.id, { action: "goto", url: `${after.origin}/` });
    assertEquals(again.status, "ok", JSON.stringify(again.info));
    assertEquals(await client.close(session.id), true);
  },
});

/**
 * An `Env` on an env of a runtime of its own, whose front page it observed; then `fault` breaks
 * the env's site, and both a link followed and an id of the page it saw are rejected as ours
 * (`sandbox-lost`); then `then` checks what follows, on the env and its instance.
 */
async function faultedEnv(
  fault: (instance: SharedRuntimeInstance) => Promise<void>,
  then: (env: Env, instance: SharedRuntimeInstance) => Promise<void>,
): Promise<void> {
  await requireIncusImage(WORDPRESS);
  await using gateway = new Gateway();
  // A runtime of this test's own: breaking it touches no other env.
  await using sandbox = await openShared(gateway, WORDPRESS.image, {
    readyTimeoutMs: 900_000,
  });
  await using instance = await sandbox.create({ seed: SEED });
  await using browser = await Browser.launch();
  await using env = await Env.create(browser, {
    site: instance,
    startUrl: `${instance.origin}/`,
    timeoutMs: 60_000,
  });
  const front = await env.observe();
  // A link of the front page the agent could follow to another of its pages.
  const link = front.elements.find((element) =>
    element.role === "link" && element.href?.includes("?p=")
  );
  assert(link, front.text);
  await instance.check();

  await fault(instance);

  // Following a link, and acting on an id of the page the agent saw: ours.
  const followed = await assertRejects(
    () => env.step({ action: "click", id: link.id }),
    EnvError,
  );
  assertEquals(followed.code, "sandbox-lost");
  const stale = await assertRejects(
    () => env.step({ action: "click", id: link.id }),
    EnvError,
  );
  assertEquals(stale.code, "sandbox-lost");
  await then(env, instance);
}

Deno.test({
  name: "Env on a shared WordPress env whose mariadbd died rejects its steps as sandbox-lost",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    await faultedEnv(killDatabase, async (env, instance) => {
      // A reset puts the env on a live database again.
      await env.reset();
      const again = await env.step({ action: "goto", url: `${instance.origin}/` });
      assert(!again.observation.text.includes("Error establishing"), again.observation.text);
      await instance.check();
    });
  },
});

Deno.test({
  name:
    "Env on a shared WordPress env whose runtime's Apache stopped rejects its steps as sandbox-lost",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    // The env's database still answers; its web server does not (the relay's 502).
    await faultedEnv(stopApache, () => Promise.resolve());
  },
});
