/**
 * The main-world document-start hook that counts what the Network domain
 * cannot see: pending short timers, pending animation frames and DOM
 * mutations.
 *
 * The hook is a typed page module (`engine/page/activity_hook.ts`), bundled
 * by `deno task build`; {@linkcode activityHookSource} wraps the bundle, and
 * it is installed by `Page.addScriptToEvaluateOnNewDocument`, so it runs in every document of a
 * target before the page's own scripts. Invariants:
 * - page scripts cannot see it: the CDP binding it reports through is taken
 *   off the global object before any page script runs, the wrapped
 *   `setTimeout`, `clearTimeout`, `requestAnimationFrame` and
 *   `cancelAnimationFrame` keep their native `name`, `length` and
 *   `toString()`, and `Function.prototype.toString` itself still reads native;
 * - it never changes when or how page callbacks run: every call goes to the
 *   native function captured at install time with the same arguments (and
 *   `attachShadow` returns the native root);
 * - a timer or frame callback that schedules the next one inherits its chain's
 *   start time; once a chain is older than `chainMs` its timers and frames no
 *   longer count, so polling loops and endless animations do not hold settling;
 *   nor do a chain's frames once six in a row ran without the DOM changing (a
 *   popup library that tracks its anchor every frame: Headless UI's listbox);
 * - a report (`timers|frames|mutations`) is sent at most once per task, from a
 *   microtask, and only when a count crossed zero or the DOM changed;
 * - DOM changes count in the document and in every shadow root: each root
 *   `attachShadow` returns (open or closed; the wrapper reads native like the
 *   timers) and each open root already attached to a node a mutation adds.
 *
 * @module
 */
import { ACTIVITY_HOOK } from "../observe/_page_bundle.ts";

/** The options the hook is installed with, passed as JSON. */
export interface ActivityHookOptions {
  /** Name of the `Runtime.addBinding` binding to report through. */
  binding: string;
  /** Timers longer than this, in milliseconds, do not count. */
  timerMs: number;
  /** Chains of timers or frames older than this, in milliseconds, stop counting. */
  chainMs: number;
}

/** A report the hook sends: counts now and how many DOM changes so far. */
export interface ActivityReport {
  /** Short timers pending now. */
  timers: number;
  /** Animation frames pending now. */
  frames: number;
  /** DOM mutation batches observed since the document started. */
  mutations: number;
}

/**
 * Decodes one report; the only place the hook's payload is parsed.
 *
 * @param payload the string the hook sent
 * @returns the report, or `undefined` when the payload is not one
 */
export function decodeActivityReport(payload: string): ActivityReport | undefined {
  const parts = payload.split("|").map(Number);
  if (parts.length !== 3 || parts.some((part) => !Number.isInteger(part) || part < 0)) {
    return undefined;
  }
  const [timers = 0, frames = 0, mutations = 0] = parts;
  return { timers, frames, mutations };
}

/**
 * Builds the script source that installs the hook with `options`.
 *
 * @param options the binding and thresholds
 * @returns a self-contained script
 */
export function activityHookSource(options: ActivityHookOptions): string {
  return `(${ACTIVITY_HOOK})(${JSON.stringify(options)});`;
}
