/**
 * Pieces the observation benchmarks share: the median, interleaved timing of
 * several methods, and Playwright attached to the benchmark's own Chromium
 * in a tab of its own.
 *
 * @module
 */
import { chromium } from "playwright-core";
import type { Browser } from "../mod.ts";
import { browserInternals } from "../engine/browser/browser.ts";

/**
 * The median (lower middle for an even count).
 *
 * @param values the samples
 * @returns the median, `NaN` for no samples
 */
export function p50(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor((sorted.length - 1) / 2)] ?? NaN;
}

/** What {@linkcode interleave} measured for one method. */
export interface Timed<T> {
  /** Median wall-clock milliseconds, one decimal. */
  ms: number;
  /** Best run, milliseconds, one decimal. */
  minMs: number;
  /** What the last run answered. */
  value: T;
}

/**
 * Times methods side by side: one warm-up each, then rounds with one run of
 * each method, the order rotating, so load from elsewhere falls on all alike.
 *
 * @param methods the methods' names
 * @param runs how many rounds
 * @param run runs one method once
 * @returns per method the median, the best run and the last answer
 */
export async function interleave<M extends string, T>(
  methods: readonly M[],
  runs: number,
  run: (method: M) => Promise<T>,
): Promise<Record<M, Timed<T>>> {
  const times = new Map<M, number[]>();
  const values = new Map<M, T>();
  for (const method of methods) {
    values.set(method, await run(method));
    times.set(method, []);
  }
  for (let round = 0; round < runs; round++) {
    for (let i = 0; i < methods.length; i++) {
      const method = methods[(i + round) % methods.length]!;
      const start = performance.now();
      values.set(method, await run(method));
      times.get(method)!.push(performance.now() - start);
    }
  }
  const out = {} as Record<M, Timed<T>>;
  for (const method of methods) {
    const all = times.get(method)!;
    out[method] = {
      ms: Math.round(p50(all) * 10) / 10,
      minMs: Math.round(Math.min(...all) * 10) / 10,
      value: values.get(method)!,
    };
  }
  return out;
}

/** Playwright on the benchmark's Chromium: a page in a context of its own. */
export interface PlaywrightTab {
  /** Playwright's page. */
  page: import("playwright-core").Page;
  /** Disconnects Playwright (the browser stays up). */
  close(): Promise<void>;
}

/**
 * Connects playwright-core to a launched browser over CDP and opens a tab in
 * a fresh context with the given viewport.
 *
 * @param browser a browser launched by this engine
 * @param viewport the viewport size
 * @returns the tab
 * @throws {Error} when the browser has no DevTools endpoint (it was not launched here)
 */
export async function openPlaywright(
  browser: Browser,
  viewport: { width: number; height: number },
): Promise<PlaywrightTab> {
  const endpoint = browserInternals(browser).process?.wsEndpoint;
  if (!endpoint) throw new Error("Cannot run the benchmark: the browser has no DevTools endpoint");
  const playwright = await chromium.connectOverCDP(endpoint);
  const context = await playwright.newContext({ viewport });
  const page = await context.newPage();
  return { page, close: () => playwright.close() };
}
