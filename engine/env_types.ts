/**
 * The env's options, calls and results.
 *
 * @module
 */
import type { ActResult, DialogInfo, DialogPolicy } from "./act/actor.ts";
import type { Viewport } from "./browser/browser.ts";
import type { Observation, ObserveOptions } from "./observe/observation.ts";
import type { SettleOptions, SettlerOptions } from "./settle/settler.ts";
import type { EnvTask } from "./task.ts";
import type { OriginReserve } from "./context_pool.ts";

/** What an env serves: an origin to open and a way back to its first state. */
export interface EnvSite {
  /** The site's origin, such as `"http://env-3.localhost:8800"`. */
  readonly origin: string;
  /**
   * Restores the site's state to where the episode started.
   *
   * @param options `seed`: the data seed the caller asked for in
   *   `env.reset({ seed })`; absent when it gave none (a site without seeds
   *   may ignore it)
   */
  reset(options?: { seed?: number }): Promise<void>;
  /**
   * Checks that the site still runs and answers: a sandbox instance's
   * liveness probe, such as its state API reaching its own database. When
   * present, every step runs it beside the action and `verify()` before the
   * verifier, so a site that died behind pages that still load (a database
   * server gone under a running web server) fails the step or the verdict as
   * ours, whatever the page showed and whether the action itself failed.
   */
  check?(): Promise<void>;
  /**
   * Reserves origins for copies of the site not made yet (the gateway's
   * spare routes). With it a fork's context is made before the fork is asked
   * for (see `ContextPool`), and `ForkOptions.branch` is asked to make its
   * copy on a reserved origin.
   */
  readonly spares?: OriginReserve;
}

/** The deadline and abort signal of one env operation. */
export interface EnvCallOptions {
  /**
   * The operation's deadline, in milliseconds from the call (waiting for
   * the operations before it included).
   *
   * @default {the env's `timeoutMs`}
   */
  timeoutMs?: number;
  /** Abandons the operation when aborted: it rejects with `EnvError("timeout")`. */
  signal?: AbortSignal;
}

/** Options of {@linkcode Env.observe}. */
export interface EnvObserveOptions extends ObserveOptions, EnvCallOptions {}

/** Options of {@linkcode Env.reset}. */
export interface ResetOptions extends EnvCallOptions {
  /** The seed passed to the site's `reset({ seed })`. */
  seed?: number;
  /** A task to run from this episode on, instead of the current one. */
  task?: EnvTask;
}

/** What one fork of an env runs on: a copy of the site and the task bound to it. */
export interface EnvBranch {
  /** The copy of the parent's site, taken at the fork (see `Instance.fork()`). */
  site?: EnvSite;
  /**
   * The task bound to the copy, carrying the parent's episode start (its
   * mark): the fork's first episode does not begin the task again.
   */
  task?: EnvTask;
  /** Lets go of the copy when the fork could not be made; the caller owns it otherwise. */
  release?(): Promise<void>;
}

/** Where a fork's copy of the site goes. */
export interface BranchAt {
  /**
   * A spare origin the site's `spares` reserved, whose context is ready:
   * a copy made on it (`Instance.fork({ origin })`) starts at once; a copy
   * elsewhere gets a new context, and the spare is given back.
   */
  origin: string;
}

/** Options of {@linkcode Env.fork}. */
export interface ForkOptions extends EnvCallOptions {
  /**
   * Copies the site for one fork, called once per fork while the parent
   * waits, after its browser state was captured. Needed when the env has a
   * site: the engine cannot copy a site, only the sandbox behind it can.
   */
  branch?: (at?: BranchAt) => Promise<EnvBranch>;
}

/** Options of {@linkcode Env.settle}. */
export interface EnvSettleOptions
  extends EnvCallOptions, Pick<SettleOptions, "capMs" | "quietMs" | "since"> {}

/** Options of {@linkcode Env.create}. */
export interface EnvOptions {
  /** The site the env serves; without it the env starts on `startUrl` alone. */
  site?: EnvSite;
  /**
   * The task of every episode: it starts at `task.startUrl` (a path on the
   * site's origin, or an absolute URL), `task.begin()` runs after the site
   * reset and before the start page opens, every observation carries the
   * instruction, and {@linkcode Env.verify} scores the episode.
   */
  task?: EnvTask;
  /**
   * Where each episode starts when there is no task: an absolute URL, or a
   * path on the site's origin.
   *
   * @default {"/" on the site, or "about:blank" without one}
   */
  startUrl?: string;
  /** Defaults of every observation. */
  observe?: ObserveOptions;
  /** The settler's waits and caps. */
  settle?: SettlerOptions;
  /** The dialog policy of the actor. */
  dialogs?: DialogPolicy;
  /**
   * The deadline of every operation (create, observe, step, reset, verify,
   * settle, evaluate, `envInternals(env).withPage`), in milliseconds, unless the call gives its
   * own. It covers everything the operation does: browser commands,
   * loading, settling, the site's reset.
   *
   * @default {30000}
   */
  timeoutMs?: number;
  /** Abandons `Env.create` when aborted: it rejects with `EnvError("timeout")`. */
  signal?: AbortSignal;
  /**
   * Steps per episode: the step that reaches it returns `truncated: true`,
   * and later steps fail with `ActionError("not-allowed")` until `reset()`.
   *
   * @default {no limit}
   */
  maxSteps?: number;
  /**
   * How long an episode may run, in milliseconds from its start: a step
   * that ends past it returns `truncated: true`.
   *
   * @default {no limit}
   */
  maxEpisodeMs?: number;
  /**
   * The only directory `upload` takes files from (see
   * `ActorOptions.uploadDir`).
   *
   * @default {none: uploads fail with ActionError("not-allowed")}
   */
  uploadDir?: string;
  /**
   * Which URLs `goto` may open.
   *
   * @default {the site's origin when there is a site, else http: and https: URLs}
   */
  allowUrl?: (url: URL) => boolean;
  /**
   * The only origins the env's pages may reach over the network; every other
   * request fails (see `NewContextOptions.onlyOrigins`).
   *
   * @default {[the site's origin] when there is a site, else every origin}
   */
  onlyOrigins?: string[];
  /**
   * The viewport of every page of the env, popups included, in CSS pixels.
   *
   * @default {{ width: 1280, height: 720 }}
   */
  viewport?: Viewport;
}

/** One tab, as the observation lists it. */
export interface EnvTab {
  /** The tab's index, what `switch_tab` takes. */
  index: number;
  /** The document's title. */
  title: string;
  /** The document's URL. */
  url: string;
  /** Whether this is the active tab. */
  active: boolean;
}

/**
 * An observation of the env: the active tab's page, its tabs, any open
 * dialog and the task. With a task, the text's first line is
 * `task: <instruction>`, before the page's header line.
 */
export interface EnvObservation extends Observation {
  /** Every open tab. */
  tabs: EnvTab[];
  /** A JavaScript dialog waiting for the agent's answer. */
  dialog?: DialogInfo;
  /** The task of the episode, when the env has one. */
  task?: { id: string; instruction: string };
}

/** What one step did, and the env afterwards. */
export interface StepResult {
  /** What the action did and how the page settled. */
  result: ActResult;
  /** The env after the action (also after `stop`). */
  observation: EnvObservation;
  /** Whether the episode ended: the agent took `stop`. */
  done: boolean;
  /** Whether the episode was cut short: `maxSteps` reached or `maxEpisodeMs` passed. */
  truncated: boolean;
}
