/**
 * Where a fork of one spends its time (part of `BENCH_FORK=1 deno task
 * bench:sandbox`): the browser's steps of `env.fork(1)` taken one at a time,
 * as `startEpisode` takes them for a fork, on a fresh site copy each run. A
 * new context with the copy's origin policy, its window (a renderer started
 * for the context: Chromium shares no renderer between contexts), the
 * parent's page loaded from the copy, and the settle after it. The state's
 * capture and the site copy are rows of their own.
 *
 * @module
 */
import { type Browser, newContext } from "../engine/browser/browser.ts";
import type { BrowserContext } from "../engine/browser/browser_context.ts";
import { type Env, envInternals } from "../engine/env.ts";
import { Observer } from "../engine/observe/observer.ts";
import { Settler } from "../engine/settle/settler.ts";
import { captureBrowserState, moveBrowserState } from "../engine/_browser_state.ts";
import type { Instance } from "../sandboxes/types.ts";
import { progress, stats, type TimedRow } from "./_sandbox_common.ts";

/** The phases, in the order a fork takes them. */
const PHASES = [
  "fork phase: read the parent's browser state",
  "fork phase: context and window (a renderer started)",
  "fork phase: the parent's page loaded from the copy",
  "fork phase: settled",
] as const;

/**
 * Times each phase of the browser's part of a fork of one.
 *
 * @param browser the browser the parent runs in
 * @param parent the parent env, mid-episode
 * @param instance the parent's site
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
  for (let i = 0; i < runs; i++) {
    const copy = await instance.fork!();
    let context: BrowserContext | undefined;
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
      context = await newContext(browser, {
        onlyOrigins: [copy.origin],
        viewport: { width: 1280, height: 720 },
      });
      const settler = Settler.install(context);
      Observer.attach(context);
      const page = await context.newPage();
      lap(1);
      const url = moveBrowserState(state, instance.origin, copy.origin).url;
      const loaded = page.session.waitForEvent("Page.loadEventFired");
      await page.session.send("Page.navigate", { url });
      await loaded;
      lap(2);
      await settler.settle(page);
      lap(3);
    } finally {
      await context?.close();
      await copy.destroy();
    }
  }
  return PHASES.map((what, i) => {
    const ms = stats(samples[i]!);
    progress(`${what}: p50 ${ms.p50} ms, p95 ${ms.p95} ms`);
    return { what, ms };
  });
}
