/**
 * Where a fork of one spends its time (part of `BENCH_FORK=1 deno task
 * bench:sandbox`): the steps of `env.fork(1)` taken one at a time, as
 * `Env.fork` and `startEpisode` take them, on a fresh site copy each run. The
 * parent's state read, a ready context taken from the warm pool (made on a
 * spare origin ahead; made there and then when the pool is empty), the site
 * copied onto that origin, the cookies and storage put in, the parent's page
 * loaded from the copy, and the settle after it. Beside them, what the pool
 * saves: a context and its window made at fork time (a renderer started:
 * Chromium shares no renderer between contexts). The pool is refilled
 * between runs, outside the timings, as it is between an agent's forks.
 *
 * @module
 */
import type { Browser } from "../engine/browser/browser.ts";
import { ContextPool } from "../engine/context_pool.ts";
import { type Env, envInternals } from "../engine/env.ts";
import { openReadyPage, readyKey, type ReadyPage } from "../engine/_ready_page.ts";
import {
  captureBrowserState,
  moveBrowserState,
  prepareStorage,
  restoreCookies,
  restorePage,
} from "../engine/_browser_state.ts";
import type { Instance } from "../sandboxes/types.ts";
import { progress, stats, type TimedRow } from "./_sandbox_common.ts";

/** The phases, in the order a fork takes them, and the reference row. */
const PHASES = [
  "fork phase: read the parent's browser state",
  "fork phase: a ready context taken from the pool",
  "fork phase: the site copied onto its spare origin",
  "fork phase: cookies and storage put in",
  "fork phase: the parent's page loaded from the copy, typed fields put back",
  "fork phase: settled",
  "without the pool: a context and its window made at fork time",
] as const;

/** The viewport an env's pages get by default. */
const VIEWPORT = { width: 1280, height: 720 };

/**
 * Times each phase of a fork of one.
 *
 * @param browser the browser the parent runs in
 * @param parent the parent env, mid-episode
 * @param instance the parent's site (a backend with spare origins)
 * @param runs samples per phase
 * @returns one row per phase
 */
export async function forkPhases(
  browser: Browser,
  parent: Env,
  instance: Instance,
  runs: number,
): Promise<TimedRow[]> {
  const samples: number[][] = PHASES.map(() => []);
  const pool = ContextPool.of(browser);
  const spares = instance.spares;
  if (!spares) throw new TypeError("Cannot time a fork's phases: the backend has no spare origins");
  const kind = pool.kindOf(readyKey({ viewport: VIEWPORT }), spares);
  for (let i = 0; i < runs; i++) {
    pool.warm(kind, { viewport: VIEWPORT }, spares);
    await refilled(pool);
    let ready: ReadyPage | undefined;
    let copy: Instance | undefined;
    let fresh: ReadyPage | undefined;
    try {
      let started = performance.now();
      const lap = (phase: number) => {
        const now = performance.now();
        samples[phase]!.push(now - started);
        started = now;
      };
      const state = await captureBrowserState(
        browser,
        envInternals(parent).context,
        envInternals(parent).page,
      );
      lap(0);
      const pooled = pool.take(kind);
      if (!pooled?.spare) throw new Error("Cannot time a fork's phases: the pool did not fill");
      ready = pooled;
      lap(1);
      copy = await instance.fork!({ origin: pooled.spare.origin });
      lap(2);
      const moved = moveBrowserState(state, instance.origin, copy.origin);
      const { page, settler, context } = ready;
      const [, script] = await Promise.all([
        restoreCookies(browser, context, moved.cookies),
        prepareStorage(page, moved),
      ]);
      lap(3);
      const since = performance.now();
      const loaded = page.session.waitForEvent("Page.loadEventFired");
      await page.session.send("Page.navigate", { url: moved.url });
      await loaded;
      if (script !== undefined) {
        await page.session.send("Page.removeScriptToEvaluateOnNewDocument", { identifier: script });
      }
      await restorePage(page, moved);
      lap(4);
      // From the load's start, as `startEpisode` settles a fork.
      await settler.settle(page, { since });
      lap(5);
      fresh = await openReadyPage(browser, { onlyOrigins: [copy.origin], viewport: VIEWPORT });
      lap(6);
    } finally {
      await ready?.context.close();
      await fresh?.context.close();
      await copy?.destroy();
    }
  }
  return PHASES.map((what, i) => {
    const ms = stats(samples[i]!);
    progress(`${what}: p50 ${ms.p50} ms, p95 ${ms.p95} ms`);
    return { what, ms };
  });
}

/** Waits, at most 30 s, until the pool holds its size of every kind and makes none. */
async function refilled(pool: ContextPool): Promise<void> {
  const deadline = performance.now() + 30_000;
  while (pool.filling > 0 || pool.ready < pool.size) {
    if (performance.now() > deadline) {
      throw new Error("Cannot time a fork: the pool did not refill");
    }
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
