/**
 * Network-aware settling: after an action, wait until the page is quiet, and
 * no longer.
 *
 * Algorithm. Every page and out-of-process iframe session of a context gets,
 * before its first script runs, the Network, Page and Runtime domains and a
 * main-world document-start hook (see `_activity_hook.ts`). A page is settled
 * when, over all of its sessions:
 * 1. no counted request is in flight and no frame is loading;
 * 2. no short timer and no animation frame is pending;
 * 3. nothing at all happened (request, response, navigation, timer fired,
 *    DOM mutation) for the quiet window; and
 * 4. a render barrier (two animation frames of the page, in an isolated
 *    world) started after the last activity has passed with no new activity;
 * 5. the finite CSS transitions, CSS animations and Web Animations running
 *    then (what the action opened, fading in) have ended, waited for once,
 *    within `animationMs`; then 1 to 4 are checked again.
 * The wait is driven by events: it wakes on every change, at the end of the
 * quiet window, and when a pending item's grace period ends; never on a
 * fixed sleep. It gives up at the cap and says what was still pending.
 *
 * @module
 */
import { bestEffort } from "../log.ts";
import type { CdpSession } from "../cdp/connection.ts";
import type { AttachedTarget, BrowserContext } from "../browser/browser_context.ts";
import type { Page } from "../browser/page.ts";
import { activityHookSource } from "./_activity_hook.ts";
import { PageActivity } from "./_page_activity.ts";
import { SessionTracker } from "./_session_tracker.ts";
import type { Busy, SettleSignal } from "./_tracker.ts";

export type { SettleSignal } from "./_tracker.ts";

/** Options of one {@linkcode Settler.settle} call. */
export interface SettleOptions {
  /**
   * Give up after this long, in milliseconds.
   *
   * @default {10000}
   */
  capMs?: number;
  /**
   * How long nothing at all must happen, in milliseconds. It covers only
   * the gaps no signal reports (a response's body being parsed before the
   * page renders it): the SPA suite has no early return even at 20 ms.
   *
   * @default {40}
   */
  quietMs?: number;
  /**
   * When the action began, as `performance.now()`; the quiet window never
   * ends before `since + quietMs`.
   *
   * @default {the time of the call}
   */
  since?: number;
  /**
   * Stops waiting when aborted (say, a dialog blocks the page); the result
   * is then unsettled with `"aborted"` pending.
   */
  signal?: AbortSignal;
}

/** Options of a {@linkcode Settler}. */
export interface SettlerOptions {
  /**
   * Default cap of every settle, in milliseconds.
   *
   * @default {10000}
   */
  capMs?: number;
  /**
   * Default quiet window of every settle, in milliseconds.
   *
   * @default {40}
   */
  quietMs?: number;
  /**
   * `setTimeout` timers longer than this, in milliseconds, are not waited for.
   *
   * @default {1000}
   */
  timerMs?: number;
  /**
   * Chains of timers or animation frames (each scheduled from the previous
   * one's callback) stop counting once older than this, in milliseconds, so
   * polling loops and endless animations do not hold settling.
   *
   * @default {1000}
   */
  chainMs?: number;
  /**
   * Requests in flight longer than this, in milliseconds, are taken for
   * long-polls and stop counting; so do later requests to the same endpoint.
   *
   * @default {3000}
   */
  longPollMs?: number;
  /**
   * A message a page sent on a WebSocket is waited on for an answer at most
   * this long, in milliseconds.
   *
   * @default {1500}
   */
  webSocketReplyMs?: number;
  /**
   * Running CSS transitions and animations and Web Animations (a dropdown
   * fading in) are waited for once the page is otherwise quiet, at most
   * this long in all, in milliseconds; those ending later, and endless ones,
   * are not. `0` turns the wait off.
   *
   * @default {1000}
   */
  animationMs?: number;
}

/** What a settle found. */
export interface SettleResult {
  /** Whether the page became quiet before the cap. */
  settled: boolean;
  /** How long the settle took, in milliseconds. */
  ms: number;
  /** The signals that held the page busy at some point while waiting. */
  waitedFor: SettleSignal[];
  /** What was still pending at the cap, for people; empty when settled. */
  pending: string[];
}

interface Resolved {
  capMs: number;
  quietMs: number;
  timerMs: number;
  chainMs: number;
  longPollMs: number;
  webSocketReplyMs: number;
  animationMs: number;
}

/** Maps public options to internal ones; the one place defaults live. */
function resolve(options: SettlerOptions): Resolved {
  const resolved = {
    capMs: options.capMs ?? 10_000,
    quietMs: options.quietMs ?? 40,
    timerMs: options.timerMs ?? 1_000,
    chainMs: options.chainMs ?? 1_000,
    longPollMs: options.longPollMs ?? 3_000,
    webSocketReplyMs: options.webSocketReplyMs ?? 1_500,
    animationMs: options.animationMs ?? 1_000,
  };
  for (const [name, value] of Object.entries(resolved)) {
    if (!(value >= 0) || !Number.isFinite(value)) {
      throw new RangeError(
        `Cannot create settler: "${name}" must be a finite number >= 0, got ${value}`,
      );
    }
  }
  return resolved;
}

/** Failed barriers tolerated in a row before a quiet page counts as settled. */
const BARRIER_TRIES = 3;

/**
 * Waits for pages of one browser context to settle after actions.
 *
 * @example Settle after a click
 * ```ts ignore
 * import { Browser, newContext, Settler } from "@webserv/webserv/engine";
 * await using browser = await Browser.launch();
 * const context = await newContext(browser);
 * const settler = Settler.install(context);
 * const page = await context.newPage("http://127.0.0.1:8000/");
 * const since = performance.now();
 * await page.session.send("Runtime.evaluate", { expression: "document.querySelector('button').click()" });
 * const result = await settler.settle(page, { since });
 * console.log(result.settled, result.ms, result.waitedFor);
 * ```
 */
export class Settler {
  #options: Resolved;
  #binding = `__webserv_${crypto.randomUUID().replaceAll("-", "").slice(0, 16)}`;
  #trackers = new Map<CdpSession, SessionTracker>();
  #activities = new Map<CdpSession, PageActivity>();
  #longPolls = new Set<string>();
  #waiters = new Set<() => void>();

  private constructor(options: Resolved) {
    this.#options = options;
  }

  /**
   * Installs settling on a context: every page and out-of-process iframe
   * attached from now on is watched from before its first script. Call it
   * before opening pages.
   *
   * @param context the context to watch
   * @param options thresholds and defaults
   * @returns the settler
   * @throws {RangeError} when an option is negative or not finite
   */
  static install(context: BrowserContext, options: SettlerOptions = {}): Settler {
    const settler = new Settler(resolve(options));
    context.addInitializer((target) => settler.#prepare(target));
    return settler;
  }

  /**
   * Waits until `page` (with its out-of-process iframes) is quiet, or the cap.
   *
   * @param page a page of the context this settler was installed on
   * @param options the cap, the quiet window and when the action began
   * @returns whether it settled, how long it took, and what it waited for
   * @throws {RangeError} when an option is negative or not finite
   * @throws {TypeError} when the page was not opened in the settler's context after `install()`
   */
  async settle(page: Page, options: SettleOptions = {}): Promise<SettleResult> {
    const capMs = options.capMs ?? this.#options.capMs;
    const quietMs = options.quietMs ?? this.#options.quietMs;
    if (!(capMs >= 0 && quietMs >= 0)) {
      throw new RangeError(
        `Cannot settle: "capMs" and "quietMs" must be >= 0, got ${capMs} and ${quietMs}`,
      );
    }
    const start = performance.now();
    const since = Math.min(options.since ?? start, start);
    const deadline = start + capMs;
    const waited = new Set<SettleSignal>();
    const activity = this.#activities.get(page.session);
    if (!activity) {
      throw new TypeError(
        `Cannot settle page "${page.targetId}": it was not opened in the settler's context after install()`,
      );
    }
    let failures = 0, animated = false;
    const signal = options.signal;
    const wake = () => this.#notify();
    signal?.addEventListener("abort", wake);
    const aborted = new Promise<false>((resolve) => {
      if (signal?.aborted) resolve(false);
      signal?.addEventListener("abort", () => resolve(false));
    });
    const finish = (settled: boolean, pending: string[]): SettleResult => {
      signal?.removeEventListener("abort", wake);
      if (activity.lastNavigation >= since) waited.add("navigation");
      if (activity.lastMutation > since) waited.add("dom");
      return {
        settled,
        ms: performance.now() - start,
        waitedFor: [...waited],
        pending: settled ? [] : pending,
      };
    };
    while (true) {
      if (page.closed) return finish(true, []);
      if (signal?.aborted) return finish(false, ["aborted"]);
      const now = performance.now();
      const busy: Busy[] = [];
      activity.busy(now, busy);
      for (const item of busy) waited.add(item.signal);
      const last = Math.max(since, activity.lastActivity);
      if (now >= deadline) {
        return finish(
          false,
          busy.length > 0
            ? busy.map((item) => `${item.signal}: ${item.detail}`)
            : [`dom: activity ${Math.round(now - last)} ms ago`],
        );
      }
      if (busy.length > 0) {
        const next = Math.min(deadline, ...busy.map((item) => item.until ?? Infinity));
        await this.#change(next);
        continue;
      }
      // Idle: run the render barrier while the quiet window runs out. Only on
      // the page's own session: an out-of-process iframe scrolled out of view
      // is throttled and renders no frames.
      const root = this.#trackers.get(page.session);
      const barrier = Promise.all(root ? [root.barrier(deadline - now)] : []);
      if (now < last + quietMs) {
        await this.#change(Math.min(deadline, last + quietMs));
        if (activity.lastActivity > last) {
          bestEffort("settle barrier", barrier);
          continue;
        }
      }
      const passed = await Promise.race([
        barrier.then((results) => results.every(Boolean)),
        aborted,
      ]);
      if (signal?.aborted) continue;
      if (activity.lastActivity > last) continue;
      if (!passed && ++failures < BARRIER_TRIES) continue;
      if (performance.now() < last + quietMs) continue;
      // Quiet: what the action opened may still be fading or sliding in. Once a settle.
      if (root && !animated && this.#options.animationMs > 0) {
        animated = true;
        const left = deadline - performance.now();
        const budget = Math.min(this.#options.animationMs, left);
        if (budget > 0 && await root.animations(budget, left) > 0) {
          waited.add("animations");
          continue;
        }
      }
      return finish(true, []);
    }
  }

  async #prepare({ session }: AttachedTarget): Promise<void> {
    const root = rootOf(session);
    let activity = this.#activities.get(root);
    if (!activity) {
      const created = new PageActivity({
        longPollMs: this.#options.longPollMs,
        webSocketReplyMs: this.#options.webSocketReplyMs,
        longPolls: this.#longPolls,
      }, () => this.#notify());
      this.#activities.set(root, activity = created);
      root.onClose(() => this.#activities.delete(root));
    }
    const tracker = new SessionTracker(session, activity, {
      binding: this.#binding,
      graceMs: this.#options.longPollMs,
    });
    this.#trackers.set(session, tracker);
    session.onClose(() => {
      tracker.dispose();
      this.#trackers.delete(session);
      this.#notify();
    });
    const source = activityHookSource({
      binding: this.#binding,
      timerMs: this.#options.timerMs,
      chainMs: this.#options.chainMs,
    });
    await Promise.all([
      session.send("Network.enable"),
      session.send("Runtime.enable"),
      session.send("Runtime.addBinding", { name: this.#binding }),
      session.send("Page.addScriptToEvaluateOnNewDocument", { source }),
    ]);
  }

  #notify(): void {
    const waiters = [...this.#waiters];
    this.#waiters.clear();
    for (const wake of waiters) wake();
  }

  /** Resolves on the next change, or at `until` (`performance.now()` time). */
  #change(until: number): Promise<void> {
    return new Promise((resolve) => {
      const wake = () => {
        clearTimeout(timer);
        this.#waiters.delete(wake);
        resolve();
      };
      const timer = setTimeout(wake, Math.max(0, until - performance.now()));
      this.#waiters.add(wake);
    });
  }
}

/** The top-level session a session descends from (itself for a page). */
function rootOf(session: CdpSession): CdpSession {
  let current = session;
  while (current.parentSessionId !== undefined) {
    const parent = current.connection.session(current.parentSessionId);
    if (!parent) break;
    current = parent;
  }
  return current;
}
