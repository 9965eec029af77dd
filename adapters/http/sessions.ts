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
 * The manager here holds the live sessions and orders their operations; the
 * parts are beside it: the record, its lifecycle (opening → live →
 * done / failed → expired / closed) and every change to it (`_session.ts`,
 * the only module that writes a session), admission (`_admission.ts`),
 * building from a spec (`_build.ts`), a step (`_step.ts`), leases and
 * tombstones (`_expiry.ts`), trajectories (`_recorder.ts`), dashboard
 * events (`_events.ts`), response bodies (`_bodies.ts`) and refusals
 * (`_failures.ts`).
 *
 * @module
 */
import type { EnvObservation } from "../../mod.ts";
import { logFailure } from "../../engine/log.ts";
import type { Instance } from "../../sandboxes/mod.ts";
import { HttpError } from "./http_error.ts";
import type {
  ForkCreated,
  GroupCreated,
  ListedTask,
  ObservationBody,
  ObservationMode,
  ResetRequest,
  SessionCreated,
  SessionSpec,
  SessionState,
  StepResponse,
} from "./protocol.ts";
import { createdBody, observationBody, shoot, stateOf } from "./_bodies.ts";
import { build, respec } from "./_build.ts";
import { type SessionEvent, SessionEvents } from "./_events.ts";
import { Expiry } from "./_expiry.ts";
import { envCall } from "./_failures.ts";
import { Recorder } from "./_recorder.ts";
import {
  closed,
  enqueue,
  forkedFrom,
  type HistoryEntry,
  hold,
  newEpisode,
  newSession,
  noteStep,
  observed,
  oncePerRequest,
  opened,
  randomId,
  rebuilt,
  respecified,
  type Session,
  tearDown,
  touch,
} from "./_session.ts";
import type { SessionManagerOptions } from "./_manager_options.ts";
import { admit, storedAction, takeStep } from "./_step.ts";
import { admission } from "./_admission.ts";
import { forkRuntimes } from "./_fork.ts";

export { observationBody } from "./_bodies.ts";

/** The reasons the reaper closes a session for: it expired rather than closed. */
const EXPIRED: ReadonlySet<string> = new Set(["idle", "lifetime"]);
export type { SessionEvent } from "./_events.ts";
export type { SessionManagerOptions } from "./_manager_options.ts";

/**
 * Creates, steps, resets and reaps sessions.
 *
 * @example Create a session and step it
 * ```text
 * const created = await manager.create({ task: "demo/add-note/1" });
 * const result = await manager.step(created.id, { action: { action: "click", id: 3 } });
 * ```
 */
export class SessionManager implements AsyncDisposable {
  #options: SessionManagerOptions;
  #sessions = new Map<string, Session>();
  #expiry: Expiry;
  #recorder: Recorder;
  #events = new SessionEvents();
  #pending = 0;
  #reaper: ReturnType<typeof setInterval>;
  #closing = false;

  /**
   * Creates the manager and starts reaping idle and expired sessions.
   *
   * @param options the browser, sandboxes, catalog and limits
   */
  constructor(options: SessionManagerOptions) {
    this.#options = options;
    this.#expiry = new Expiry(options);
    this.#recorder = new Recorder(options.trajectories);
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
    return this.#events.subscribe(listener);
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
   * Forks a session: `n` new sessions, each on a copy of its site and
   * browser state at this moment, on the same task and seed, with its step
   * count and trajectory prefix. The parent goes on unchanged.
   *
   * @param id the session
   * @param n how many forks, 1 to 16
   * @returns the forks, each with its first observation and lease
   * @throws {HttpError} 404 unknown, 410 expired, 409 after the episode
   *   ended or when the backend cannot fork, 429 past the free capacity,
   *   503 when a copy or the browser fails
   */
  async fork(id: string, n: number): Promise<ForkCreated> {
    const parent = this.#get(id);
    if (this.#closing) throw new HttpError(503, "shutting-down", "The server is shutting down");
    if (this.live + n > this.max) {
      throw new HttpError(
        429,
        "capacity",
        `Cannot fork ${n} session(s): ${this.live} of ${this.max} are live`,
        { "Retry-After": "5" },
      );
    }
    this.#pending += n;
    try {
      const runtimes = await enqueue(parent, () => forkRuntimes(parent, n, this.#timeout()));
      let observations: EnvObservation[];
      try {
        observations = await Promise.all(runtimes.map((r) => envCall(() => r.env.observe())));
        if (this.#closing) {
          throw new HttpError(503, "shutting-down", "The server is shutting down");
        }
      } catch (error) {
        await Promise.all(runtimes.map((r) => tearDown(r)));
        throw error;
      }
      const sessions: SessionCreated[] = [];
      for (const [i, runtime] of runtimes.entries()) {
        const session = newSession({
          group: undefined,
          spec: parent.spec,
          placement: parent.placement,
          browser: parent.browser,
          ...runtime,
        });
        forkedFrom(session, parent);
        const observation = observations[i]!;
        this.#sessions.set(session.id, session);
        this.#options.metrics.created();
        await this.#recorder.fork(parent, session.id);
        sessions.push(await this.#started(session, observation, "created", false));
      }
      return { sessions };
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
    if (this.#expiry.outlived(session) && session.busy === 0) {
      return this.close(id, "lifetime").then(() => this.#expiredStep(id));
    }
    return oncePerRequest(session, request.request_id, () =>
      enqueue(session, async () => {
        const response = await this.#step(session, request.action);
        // A close that cut the step (the env closed under it) answers as a
        // step after the close would: `expired`, not our failure to retry.
        return response.status === "env_error" && session.closed
          ? this.#expiry.expiredStep(id)
          : response;
      }));
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
    return enqueue(session, () => this.#reset(session, request));
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
    return enqueue(session, async () => {
      const chosen = mode ?? session.spec.observation ?? "text";
      const observation = await envCall(() =>
        session.env.observe(chosen === "diff" ? { mode: "diff" } : {})
      );
      // Not its text (a diff lists only changes), but its elements: the page as it is now.
      observed(session, {
        url: observation.url,
        elements: observation.elements,
        scroll: observation.scroll,
      });
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
    return enqueue(session, () => envCall(() => shoot(session.env, marks)));
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
    return enqueue(session, () => {
      if (!session.env.task) {
        throw new HttpError(409, "no-task", `Session "${id}" has no task to verify`);
      }
      return envCall(() => session.env.verify());
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
    return stateOf(this.#get(id), this.#expiry.lease(this.#get(id)));
  }

  /**
   * The trajectory summary the dashboard shows.
   *
   * @param id the session
   * @returns the last observation text and the recent steps
   * @throws {HttpError} 404 unknown, 410 expired
   */
  history(id: string): { text: string; history: readonly HistoryEntry[] } {
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
  catalogTasks(limit = 50): ListedTask[] {
    return this.#options.catalog.list({ limit }).tasks;
  }

  /** Every live session's state. */
  list(): SessionState[] {
    return [...this.#sessions.values()].map((s) => stateOf(s, this.#expiry.lease(s)));
  }

  /**
   * How many live sessions are in each phase, for the dashboard.
   *
   * @returns the counts of `opening`, `live`, `failed` and `done` sessions
   */
  phases(): Partial<Record<"opening" | "live" | "failed" | "done", number>> {
    const counts: Partial<Record<"opening" | "live" | "failed" | "done", number>> = {};
    for (const { phase } of this.#sessions.values()) {
      if (phase === "closed" || phase === "expired") continue;
      counts[phase] = (counts[phase] ?? 0) + 1;
    }
    return counts;
  }

  /**
   * Holds a session open for a connection (the WebSocket): it is not reaped
   * for idling while held, and its idle time counts from the release.
   *
   * @param id the session
   * @returns the release, to call once when the connection ends
   * @throws {HttpError} 404 unknown, 410 expired
   */
  attach(id: string): () => void {
    return hold(this.#get(id));
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
    if (!session || !closed(session, EXPIRED.has(reason))) return false;
    this.#sessions.delete(id);
    this.#expiry.tombstone(id, reason);
    await tearDown(session);
    await this.#recorder.end(id, session.episode, reason);
    this.#events.emit({ type: "closed", session: id });
    return true;
  }

  /** Closes every session and stops reaping. */
  async closeAll(): Promise<void> {
    this.#closing = true;
    clearInterval(this.#reaper);
    await Promise.all([...this.#sessions.keys()].map((id) => this.close(id, "shutdown")));
    await this.#recorder.flush();
    // Wakes the dashboard's streams so they end.
    this.#events.emit({ type: "closed", session: "" });
  }

  /** Calls {@linkcode SessionManager.closeAll}. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.closeAll();
  }

  #admit(n: number): void {
    admission(n, { closing: this.#closing, live: this.live, max: this.max });
  }

  async #open(spec: SessionSpec, group: string | undefined): Promise<SessionCreated> {
    const built = await build(spec, this.#options, this.#timeout());
    const { instance, env } = built;
    const session = newSession({ ...built, group, spec });
    let observation: EnvObservation;
    try {
      observation = await envCall(() => env.observe());
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
    opened(session);
    this.#options.metrics.created();
    return await this.#started(session, observation, "created");
  }

  /** Notes an episode's first observation, records its start and tells the listeners. */
  async #started(
    session: Session,
    observation: EnvObservation,
    type: "created" | "reset",
    record = true,
  ): Promise<SessionCreated> {
    observed(session, observation);
    // A fork's trajectory starts with its parent's episode, copied.
    if (record) await this.#recorder.start(session, observation);
    const lease = this.#expiry.lease(session);
    const body = createdBody(session, observation, lease);
    this.#events.emit({
      type,
      session: session.id,
      state: stateOf(session, lease),
      text: session.text,
    });
    return body;
  }

  async #step(session: Session, raw: unknown): Promise<StepResponse> {
    const started = performance.now();
    const elapsed = () => Math.round((performance.now() - started) * 10) / 10;
    // Parsed before anything runs; only the parsed action (or a refused
    // one's preview) is stored, recorded and sent to the dashboard.
    const admitted = admit(raw);
    const response = await takeStep(session, admitted, this.#timeout(), elapsed);
    // The step ran: its result goes back to the caller whatever its
    // bookkeeping does (every part below logs its own failures; this is the backstop).
    try {
      const action = storedAction(admitted);
      this.#options.metrics.step(response.status, elapsed() / 1000);
      if (response.info.error) this.#options.metrics.error(response.info.error.code);
      noteStep(session, action, response);
      await this.#recorder.step(session, action, response);
      this.#events.emit({
        type: "step",
        session: session.id,
        state: stateOf(session, this.#expiry.lease(session)),
        text: session.text,
        step: {
          action,
          status: response.status,
          ...(response.reward !== undefined ? { reward: response.reward } : {}),
        },
      });
    } catch (error) {
      logFailure(`record step ${response.info.step} of session "${session.id}"`, error, "internal");
    }
    return response;
  }

  async #reset(session: Session, request: ResetRequest): Promise<SessionCreated> {
    // A new seed, task, observation mode or options or viewport needs a new
    // instance or env; max_steps alone is the session's own count.
    const changed = request.seed !== undefined || request.task !== undefined ||
      request.observation !== undefined || request.observation_options !== undefined ||
      request.viewport !== undefined;
    const browserGone = !session.browser.connected;
    const spec = respec(session.spec, request);
    let observation: EnvObservation | undefined;
    if (!changed && !browserGone) {
      try {
        await session.instance?.check();
        observation = await session.env.reset({ timeoutMs: this.#timeout() });
        respecified(session, spec);
      } catch (error) {
        // Recover by rebuilding the session's instance and env below.
        logFailure("reset the env in place", error);
      }
    }
    if (!observation) {
      const built = await build(spec, this.#options, this.#timeout());
      await tearDown(session);
      rebuilt(session, built, spec);
      observation = await envCall(() => built.env.observe());
    }
    newEpisode(session);
    return await this.#started(session, observation, "reset");
  }

  #get(id: string): Session {
    const session = this.#sessions.get(id);
    if (!session) throw this.#expiry.gone(id);
    touch(session);
    return session;
  }

  #expiredStep(id: string): StepResponse {
    const response = this.#expiry.expiredStep(id);
    this.#options.metrics.step("expired", 0);
    return response;
  }

  #reap(): void {
    const now = Date.now();
    for (const session of this.#sessions.values()) {
      const reason = this.#expiry.due(session, now);
      if (reason === undefined) continue;
      this.close(session.id, reason).catch((error) => logFailure("reap a session", error));
    }
  }

  #timeout(): number {
    return this.#options.stepTimeoutMs ?? 30_000;
  }
}
