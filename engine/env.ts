/**
 * One environment for one agent: an isolated browser context on a site,
 * observed and acted on by id, reset to a fresh episode on demand.
 *
 * The env is handed anything with an origin and a reset (a sandbox
 * `Instance` fits), so the engine never imports `sandboxes/`.
 *
 * Failures come in two families, never mixed:
 * - an {@linkcode ActionError} is the agent's (unknown or stale id, covered,
 *   not editable, a URL out of bounds…): the episode goes on;
 * - an {@linkcode EnvError} is ours (browser gone, renderer crashed, site
 *   unreachable, sandbox lost, deadline passed or aborted, env closed): the
 *   step earns no reward, and `reset()` (or, for `browser-gone`, a
 *   `browser.relaunch()` then `reset()`) recovers.
 * A malformed action is the agent's too: `ActionError("invalid-action")`.
 * A malformed option is the caller's, thrown before the operation starts: a
 * `TypeError` or `RangeError`. Any other error inside an operation (a
 * `TypeError` from an internal check included) is our bug:
 * `EnvError("internal")`, logged with its stack.
 *
 * Invariants:
 * - operations on one env (create, observe, step, reset, verify, settle,
 *   evaluate, withPage) run one at a time, in call order (`_env_queue.ts`);
 * - every operation honours one deadline (`timeoutMs`, per call or from
 *   {@linkcode EnvOptions.timeoutMs}) and the caller's `AbortSignal`, and the
 *   time spent waiting for its turn counts; on expiry it rejects at once with
 *   `EnvError("timeout")` and is stopped: every CDP call it still makes is
 *   refused (see `engine/cdp/abort_scope.ts`), and the page's loading is
 *   stopped, so the next call finds a usable page;
 * - a crashed renderer or a dead browser rejects the operation in flight at
 *   once (`renderer-crashed`, `browser-gone`), and every later one until
 *   `reset()`;
 * - nothing the env starts can reject unhandled;
 * - a failed `reset()` leaves an env with no episode that a later `reset()`
 *   brings back; other operations meanwhile reject with the failure's code.
 *
 * @module
 */
import type { ActResult } from "./act/actor.ts";
import { ActionError } from "./act/errors.ts";
import type { Browser } from "./browser/browser.ts";
import { checkViewport, networkPolicy } from "./browser/_context_options.ts";
import { EnvError } from "./env_error.ts";
import { bestEffort } from "./log.ts";
import type { ObserveOptions } from "./observe/observation.ts";
import type { SettleResult } from "./settle/settler.ts";
import type { EnvTask, Verdict } from "./task.ts";
import type {
  EnvCallOptions,
  EnvObservation,
  EnvObserveOptions,
  EnvOptions,
  EnvSettleOptions,
  EnvSite,
  ForkOptions,
  ResetOptions,
  StepResult,
} from "./env_types.ts";
import {
  activePage,
  closeContext,
  type Episode,
  episodeOutcome,
  type EpisodeRestore,
  liveEpisode,
  noEpisode,
  startEpisode,
  watchAlive,
} from "./_env_episode.ts";
import { checkSite, envFailure, siteAlive, siteCall } from "./_env_failures.ts";
import { call, positive, startUrlOf } from "./_env_options.ts";
import { OperationQueue } from "./_env_queue.ts";
import { observeEpisode } from "./_env_text.ts";
import { forkEpisode } from "./_env_fork.ts";
import { browserInternals } from "./browser/browser.ts";
import type { ReadyPage } from "./_ready_page.ts";
import { type EnvInternals, setInternalsOf } from "./_env_internals.ts";

export { envInternals } from "./_env_internals.ts";
export type { EnvInternals } from "./_env_internals.ts";

/** The most forks one call makes. */
export const MAX_FORKS = 16;

/** The default deadline of every operation. */
const DEFAULT_TIMEOUT_MS = 30_000;

/**
 * An environment: one isolated context on one site, observed and acted on by
 * element id.
 *
 * @example Open an env, look, act
 * ```ts ignore
 * import { Browser, Env, EnvError } from "@webserv/webserv";
 * await using browser = await Browser.launch();
 * await using env = await Env.create(browser, { startUrl: "data:text/html,<button>Go</button>" });
 * const { text } = await env.observe();   // [1] button Go
 * try {
 *   const { observation, done, truncated } = await env.step({ action: "click", id: 1 });
 * } catch (error) {
 *   if (error instanceof EnvError) await env.reset(); // ours: no reward, start over
 *   else throw error; // an ActionError is the agent's: show it to the agent
 * }
 * ```
 */
export class Env implements AsyncDisposable {
  /** The site the env serves, if any. */
  readonly site: EnvSite | undefined;
  #browser: Browser;
  #options: EnvOptions;
  #timeoutMs: number;
  #task: EnvTask | undefined;
  #episode: Episode | undefined;
  #failure: EnvError | undefined;
  #closed = false;
  #queue: OperationQueue = new OperationQueue({
    watch: (what, abort, watchCrash) => this.#watch(what, abort, watchCrash),
    map: (error, what, signal) => this.#map(error, what, signal),
    abandoned: (reason) => this.#abandoned(reason),
  });

  private constructor(browser: Browser, options: EnvOptions) {
    this.#browser = browser;
    this.#options = options;
    this.site = options.site;
    this.#task = options.task;
    this.#timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  }

  /**
   * Creates an env and starts its first episode: `task.begin()` if there is
   * a task, then a fresh context on the start URL, loaded and settled.
   *
   * @param browser the browser the env's context lives in
   * @param options the site, task, start URL, deadline and policies
   * @returns the env, its start page loaded and settled
   * @throws {TypeError} when the start URL is not a valid URL or `onlyOrigins` holds a non-origin
   * @throws {RangeError} when `timeoutMs`, `maxSteps` or `maxEpisodeMs` is not positive, or the
   *   viewport is out of range
   * @throws {EnvError} when the browser, the site or the deadline fails it
   */
  static async create(browser: Browser, options: EnvOptions = {}): Promise<Env> {
    // The caller's mistakes are thrown here, before the operation: inside it they would be ours.
    startUrlOf(options, options.task);
    if (options.viewport) checkViewport(options.viewport);
    if (options.onlyOrigins) networkPolicy({ onlyOrigins: options.onlyOrigins });
    positive("timeoutMs", options.timeoutMs);
    positive("maxSteps", options.maxSteps);
    positive("maxEpisodeMs", options.maxEpisodeMs);
    const env = new Env(browser, options);
    try {
      const call = options.signal ? { signal: options.signal } : {};
      await env.#run("create the env", call, (signal) => env.#start(signal), false);
    } catch (error) {
      await env.close();
      throw error;
    }
    return env;
  }

  static {
    setInternalsOf((env): EnvInternals => ({
      get context() {
        return env.#have().context;
      },
      get actor() {
        return env.#have().actor;
      },
      get observer() {
        return env.#have().observer;
      },
      get page() {
        return activePage(env.#have());
      },
      withPage: (fn, options = {}) =>
        env.#run("use the page", options, () => fn(activePage(env.#live()))),
    }));
  }

  /** The task of the episode, if any. */
  get task(): EnvTask | undefined {
    return this.#task;
  }

  /** The steps taken in the current episode, failed ones included (a fork's count its parent's). */
  get steps(): number {
    return this.#episode?.steps ?? 0;
  }

  /** The agent's answer once it took `stop`. */
  get answer(): string | undefined {
    return this.#episode?.actor.answer;
  }

  /**
   * Observes the active tab.
   *
   * @param options overrides of the env's observe defaults, the deadline and signal
   * @returns the page as text and JSON, with the tabs, any open dialog and the task
   * @throws {EnvError} when the env cannot observe (see the module doc)
   */
  observe(options: EnvObserveOptions = {}): Promise<EnvObservation> {
    const { timeoutMs, signal, ...observe } = options;
    return this.#run(
      "observe",
      call(timeoutMs, signal),
      () => this.#observe(this.#live(), observe),
    );
  }

  /**
   * Executes one action, then observes the env.
   *
   * @param action the action as the agent sent it (validated here)
   * @param options the deadline and signal of the whole step
   * @returns what it did, the observation after it, and whether the episode is done or truncated
   * @throws {ActionError} when it is malformed (`invalid-action`) or cannot be done (see
   *   `engine/act/errors.ts`); the env stays usable
   * @throws {EnvError} when the env fails the step; it earns no reward
   */
  step(action: unknown, options: EnvCallOptions = {}): Promise<StepResult> {
    return this.#run("step", options, async () => {
      const episode = this.#live();
      const max = this.#options.maxSteps;
      if (max !== undefined && episode.steps >= max) {
        throw new ActionError(
          "not-allowed",
          `Cannot act: the episode reached its limit of ${max} steps; reset the env`,
        );
      }
      // The site is checked beside the action: one that died under the step
      // makes it ours, whatever the page showed (a database error page
      // answers too) and whether the action failed (ids gone with the page).
      const alive = checkSite(this.site);
      let result: ActResult;
      try {
        result = await episode.actor.act(action);
      } catch (error) {
        await siteAlive(alive);
        if (error instanceof ActionError) episode.steps++;
        throw error;
      }
      episode.steps++;
      const observation = await this.#observe(episode, {});
      await siteAlive(alive);
      const done = result.action.action === "stop";
      const maxMs = this.#options.maxEpisodeMs;
      const truncated = !done && (
        (max !== undefined && episode.steps >= max) ||
        (maxMs !== undefined && performance.now() - episode.startedAt >= maxMs)
      );
      return { result, observation, done, truncated };
    });
  }

  /**
   * Starts a new episode: the site back to its first state (with `seed` if
   * given), the task's `begin()`, a fresh context (no cookies, storage or
   * tabs of the last episode) on the start URL. Ids start over with the new
   * observer. When it fails, the env has no episode until a later `reset()`
   * succeeds.
   *
   * @param options the seed, a new task, the deadline and signal
   * @returns the first observation of the new episode
   * @throws {TypeError} when the new task's start URL is not a valid URL
   * @throws {EnvError} when the site, the browser or the deadline fails it
   */
  async reset(options: ResetOptions = {}): Promise<EnvObservation> {
    const { seed, task, ...rest } = options;
    // The caller's mistake, thrown before the operation (inside, it would be ours).
    if (task) startUrlOf(this.#options, task);
    return await this.#run("reset the env", rest, async (signal) => {
      if (task) this.#task = task;
      const old = this.#episode;
      this.#episode = undefined;
      this.#failure = undefined;
      try {
        if (old) await closeContext(old.context);
        const site = this.site;
        if (site) {
          await siteCall(
            "reset the site",
            () => seed === undefined ? site.reset() : site.reset({ seed }),
          );
        }
        await this.#start(signal);
        return await this.#observe(this.#live(), {});
      } catch (error) {
        const mapped = this.#map(error, "reset the env", signal);
        if (mapped instanceof EnvError) this.#failure = mapped;
        throw mapped;
      }
    }, false);
  }

  /**
   * Copies the live episode `k` ways: each fork is a new env on a copy of
   * the site (made by `options.branch`) and of the browser state (the
   * active tab's URL and scroll position, the cookies, the origin's local
   * and session storage, typed-but-unsubmitted form fields), on the same
   * task, with the parent's step count and episode clock. The parent waits
   * while it is copied, and goes on unchanged. A fork's `reset()` starts the
   * task over, like any env's; closing it leaves its site to the caller.
   *
   * @param k how many forks, 1 to {@linkcode MAX_FORKS}
   * @param options the site's copier, the deadline and signal
   * @returns the forks, each settled on the parent's page
   * @throws {RangeError} when `k` is not an integer from 1 to 16
   * @throws {TypeError} when the env has a site and no `branch` was given
   * @throws {ActionError} `not-allowed` while a dialog is open (answer it first)
   * @throws {EnvError} when the browser, a site copy or the deadline fails
   *   it; no fork is left open and every branch made is released
   */
  async fork(k: number, options: ForkOptions = {}): Promise<Env[]> {
    if (!Number.isInteger(k) || k < 1 || k > MAX_FORKS) {
      throw new RangeError(`Cannot fork: k must be an integer from 1 to ${MAX_FORKS}, got ${k}`);
    }
    const { branch, ...rest } = options;
    const site = this.site;
    if (site && !branch) {
      throw new TypeError("Cannot fork: the env has a site; pass branch to copy it");
    }
    return await this.#run("fork the env", rest, (signal) =>
      forkEpisode(
        {
          browser: this.#browser,
          options: this.#options,
          site,
          episode: this.#live(),
          open: (options) => {
            const env = new Env(this.#browser, options);
            return {
              env,
              start: (restore, signal, ready, taken) =>
                env.#run("start the fork", { signal }, (inner) => {
                  taken();
                  return env.#start(inner, restore, ready);
                }, false),
            };
          },
        },
        k,
        branch,
        signal,
      ));
  }

  /**
   * Scores the episode with the task's verifier, from the site's state, the
   * agent's answer and the active tab's URL.
   *
   * @param options the deadline and signal
   * @returns the task's verdict: reward and reason
   * @throws {TypeError} when the env has no task
   * @throws {EnvError} when the site or the browser fails it
   */
  async verify(options: EnvCallOptions = {}): Promise<Verdict> {
    const task = this.#task;
    if (!task) throw new TypeError("Cannot verify: the env has no task");
    return await this.#run("verify the task", options, async () => {
      const episode = this.#live();
      // No verdict on a site that is gone: its state would be read from nothing.
      await siteAlive(checkSite(this.site));
      const outcome = await episodeOutcome(episode);
      return await siteCall("verify the task", () => task.verify(outcome));
    });
  }

  /**
   * Waits until the active tab is quiet, after something the caller did
   * itself (through `envInternals(env).withPage`, `evaluate` or the site).
   *
   * @param options the settle cap, quiet window and start, the deadline and signal
   * @returns how the page settled
   * @throws {EnvError} when the env cannot settle
   */
  settle(options: EnvSettleOptions = {}): Promise<SettleResult> {
    const { timeoutMs, signal, ...settle } = options;
    return this.#run("settle", call(timeoutMs, signal), async (aborted) => {
      const episode = this.#live();
      const page = episode.actor.page;
      if (!page) throw new EnvError("internal", "Cannot settle: no tab is open");
      return await episode.settler.settle(page, { ...settle, signal: aborted });
    });
  }

  /**
   * Evaluates a JavaScript expression in the active tab's main world (where
   * the page's own scripts run), awaiting a promise it returns.
   *
   * @param expression the expression
   * @param options the deadline and signal
   * @returns its value as JSON (`undefined` for what JSON cannot hold)
   * @throws {EvalError} when the expression throws; its message is the exception
   * @throws {EnvError} when the env cannot evaluate
   */
  evaluate(expression: string, options: EnvCallOptions = {}): Promise<unknown> {
    return this.#run("evaluate", options, async () => {
      const page = activePage(this.#live());
      const { result, exceptionDetails } = await page.session.send("Runtime.evaluate", {
        expression,
        returnByValue: true,
        awaitPromise: true,
      });
      if (exceptionDetails) {
        throw new EvalError(
          `Cannot evaluate: ${exceptionDetails.exception?.description ?? exceptionDetails.text}`,
        );
      }
      return result.value;
    });
  }

  /**
   * Closes the env's context; the site and the browser stay up. An
   * operation in flight rejects with `EnvError("closed")`. Safe to call twice.
   */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#queue.abortAll(new EnvError("closed", "Cannot finish: the env was closed"));
    const episode = this.#episode;
    this.#episode = undefined;
    if (episode) await closeContext(episode.context);
    this.#queue.releaseAll();
  }

  /** Closes the env. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  /**
   * Runs one operation through the env's {@linkcode OperationQueue}: in
   * turn, under its deadline and the caller's signal, in an abort scope,
   * watching for a crash or a dead browser; errors leave through
   * {@linkcode Env.#map}.
   */
  async #run<T>(
    what: string,
    options: EnvCallOptions,
    work: (signal: AbortSignal) => Promise<T>,
    watchCrash = true,
  ): Promise<T> {
    const timeoutMs = options.timeoutMs ?? this.#timeoutMs;
    positive("timeoutMs", timeoutMs);
    if (this.#closed) throw new EnvError("closed", `Cannot ${what}: the env is closed`);
    return await this.#queue.run(what, timeoutMs, options.signal, work, watchCrash);
  }

  /** After an operation was abandoned on its deadline: stop the page's loading, so the page stays usable. */
  #abandoned(reason: unknown): void {
    const page = this.#episode?.actor.page;
    if (reason instanceof EnvError && reason.code === "timeout" && page && !page.crash) {
      bestEffort("stopping an abandoned page load", page.session.send("Page.stopLoading"));
    }
  }

  /** Aborts the operation when the browser goes away or (`watchCrash`) the active tab crashes. */
  #watch(what: string, abort: (error: EnvError) => void, watchCrash: boolean): () => void {
    const page = watchCrash ? this.#episode?.actor.page : undefined;
    return watchAlive(what, { browser: this.#browser, page, abort });
  }

  /** The one place errors cross the env's boundary: see {@linkcode envFailure}. */
  #map(error: unknown, what: string, signal: AbortSignal): unknown {
    return envFailure(error, what, signal, {
      closed: this.#closed,
      gone: this.#episode?.connection.closeReason ??
        browserInternals(this.#browser).connection.closeReason,
      crash: this.#episode?.actor.page?.crash?.status,
    });
  }

  /** Starts an episode, which becomes the env's as soon as it is ready: see {@linkcode startEpisode}. */
  #start(signal: AbortSignal, restore?: EpisodeRestore, ready?: ReadyPage): Promise<void> {
    return startEpisode(this.#browser, {
      options: this.#options,
      task: this.#task,
      timeoutMs: this.#timeoutMs,
      signal,
      ...(restore ? { restore } : {}),
      ...(ready ? { ready } : {}),
      adopt: (episode) => {
        this.#episode = episode;
      },
    });
  }

  /** Observes the episode's active tab: see {@linkcode observeEpisode}. */
  #observe(episode: Episode, options: ObserveOptions): Promise<EnvObservation> {
    return observeEpisode(episode, { ...this.#options.observe, ...options }, this.#task);
  }

  /** The episode, when the env is open and has one; for the getters. */
  #have(): Episode {
    if (this.#closed) throw new EnvError("closed", "Cannot use the env: it is closed");
    if (this.#episode) return this.#episode;
    throw noEpisode(this.#failure);
  }

  /** The episode, when its browser and active tab are alive. */
  #live(): Episode {
    return liveEpisode(this.#have());
  }
}
