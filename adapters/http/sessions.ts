/**
 * The sessions of the rollout server: each one `Env` on its own sandbox
 * instance and browser context, with a lease renewed by use, an idle
 * timeout, a hard lifetime and a cap on how many live at once.
 *
 * Invariants: operations on one session run one at a time (a queue per
 * session), different sessions run in parallel; a step's reward exists only
 * with `ok` or `action_error`; an infrastructure failure is `env_error` or
 * `timeout` and never a reward; a retried `request_id` returns the first
 * result; a reaped session answers `expired`, never "not found".
 *
 * @module
 */
import {
  ActionError,
  type Browser,
  Env,
  EnvError,
  type EnvObservation,
  logFailure,
} from "../../mod.ts";
import type { Instance, Sandbox, Site } from "../../sandboxes/mod.ts";
import type { Catalog, Placement, ServedTask } from "./catalog.ts";
import { HttpError } from "./http_error.ts";
import type { Metrics } from "./metrics.ts";
import type {
  GroupCreated,
  LeaseBody,
  ObservationBody,
  ObservationMode,
  ResetRequest,
  SessionCreated,
  SessionSpec,
  SessionState,
  StepResponse,
  TaskBody,
} from "./protocol.ts";
import type { TrajectoryLog } from "./trajectory.ts";

/** Options of {@linkcode SessionManager}. */
export interface SessionManagerOptions {
  /** Gives the current browser, launching a new one when the last is gone. */
  browser: () => Promise<Browser>;
  /**
   * Gives the sandbox backend of a site, on a placement target when the
   * session names one.
   */
  sandbox: (site: Site, target?: string) => Promise<Sandbox>;
  /**
   * Whether sessions may name a placement `target` (the incus backend).
   *
   * @default {false}
   */
  placementTargets?: boolean;
  /** The sites and tasks. */
  catalog: Catalog;
  /** The counters. */
  metrics: Metrics;
  /** Where trajectories go; none are written when absent. */
  trajectories?: TrajectoryLog;
  /**
   * The cap on live sessions.
   *
   * @default {16}
   */
  maxSessions?: number;
  /**
   * Idle time after which a session is reaped, in milliseconds.
   *
   * @default {300000}
   */
  idleTimeoutMs?: number;
  /**
   * The hard lifetime of a session, in milliseconds.
   *
   * @default {3600000}
   */
  lifetimeMs?: number;
  /**
   * The deadline of one step, reset or create, in milliseconds.
   *
   * @default {30000}
   */
  stepTimeoutMs?: number;
  /**
   * Origins bare-URL sessions may not open (the server's own).
   *
   * @default {[]}
   */
  blockedOrigins?: () => string[];
}

/** What happened to a session, for the dashboard. */
export interface SessionEvent {
  /** What happened. */
  type: "created" | "step" | "reset" | "closed";
  /** The session's id. */
  session: string;
  /** The session's state afterwards (absent once closed). */
  state?: SessionState;
  /** The last observation text. */
  text?: string;
  /** For `step`: the action and its outcome. */
  step?: { action: unknown; status: string; reward?: number };
}

interface HistoryEntry {
  step: number;
  action: unknown;
  status: string;
  reward?: number;
  error?: string;
}

interface Session {
  id: string;
  group: string | undefined;
  spec: SessionSpec;
  placement: Placement | null;
  instance: Instance | undefined;
  env: Env;
  /** The task bound to the instance, if any. */
  task: ServedTask | undefined;
  browser: Browser;
  /** The active tab's URL as last observed. */
  url: string;
  createdAt: number;
  lastUsed: number;
  busy: number;
  episode: number;
  steps: number;
  done: boolean;
  rewards: number[];
  text: string;
  history: HistoryEntry[];
  cache: Map<string, Promise<StepResponse>>;
  queue: Promise<unknown>;
  closed: boolean;
}

const CACHE_SIZE = 32;
const HISTORY_SIZE = 200;
const TOMBSTONES = 10_000;

/**
 * Creates, steps, resets and reaps sessions.
 *
 * @example Create a session and step it
 * ```ts ignore
 * const created = await manager.create({ task: "demo/add-note/1" });
 * const result = await manager.step(created.id, { action: { action: "click", id: 3 } });
 * ```
 */
export class SessionManager implements AsyncDisposable {
  #options: SessionManagerOptions;
  #sessions = new Map<string, Session>();
  #expired = new Map<string, string>();
  #pending = 0;
  #reaper: ReturnType<typeof setInterval>;
  #listeners = new Set<(event: SessionEvent) => void>();
  #closing = false;

  /**
   * Creates the manager and starts reaping idle and expired sessions.
   *
   * @param options the browser, sandboxes, catalog and limits
   */
  constructor(options: SessionManagerOptions) {
    this.#options = options;
    this.#reaper = setInterval(() => this.#reap(), 1000);
    Deno.unrefTimer(this.#reaper);
  }

  /** The cap on live sessions. */
  get max(): number {
    return this.#options.maxSessions ?? 16;
  }

  /** Whether {@linkcode SessionManager.closeAll} was called. */
  get closing(): boolean {
    return this.#closing;
  }

  /** Sessions open now, and being opened. */
  get live(): number {
    return this.#sessions.size + this.#pending;
  }

  /**
   * Listens to session events.
   *
   * @param listener called for every event
   * @returns a function that stops listening
   */
  subscribe(listener: (event: SessionEvent) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /**
   * Opens a session.
   *
   * @param spec what it runs
   * @param group the group it belongs to
   * @returns its id, first observation and lease
   * @throws {HttpError} 400 for a bad spec, 404 for an unknown task, 429 past the cap, 503 when the env fails
   */
  async create(spec: SessionSpec, group?: string): Promise<SessionCreated> {
    this.#admit(1);
    this.#pending++;
    try {
      return await this.#open(spec, group);
    } finally {
      this.#pending--;
    }
  }

  /**
   * Opens a group of sessions on the same task and seed, each on its own
   * instance and context.
   *
   * @param spec what they run
   * @param n how many
   * @returns the group id and its sessions
   * @throws {HttpError} as {@linkcode SessionManager.create}; nothing is left open on failure
   */
  async createGroup(spec: SessionSpec, n: number): Promise<GroupCreated> {
    this.#admit(n);
    const group = `g-${randomId()}`;
    this.#pending += n;
    const opened: SessionCreated[] = [];
    try {
      const results = await Promise.allSettled(
        Array.from({ length: n }, () => this.#open(spec, group)),
      );
      for (const result of results) if (result.status === "fulfilled") opened.push(result.value);
      const failed = results.find((r): r is PromiseRejectedResult => r.status === "rejected");
      if (failed) {
        await Promise.all(opened.map((s) => this.close(s.id, "group-failed")));
        throw failed.reason;
      }
      return { group, sessions: opened };
    } finally {
      this.#pending -= n;
    }
  }

  /**
   * Takes one action in a session.
   *
   * @param id the session
   * @param request the action and an optional request id
   * @returns the step's result; `expired` for a reaped session
   * @throws {HttpError} 404 for an unknown session, 409 after the episode ended
   */
  step(
    id: string,
    request: { action: unknown; request_id?: string | undefined },
  ): Promise<StepResponse> {
    const session = this.#sessions.get(id);
    if (!session) return Promise.resolve(this.#expiredStep(id));
    if (Date.now() - session.createdAt > this.#lifetime() && session.busy === 0) {
      return this.close(id, "lifetime").then(() => this.#expiredStep(id));
    }
    const key = request.request_id;
    const cached = key === undefined ? undefined : session.cache.get(key);
    if (cached) return cached;
    const result = this.#queue(session, () => this.#step(session, request.action));
    if (key !== undefined) {
      session.cache.set(key, result);
      result.catch(() => session.cache.delete(key));
      if (session.cache.size > CACHE_SIZE) {
        session.cache.delete(session.cache.keys().next().value!);
      }
    }
    return result;
  }

  /**
   * Starts a new episode, optionally on a new seed or task.
   *
   * @param id the session
   * @param request the new seed or task
   * @returns the first observation and lease
   * @throws {HttpError} 404 unknown, 410 expired, 503 when the env fails
   */
  reset(id: string, request: ResetRequest = {}): Promise<SessionCreated> {
    const session = this.#get(id);
    return this.#queue(session, () => this.#reset(session, request));
  }

  /**
   * Observes a session.
   *
   * @param id the session
   * @param mode the observation mode; the session's when absent
   * @returns the observation
   * @throws {HttpError} 404 unknown, 410 expired, 503 when the env fails
   */
  observe(id: string, mode?: ObservationMode): Promise<ObservationBody> {
    const session = this.#get(id);
    return this.#queue(session, async () => {
      const chosen = mode ?? session.spec.observation ?? "text";
      const observation = await this.#envCall(() =>
        session.env.observe(chosen === "diff" ? { mode: "diff" } : {})
      );
      session.url = observation.url;
      return observationBody(observation, chosen);
    });
  }

  /**
   * A screenshot of a session's active tab.
   *
   * @param id the session
   * @param marks whether to draw the element ids
   * @returns PNG bytes
   * @throws {HttpError} 404 unknown, 410 expired, 503 when the env fails
   */
  screenshot(id: string, marks: boolean): Promise<Uint8Array> {
    const session = this.#get(id);
    return this.#queue(session, () => this.#envCall(() => shoot(session.env, marks)));
  }

  /**
   * Runs the task's verifier now.
   *
   * @param id the session
   * @returns the verdict
   * @throws {HttpError} 404 unknown, 410 expired, 409 without a task, 503 when the env fails
   */
  verify(id: string): Promise<{ reward: number; reason: string }> {
    const session = this.#get(id);
    return this.#queue(session, () => {
      if (!session.env.task) {
        throw new HttpError(409, "no-task", `Session "${id}" has no task to verify`);
      }
      return this.#envCall(() => session.env.verify());
    });
  }

  /**
   * A session's state.
   *
   * @param id the session
   * @returns the state
   * @throws {HttpError} 404 unknown, 410 expired
   */
  state(id: string): SessionState {
    return stateOf(this.#get(id), this.#lease(this.#get(id)));
  }

  /**
   * The trajectory summary the dashboard shows.
   *
   * @param id the session
   * @returns the last observation text and the recent steps
   * @throws {HttpError} 404 unknown, 410 expired
   */
  history(id: string): { text: string; history: HistoryEntry[] } {
    const session = this.#get(id);
    return { text: session.text, history: session.history };
  }

  /**
   * The sandbox instance behind a session, for operators and fault tests.
   *
   * @param id the session
   * @returns its instance; `undefined` for a bare-URL session
   * @throws {HttpError} 404 unknown, 410 expired
   */
  instance(id: string): Instance | undefined {
    return this.#get(id).instance;
  }

  /**
   * The first tasks of the catalog.
   *
   * @param limit how many
   * @returns the tasks
   */
  catalogTasks(limit = 50): TaskBody[] {
    return this.#options.catalog.list({ limit }).tasks;
  }

  /** Every live session's state. */
  list(): SessionState[] {
    return [...this.#sessions.values()].map((s) => stateOf(s, this.#lease(s)));
  }

  /**
   * Closes a session: its context and its instance.
   *
   * @param id the session
   * @param reason why, for the trajectory
   * @returns whether it was open
   */
  async close(id: string, reason = "closed"): Promise<boolean> {
    const session = this.#sessions.get(id);
    if (!session || session.closed) return false;
    session.closed = true;
    this.#sessions.delete(id);
    this.#tombstone(id, reason);
    await session.env.close().catch((error) => logFailure("close the env", error));
    await session.instance?.destroy().catch((error) => logFailure("destroy the instance", error));
    await this.#options.trajectories?.append(id, { type: "end", episode: session.episode, reason })
      .catch((error) => logFailure("write the trajectory", error));
    this.#emit({ type: "closed", session: id });
    return true;
  }

  /** Closes every session and stops reaping. */
  async closeAll(): Promise<void> {
    this.#closing = true;
    clearInterval(this.#reaper);
    await Promise.all([...this.#sessions.keys()].map((id) => this.close(id, "shutdown")));
    await this.#options.trajectories?.flush();
    // Wakes the dashboard's streams so they end.
    this.#emit({ type: "closed", session: "" });
  }

  /** Calls {@linkcode SessionManager.closeAll}. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.closeAll();
  }

  #admit(n: number): void {
    if (this.#closing) {
      throw new HttpError(503, "shutting-down", "The server is shutting down", {
        "Retry-After": "5",
      });
    }
    if (this.live + n > this.max) {
      throw new HttpError(
        429,
        "capacity",
        `Cannot open ${n} session(s): ${this.live} of ${this.max} are live`,
        { "Retry-After": "5" },
      );
    }
  }

  async #open(spec: SessionSpec, group: string | undefined): Promise<SessionCreated> {
    const placement = this.#place(spec);
    const browser = await this.#browser();
    const { instance, env, task } = await this.#build(spec, placement, browser);
    const now = Date.now();
    const session: Session = {
      id: `s-${randomId()}`,
      group,
      spec,
      placement,
      instance,
      env,
      task,
      browser,
      url: "",
      createdAt: now,
      lastUsed: now,
      busy: 0,
      episode: 0,
      steps: 0,
      done: false,
      rewards: [],
      text: "",
      history: [],
      cache: new Map(),
      queue: Promise.resolve(),
      closed: false,
    };
    let observation: EnvObservation;
    try {
      observation = await this.#envCall(() => env.observe());
    } catch (error) {
      await env.close();
      await instance?.destroy();
      throw error;
    }
    if (this.#closing) {
      await env.close();
      await instance?.destroy();
      throw new HttpError(503, "shutting-down", "The server is shutting down");
    }
    this.#sessions.set(session.id, session);
    this.#options.metrics.created();
    const created = await this.#started(session, observation);
    this.#emit({ type: "created", session: session.id, state: created.state, text: session.text });
    return created.body;
  }

  #place(spec: SessionSpec): Placement | null {
    const sources = [spec.task, spec.site, spec.url].filter((x) => x !== undefined).length;
    if (sources !== 1) {
      throw new HttpError(
        400,
        "bad-spec",
        'A session needs exactly one of "task", "site" (with "template" and "seed") or "url"',
      );
    }
    if (spec.target !== undefined && (!this.#options.placementTargets || spec.url !== undefined)) {
      throw new HttpError(
        400,
        "bad-spec",
        spec.url !== undefined
          ? 'A bare-URL session has no instance to place on target "' + spec.target + '"'
          : `Placement target "${spec.target}" needs the incus backend`,
      );
    }
    if (spec.url !== undefined) {
      const url = new URL(spec.url);
      if (!["http:", "https:"].includes(url.protocol)) {
        throw new HttpError(400, "bad-url", `URL "${spec.url}" is not http or https`);
      }
      if ((this.#options.blockedOrigins?.() ?? []).includes(url.origin)) {
        throw new HttpError(400, "bad-url", `URL "${spec.url}" is the server itself`);
      }
      return null;
    }
    return this.#options.catalog.resolve({
      ...(spec.task !== undefined ? { task: spec.task } : {}),
      ...(spec.site !== undefined ? { site: spec.site } : {}),
      ...(spec.template !== undefined ? { template: spec.template } : {}),
      ...(spec.seed !== undefined ? { seed: spec.seed } : {}),
    });
  }

  async #build(
    spec: SessionSpec,
    placement: Placement | null,
    browser: Browser,
  ): Promise<{ instance: Instance | undefined; env: Env; task: ServedTask | undefined }> {
    let instance: Instance | undefined;
    try {
      if (placement) {
        const sandbox = await this.#options.sandbox(placement.site, spec.target);
        instance = await sandbox.create({ seed: placement.seed });
      }
      const task = instance && placement?.bind?.(instance);
      const url = spec.url === undefined ? undefined : new URL(spec.url);
      const env = await Env.create(browser, {
        ...(instance ? { site: instance } : {}),
        ...(task ? { task } : {}),
        ...(url ? { startUrl: url.href, onlyOrigins: [url.origin] } : {}),
        ...(spec.observation === "diff" ? { observe: { mode: "diff" as const } } : {}),
        ...(spec.viewport ? { viewport: spec.viewport } : {}),
        timeoutMs: this.#timeout(),
      });
      return { instance, env, task };
    } catch (error) {
      await instance?.destroy().catch((error) => logFailure("destroy the instance", error));
      // A bare URL that does not load is the caller's input, not our failure.
      const timedOut = error instanceof EnvError && error.code === "timeout";
      if (
        spec.url !== undefined && browser.connected && !timedOut && !(error instanceof HttpError)
      ) {
        throw new HttpError(
          422,
          "url-unreachable",
          `URL "${spec.url}" did not load: ${messageOf(error)}`,
        );
      }
      throw refusal(error);
    }
  }

  async #started(
    session: Session,
    observation: EnvObservation,
  ): Promise<{ body: SessionCreated; state: SessionState }> {
    const mode = session.spec.observation ?? "text";
    session.text = observation.text;
    session.url = observation.url;
    await this.#options.trajectories?.append(session.id, {
      type: "start",
      episode: session.episode,
      task: session.placement?.task?.id ?? null,
      instruction: session.placement?.task?.instruction ?? null,
      url: observation.url,
      observation: observation.text,
    }).catch((error) => logFailure("write the trajectory", error));
    const lease = this.#lease(session);
    const body: SessionCreated = {
      id: session.id,
      observation: observationBody(observation, mode),
      lease,
      task: session.placement?.task ?? null,
      ...(session.group ? { group: session.group } : {}),
    };
    return { body, state: stateOf(session, lease) };
  }

  async #step(session: Session, action: unknown): Promise<StepResponse> {
    if (session.done) {
      throw new HttpError(
        409,
        "episode-done",
        `The episode of session "${session.id}" is over: reset it`,
      );
    }
    const started = performance.now();
    const mode = session.spec.observation ?? "text";
    const stepIndex = session.steps + 1;
    const elapsed = () => Math.round((performance.now() - started) * 10) / 10;
    let response: StepResponse;
    try {
      // The instance is checked beside the step: a site that died under the
      // step makes it an env_error, whatever the page showed.
      const alive = session.instance?.check().then(() => undefined, (error) => error);
      const step = await session.env.step(action, { timeoutMs: this.#timeout() });
      const lost = await alive;
      if (lost !== undefined) {
        throw new EnvError("sandbox-lost", `The site's instance is gone: ${messageOf(lost)}`, {
          cause: lost,
        });
      }
      session.steps = stepIndex;
      const truncated = step.truncated ||
        (!step.done && session.spec.max_steps !== undefined && stepIndex >= session.spec.max_steps);
      const ended = step.done || truncated;
      const verdict = ended && session.env.task ? await session.env.verify() : undefined;
      session.done = ended;
      const answer = step.result.answer;
      response = {
        status: "ok",
        observation: observationBody(step.observation, mode),
        reward: verdict?.reward ?? 0,
        done: step.done,
        truncated,
        info: {
          step: stepIndex,
          elapsed_ms: elapsed(),
          ...(step.result.settle ? { settle: { ...step.result.settle } } : {}),
          ...(verdict ? { verdict } : {}),
          ...(answer !== undefined ? { answer } : {}),
        },
      };
      session.text = step.observation.text;
      session.url = step.observation.url;
    } catch (error) {
      response = await this.#failedStep(session, error, stepIndex, mode, elapsed);
    }
    this.#options.metrics.step(response.status, elapsed() / 1000);
    if (response.info.error) this.#options.metrics.error(response.info.error.code);
    await this.#record(session, action, response);
    return response;
  }

  async #failedStep(
    session: Session,
    error: unknown,
    stepIndex: number,
    mode: ObservationMode,
    elapsed: () => number,
  ): Promise<StepResponse> {
    if (error instanceof HttpError) throw error;
    if (error instanceof ActionError || error instanceof TypeError) {
      // The agent's failure: the episode goes on, and the agent sees the page.
      session.steps = stepIndex;
      const code = error instanceof ActionError ? error.code : "invalid-action";
      const message = error.message;
      const truncated = session.spec.max_steps !== undefined && stepIndex >= session.spec.max_steps;
      try {
        const observation = await session.env.observe();
        session.text = observation.text;
        session.url = observation.url;
        const verdict = truncated && session.env.task ? await session.env.verify() : undefined;
        session.done = truncated;
        return {
          status: "action_error",
          observation: observationBody(observation, mode),
          reward: verdict?.reward ?? 0,
          done: false,
          truncated,
          info: {
            step: stepIndex,
            elapsed_ms: elapsed(),
            error: { code, message },
            ...(verdict ? { verdict } : {}),
          },
        };
      } catch (observeError) {
        error = observeError;
      }
    }
    const envError = asEnvError(error);
    return {
      status: envError.code === "timeout" ? "timeout" : "env_error",
      observation: null,
      done: false,
      truncated: false,
      info: {
        step: session.steps,
        elapsed_ms: elapsed(),
        error: { code: envError.code, message: envError.message },
      },
    };
  }

  async #record(session: Session, action: unknown, response: StepResponse): Promise<void> {
    if (response.reward !== undefined && (response.done || response.truncated)) {
      session.rewards.push(response.reward);
    }
    const entry: HistoryEntry = {
      step: response.info.step,
      action,
      status: response.status,
      ...(response.reward !== undefined ? { reward: response.reward } : {}),
      ...(response.info.error ? { error: response.info.error.message } : {}),
    };
    session.history.push(entry);
    if (session.history.length > HISTORY_SIZE) session.history.shift();
    const log = this.#options.trajectories;
    if (log) {
      let screenshot: string | undefined;
      if (session.spec.record_screenshots && response.status !== "env_error" && !session.done) {
        const png = await shoot(session.env, false).catch(() => undefined);
        if (png) {
          screenshot = await log.screenshot(
            `${session.id}-${session.episode}-${response.info.step}.png`,
            png,
          ).catch(() => undefined);
        }
      }
      await log.append(session.id, {
        type: "step",
        episode: session.episode,
        step: response.info.step,
        action,
        status: response.status,
        ...(response.reward !== undefined ? { reward: response.reward } : {}),
        done: response.done,
        truncated: response.truncated,
        observation: response.observation?.text ?? null,
        url: response.observation?.url ?? session.url,
        elapsed_ms: response.info.elapsed_ms,
        ...(response.info.settle ? { settle: response.info.settle } : {}),
        ...(response.info.error ? { error: response.info.error } : {}),
        ...(response.info.verdict ? { verdict: response.info.verdict } : {}),
        // What the verifier judged, for `deno task export --reverify`.
        ...(response.info.verdict && session.task?.judged ? { judged: session.task.judged } : {}),
        ...(screenshot ? { screenshot } : {}),
      }).catch((error) => logFailure("write the trajectory", error));
    }
    this.#emit({
      type: "step",
      session: session.id,
      state: stateOf(session, this.#lease(session)),
      text: session.text,
      step: {
        action,
        status: response.status,
        ...(response.reward !== undefined ? { reward: response.reward } : {}),
      },
    });
  }

  async #reset(session: Session, request: ResetRequest): Promise<SessionCreated> {
    const changed = request.seed !== undefined || request.task !== undefined;
    const browserGone = !session.browser.connected;
    let observation: EnvObservation | undefined;
    if (!changed && !browserGone) {
      try {
        await session.instance?.check();
        observation = await session.env.reset({ timeoutMs: this.#timeout() });
      } catch (error) {
        // Recover by rebuilding the session's instance and env below.
        logFailure("reset the env in place", error);
      }
    }
    if (!observation) {
      const spec: SessionSpec = { ...session.spec };
      if (request.task !== undefined) {
        delete spec.site, delete spec.template, delete spec.url;
        spec.task = request.task;
      }
      if (request.seed !== undefined) {
        if (spec.task !== undefined) {
          const [site, template] = spec.task.split("/");
          delete spec.task;
          spec.site = site ?? "";
          if (template !== undefined) spec.template = template;
        }
        spec.seed = request.seed;
      }
      const placement = this.#place(spec);
      const browser = await this.#browser();
      const built = await this.#build(spec, placement, browser);
      await session.env.close().catch((error) => logFailure("close the env", error));
      await session.instance?.destroy().catch((error) => logFailure("destroy the instance", error));
      Object.assign(session, { ...built, browser, spec, placement });
      observation = await this.#envCall(() => built.env.observe());
    }
    session.episode++;
    session.steps = 0;
    session.done = false;
    session.cache.clear();
    const created = await this.#started(session, observation);
    this.#emit({ type: "reset", session: session.id, state: created.state, text: session.text });
    return created.body;
  }

  async #browser(): Promise<Browser> {
    try {
      return await this.#options.browser();
    } catch (error) {
      throw new HttpError(503, "browser-gone", `No browser: ${messageOf(error)}`, {
        "Retry-After": "5",
      });
    }
  }

  /** Runs an env call; infrastructure failures become 503 refusals. */
  async #envCall<T>(run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (error) {
      throw refusal(error);
    }
  }

  #queue<T>(session: Session, run: () => Promise<T>): Promise<T> {
    session.busy++;
    session.lastUsed = Date.now();
    const result = session.queue.then(() => {
      if (session.closed) {
        throw new HttpError(410, "expired", `Session "${session.id}" is closed`);
      }
      return run();
    });
    session.queue = result.catch(() => {}).finally(() => {
      session.busy--;
      session.lastUsed = Date.now();
    });
    return result;
  }

  #get(id: string): Session {
    const session = this.#sessions.get(id);
    if (session) {
      session.lastUsed = Date.now();
      return session;
    }
    const reason = this.#expired.get(id);
    if (reason !== undefined) {
      throw new HttpError(410, "expired", `Session "${id}" expired: ${reason}`);
    }
    throw new HttpError(404, "not-found", `No session "${id}"`);
  }

  #expiredStep(id: string): StepResponse {
    const reason = this.#expired.get(id);
    if (reason === undefined) throw new HttpError(404, "not-found", `No session "${id}"`);
    this.#options.metrics.step("expired", 0);
    return {
      status: "expired",
      observation: null,
      done: true,
      truncated: true,
      info: {
        step: 0,
        elapsed_ms: 0,
        error: { code: "expired", message: `Session "${id}" expired: ${reason}` },
      },
    };
  }

  #tombstone(id: string, reason: string): void {
    this.#expired.set(id, reason);
    if (this.#expired.size > TOMBSTONES) this.#expired.delete(this.#expired.keys().next().value!);
  }

  #lease(session: Session): LeaseBody {
    const idle = this.#idle();
    const hard = session.createdAt + this.#lifetime();
    return {
      expires_at: new Date(Math.min(session.lastUsed + idle, hard)).toISOString(),
      idle_timeout_s: idle / 1000,
      hard_expires_at: new Date(hard).toISOString(),
    };
  }

  #reap(): void {
    const now = Date.now();
    for (const session of this.#sessions.values()) {
      // A session is never closed under a running operation; it goes when that ends.
      if (session.busy > 0) continue;
      if (now - session.createdAt > this.#lifetime()) {
        this.close(session.id, "lifetime").catch((error) => logFailure("reap a session", error));
      } else if (now - session.lastUsed > this.#idle()) {
        this.close(session.id, "idle").catch((error) => logFailure("reap a session", error));
      }
    }
  }

  #emit(event: SessionEvent): void {
    for (const listener of this.#listeners) {
      try {
        listener(event);
      } catch (error) {
        logFailure("notify a session listener", error);
      }
    }
  }

  #idle(): number {
    return this.#options.idleTimeoutMs ?? 300_000;
  }

  #lifetime(): number {
    return this.#options.lifetimeMs ?? 3_600_000;
  }

  #timeout(): number {
    return this.#options.stepTimeoutMs ?? 30_000;
  }
}

/**
 * Turns an env observation into the protocol's shape.
 *
 * @param observation the env's observation
 * @param mode what to include
 * @returns the observation body
 */
export function observationBody(
  observation: EnvObservation,
  mode: ObservationMode,
): ObservationBody {
  return {
    text: observation.text,
    url: observation.url,
    title: observation.title,
    tabs: observation.tabs,
    ...(mode === "json"
      ? { elements: observation.elements.map((element) => ({ ...element })) }
      : {}),
    ...(mode !== "text" ? { diff: observation.diff } : {}),
    ...(observation.dialog ? { dialog: { ...observation.dialog } } : {}),
  };
}

function stateOf(session: Session, lease: LeaseBody): SessionState {
  const task: TaskBody | null = session.placement?.task ?? null;
  return {
    id: session.id,
    task,
    step: session.steps,
    url: session.url,
    elapsed_s: Math.round((Date.now() - session.createdAt) / 100) / 10,
    created_at: new Date(session.createdAt).toISOString(),
    done: session.done,
    rewards: session.rewards,
    lease,
    ...(session.group ? { group: session.group } : {}),
  };
}

function refusal(error: unknown): Error {
  if (error instanceof HttpError) return error;
  if (error instanceof TypeError || error instanceof ActionError) {
    return new HttpError(400, "bad-request", error.message);
  }
  const envError = asEnvError(error);
  return new HttpError(503, envError.code, envError.message, { "Retry-After": "1" });
}

/**
 * The infrastructure error behind a failure that is not the agent's: the
 * env's own `EnvError`, or anything else as `internal`.
 */
function asEnvError(error: unknown): EnvError {
  if (error instanceof EnvError) return error;
  return new EnvError("internal", messageOf(error), { cause: error });
}

/** A PNG of the env's active tab, with the id boxes drawn when `marks`. */
function shoot(env: Env, marks: boolean): Promise<Uint8Array> {
  return env.withPage(async (page) => {
    if (marks) return (await env.observer.setOfMarks(page)).png;
    const shot = await page.session.send("Page.captureScreenshot", { format: "png" });
    return Uint8Array.from(atob(shot.data), (c) => c.charCodeAt(0));
  });
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function randomId(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(8));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}
