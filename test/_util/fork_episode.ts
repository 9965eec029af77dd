/**
 * A fork of a live episode, verified end to end on any backend: a template's
 * solver runs to the step before its last action (`stop`), the env is forked
 * three ways, two forks stop (and earn 1), the third undoes the work first
 * (and earns 0), and the parent, which never saw a fork's write, stops and
 * still earns 1. Each fork's site state hash equals the parent's at the fork.
 *
 * @module
 */
import { assertEquals, assertNotEquals } from "@std/assert";
import type { Browser } from "../../engine/browser/browser.ts";
import { Env } from "../../engine/env.ts";
import { bindTask, type BoundTask, generateTask } from "../../fixtures/sites/mod.ts";
import type { SiteModule, Task } from "../../fixtures/sites/kit/types.ts";
import type { Instance } from "../../sandboxes/types.ts";

/** Stops a solver just before the action it names. */
class Held extends Error {}

/** The env, whose `step` throws {@linkcode Held} instead of taking `stop`. */
function beforeStop(env: Env): Env {
  return new Proxy(env, {
    get(target, property) {
      if (property === "step") {
        return (action: { action: string }) => {
          if (action.action === "stop") throw new Held();
          return target.step(action);
        };
      }
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

/**
 * The site's state hash, read through the instance's state API.
 *
 * @param instance the instance
 * @returns the hash of every tracked table
 */
export async function stateHash(instance: Instance): Promise<string> {
  const response = await instance.state!.fetch("/hash");
  assertEquals(response.status, 200);
  const body = await response.json() as { hash: string };
  return body.hash;
}

/** What {@linkcode assertForkMidEpisode} runs. */
export interface ForkEpisode {
  /** The browser the envs open in. */
  browser: Browser;
  /** The site or application module. */
  site: SiteModule;
  /** A state-changing template whose solver ends with `stop`. */
  template: string;
  /** The seed of the task and of the instance. */
  seed: number;
  /** A fresh instance of the site at that seed, whose `fork` copies it. */
  instance: Instance;
  /**
   * The deadline of the fork of three, in milliseconds (a container backend
   * starts three copies of the site).
   *
   * @default {30_000}
   */
  forkTimeoutMs?: number;
  /** Steps that undo the solver's work (the fork then stops, and must earn 0). */
  undo(env: Env, task: Task): Promise<void>;
}

/**
 * Runs the episode, forks it, and asserts each verdict, the hashes and the
 * isolation; closes the forks and destroys their copies.
 *
 * @param episode the site, task and instance
 */
export async function assertForkMidEpisode(episode: ForkEpisode): Promise<void> {
  const { browser, site, instance } = episode;
  if (!instance.fork) {
    // A shared runtime's control says in its health whether it forks: an image built before
    // it could has none, and the episode would be run for nothing.
    throw new Error(
      "The instance cannot fork: its backend cannot copy a running instance (on the shared " +
        'runtime, an image built before its control could fork: rebuild it with "deno task image:apps <app>")',
    );
  }
  const fork = instance.fork.bind(instance);
  const task = generateTask(site, episode.template, episode.seed);
  const template = site.templates.find((t) => t.id === episode.template)!;
  const bind = (copy: Instance) => bindTask(task, site, copy.state!, { origin: copy.origin });
  const bound = bind(instance);
  await using env = await Env.create(browser, { site: instance, task: bound });
  try {
    await template.solve(beforeStop(env), task);
    throw new Error("The solver never reached stop");
  } catch (error) {
    if (!(error instanceof Held)) throw error;
  }
  const atFork = await stateHash(instance);

  const copies: { site: Instance; task: BoundTask }[] = [];
  const forks = await env.fork(3, {
    timeoutMs: episode.forkTimeoutMs ?? 30_000,
    branch: async (at) => {
      // On the spare origin whose context is ready, where the backend places copies.
      const copy = await fork(at ?? {});
      // A backend with spare origins places the copy where its context waits.
      if (at && instance.spares) assertEquals(copy.origin, at.origin);
      const forkTask = bind(copy);
      await bound.sdk.copyMark(forkTask.sdk);
      copies.push({ site: copy, task: forkTask });
      return { site: copy, task: forkTask, release: () => copy.destroy() };
    },
  });
  try {
    assertEquals(copies.length, 3);
    for (const copy of copies) {
      assertNotEquals(copy.site.origin, instance.origin);
      assertEquals(await stateHash(copy.site), atFork, "a fork's state equals the parent's");
    }
    assertEquals(forks.map((f) => f.steps), [env.steps, env.steps, env.steps]);

    for (const fork of forks.slice(0, 2)) {
      await fork.step({ action: "stop", answer: "done" });
      const verdict = await fork.verify();
      assertEquals(verdict.reward, 1, verdict.reason);
    }
    const undo = forks[2]!;
    await episode.undo(undo, task);
    await undo.step({ action: "stop", answer: "done" });
    const undone = await undo.verify();
    assertEquals(undone.reward, 0, undone.reason);
    assertNotEquals(await stateHash(copies[2]!.site), atFork);

    // The parent never saw a fork's write, and still earns its reward.
    assertEquals(await stateHash(instance), atFork);
    await env.step({ action: "stop", answer: "done" });
    const verdict = await env.verify();
    assertEquals(verdict.reward, 1, verdict.reason);
  } finally {
    await Promise.all(forks.map((f) => f.close()));
    await Promise.all(copies.map((c) => c.site.destroy()));
  }
}
