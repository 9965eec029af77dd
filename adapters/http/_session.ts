/**
 * The record of one session and its bookkeeping: the queue its operations
 * run on one at a time, the cache of retried steps, the rewards and recent
 * history, and the counters a reset starts again.
 *
 * @module
 */
import type { Browser, Env, Observation } from "../../mod.ts";
import { logFailure, settled } from "../../engine/log.ts";
import type { Instance } from "../../sandboxes/mod.ts";
import type { Placement, ServedTask } from "./catalog.ts";
import { HttpError } from "./http_error.ts";
import type { SessionSpec, StepResponse } from "./protocol.ts";
import { marksOf, type ScreenshotMarks } from "./_marks.ts";

/** One step as the dashboard's history shows it. */
export interface HistoryEntry {
  /** The step's index in its episode. */
  step: number;
  /** The action taken. */
  action: unknown;
  /** The step's status. */
  status: string;
  /** The step's reward, when it has one. */
  reward?: number;
  /** The error's message, when it failed. */
  error?: string;
}

/**
 * Where a session is in its life:
 *
 * - `opening`: built, its first observation not yet taken;
 * - `live`: its episode runs;
 * - `failed`: its last step failed on our side (`env_error`, `timeout`);
 *   the episode goes on, and a step that succeeds makes it `live` again;
 * - `done`: its episode ended; a reset starts the next one (`live`);
 * - `expired`: reaped, idle or past its lifetime; final;
 * - `closed`: closed by its client, its group or the server; final.
 */
export type SessionPhase = "opening" | "live" | "failed" | "done" | "expired" | "closed";

/**
 * The phases each phase may move to. A final phase moves nowhere, and a
 * move asked of it is ignored: a step that finishes after its session
 * closed leaves the session closed.
 */
const NEXT: { readonly [P in SessionPhase]: readonly SessionPhase[] } = {
  opening: ["live", "closed", "expired"],
  live: ["live", "failed", "done", "closed", "expired"],
  failed: ["live", "failed", "done", "closed", "expired"],
  done: ["live", "closed", "expired"],
  expired: [],
  closed: [],
};

/**
 * A session: its env, its instance and its counters. Every field is
 * readonly: only this module's functions change a session.
 */
export interface Session {
  /** The session's id. */
  readonly id: string;
  /** The group it belongs to, if any. */
  readonly group: string | undefined;
  /** What it runs. */
  readonly spec: SessionSpec;
  /** Where its task or site came from; `null` for a bare URL. */
  readonly placement: Placement | null;
  /** The sandbox instance behind it; none for a bare URL. */
  readonly instance: Instance | undefined;
  /** The env it steps. */
  readonly env: Env;
  /** The task bound to the instance, if any. */
  readonly task: ServedTask | undefined;
  /** The browser its context lives in. */
  readonly browser: Browser;
  /** Where it is in its life. */
  readonly phase: SessionPhase;
  /** The active tab's URL as last observed. */
  readonly url: string;
  /** When it opened (epoch milliseconds). */
  readonly createdAt: number;
  /** When it was last used (epoch milliseconds). */
  readonly lastUsed: number;
  /** How many operations are queued or running on it. */
  readonly busy: number;
  /** How many connections hold it open (a WebSocket); never reaped for idling while held. */
  readonly attached: number;
  /** The episode's index, from 0. */
  readonly episode: number;
  /** The steps taken in the episode. */
  readonly steps: number;
  /** Whether the episode ended (`phase` is `done`). */
  readonly done: boolean;
  /** Whether it was closed or expired. */
  readonly closed: boolean;
  /** The rewards of the episodes that ended. */
  readonly rewards: readonly number[];
  /** The last observation text. */
  readonly text: string;
  /**
   * The element marks of the last observation, for the screenshot the
   * trajectory records after a step; none before the first.
   */
  readonly marks: ScreenshotMarks | undefined;
  /** The recent steps, oldest first. */
  readonly history: readonly HistoryEntry[];
  /** The results of steps by request id, for retries. */
  readonly cache: ReadonlyMap<string, Promise<StepResponse>>;
  /** The end of the last queued operation. */
  readonly queue: Promise<unknown>;
}

/** What a session is opened with; the rest starts fresh. */
export type SessionParts = Pick<
  Session,
  "group" | "spec" | "placement" | "instance" | "env" | "task" | "browser"
>;

/** What a session runs on: what a rebuild replaces. */
export type SessionRuntime = Pick<Session, "placement" | "browser" | "instance" | "env" | "task">;

/** The record as this module sees it: the same object, writable. */
type Writable =
  & {
    -readonly [K in Exclude<keyof Session, "done" | "closed" | "rewards" | "history" | "cache">]:
      Session[K];
  }
  & {
    readonly done: boolean;
    readonly closed: boolean;
    rewards: number[];
    history: HistoryEntry[];
    cache: Map<string, Promise<StepResponse>>;
  };

/** The writable record behind a session; only this module calls it. */
function record(session: Session): Writable {
  return session as Writable;
}

const CACHE_SIZE = 32;
const HISTORY_SIZE = 200;

/**
 * A new session record, with a fresh id, at its first episode, `opening`.
 *
 * @param parts what it runs and where
 * @returns the record
 */
export function newSession(parts: SessionParts): Session {
  const now = Date.now();
  const session: Writable = {
    id: `s-${randomId()}`,
    ...parts,
    phase: "opening",
    url: "",
    createdAt: now,
    lastUsed: now,
    busy: 0,
    attached: 0,
    episode: 0,
    steps: 0,
    get done() {
      return session.phase === "done";
    },
    get closed() {
      return session.phase === "closed" || session.phase === "expired";
    },
    rewards: [],
    text: "",
    marks: undefined,
    history: [],
    cache: new Map(),
    queue: Promise.resolve(),
  };
  return session;
}

/**
 * Moves a session to another phase; a final phase stays as it is.
 *
 * @param session the session
 * @param to the phase
 * @throws {Error} for a move its phase does not allow (our bug)
 */
function moveTo(session: Writable, to: SessionPhase): void {
  const allowed = NEXT[session.phase];
  if (allowed.length === 0) return;
  if (!allowed.includes(to)) {
    throw new Error(`Session "${session.id}" cannot go from ${session.phase} to ${to}`);
  }
  session.phase = to;
}

/**
 * Notes that a session opened: its first observation was taken and it is
 * listed; `opening` becomes `live`.
 *
 * @param session the session
 */
export function opened(session: Session): void {
  moveTo(record(session), "live");
}

/**
 * Closes a session's record: `expired` when the reaper closes it, else
 * `closed`. Its queued operations are refused from now on.
 *
 * @param session the session
 * @param expired whether it was reaped (idle, or past its lifetime)
 * @returns whether it was open
 */
export function closed(session: Session, expired: boolean): boolean {
  if (session.closed) return false;
  moveTo(record(session), expired ? "expired" : "closed");
  return true;
}

/**
 * Notes a use of the session now (its idle time counts from here).
 *
 * @param session the session
 */
export function touch(session: Session): void {
  record(session).lastUsed = Date.now();
}

/**
 * Holds a session open for a connection (the WebSocket): it is not reaped
 * for idling while held, and its idle time counts from the release.
 *
 * @param session the session
 * @returns the release, to call once when the connection ends
 */
export function hold(session: Session): () => void {
  const held = record(session);
  held.attached++;
  let released = false;
  return () => {
    if (released) return;
    released = true;
    held.attached--;
    held.lastUsed = Date.now();
  };
}

/**
 * Notes what the active tab shows now.
 *
 * @param session the session
 * @param observation its URL, and its text when the whole page was
 *   observed; its elements and scroll state give the marks of the next screenshot
 */
export function observed(
  session: Session,
  observation: { url: string; text?: string } & Partial<Pick<Observation, "elements" | "scroll">>,
): void {
  const noted = record(session);
  noted.url = observation.url;
  if (observation.text !== undefined) noted.text = observation.text;
  if (observation.elements !== undefined && observation.scroll !== undefined) {
    noted.marks = marksOf({ elements: observation.elements, scroll: observation.scroll });
  }
}

/**
 * Notes a step the env took (the agent's action, or its action error): the
 * episode's step count, and `done` when it ended the episode.
 *
 * @param session the session
 * @param steps the steps taken in the episode, this one included
 * @param ended whether the episode ended
 */
export function stepped(session: Session, steps: number, ended: boolean): void {
  const noted = record(session);
  noted.steps = steps;
  moveTo(noted, ended ? "done" : "live");
}

/**
 * Notes a step that failed on our side: `failed`, the episode goes on.
 *
 * @param session the session
 */
export function stepFailed(session: Session): void {
  moveTo(record(session), "failed");
}

/**
 * Notes a reset in place that changed only the spec's own counts.
 *
 * @param session the session
 * @param spec the new spec
 */
export function respecified(session: Session, spec: SessionSpec): void {
  record(session).spec = spec;
}

/**
 * Puts a session on what a rebuild made (a new instance and env).
 *
 * @param session the session
 * @param runtime the new placement, browser, instance, env and task
 * @param spec the spec they were built from
 */
export function rebuilt(session: Session, runtime: SessionRuntime, spec: SessionSpec): void {
  const { placement, browser, instance, env, task } = runtime;
  Object.assign(record(session), { placement, browser, instance, env, task, spec });
}

/**
 * Runs an operation after the session's earlier ones; it is refused once
 * the session is closed. The session counts as used while it waits.
 *
 * @param session the session
 * @param run the operation
 * @returns what the operation returns
 * @throws {HttpError} 410 when the session closed before its turn or while
 *   the operation ran (its env closed under it: the caller's close, the
 *   reaper's or the server's, never an infrastructure failure to retry)
 */
export function enqueue<T>(session: Session, run: () => Promise<T>): Promise<T> {
  const queued = record(session);
  queued.busy++;
  queued.lastUsed = Date.now();
  const refused = () => new HttpError(410, "expired", `Session "${queued.id}" is closed`);
  const result = queued.queue.then(async () => {
    if (queued.closed) throw refused();
    try {
      return await run();
    } catch (error) {
      if (queued.closed) throw refused();
      throw error;
    }
  });
  // The tail: what `run` throws is the caller's, through `result`.
  queued.queue = settled(result).finally(() => {
    queued.busy--;
    queued.lastUsed = Date.now();
  });
  return result;
}

/**
 * Runs a step once per request id: a retry gets the first result, a failed
 * one may be retried, and only the latest ids are kept.
 *
 * @param session the session whose retries are kept
 * @param key the request id, if any
 * @param run takes the step
 * @returns the step's result
 */
export function oncePerRequest(
  session: Session,
  key: string | undefined,
  run: () => Promise<StepResponse>,
): Promise<StepResponse> {
  const cache = record(session).cache;
  const cached = key === undefined ? undefined : cache.get(key);
  if (cached) return cached;
  const result = run();
  if (key !== undefined) {
    cache.set(key, result);
    result.catch(() => cache.delete(key));
    if (cache.size > CACHE_SIZE) cache.delete(cache.keys().next().value!);
  }
  return result;
}

/**
 * Notes a step in the session's rewards (when it ended the episode) and
 * history.
 *
 * @param session the session
 * @param action the action taken
 * @param response the step's result
 */
export function noteStep(session: Session, action: unknown, response: StepResponse): void {
  const noted = record(session);
  if (response.reward !== undefined && (response.done || response.truncated)) {
    noted.rewards.push(response.reward);
  }
  const entry: HistoryEntry = {
    step: response.info.step,
    action,
    status: response.status,
    ...(response.reward !== undefined ? { reward: response.reward } : {}),
    ...(response.info.error ? { error: response.info.error.message } : {}),
  };
  noted.history.push(entry);
  if (noted.history.length > HISTORY_SIZE) noted.history.shift();
}

/**
 * Starts the session's next episode: `live`, no steps taken, no cached
 * retries.
 *
 * @param session the session
 */
export function newEpisode(session: Session): void {
  const next = record(session);
  next.episode++;
  next.steps = 0;
  moveTo(next, "live");
  next.cache.clear();
}

/**
 * Gives a fork its parent's episode: the episode index, the step count, the
 * phase and the recent history (the trajectory prefix the dashboard shows).
 * Rewards of earlier episodes and cached retries stay the parent's.
 *
 * @param fork the new session, `opening`
 * @param parent the session it was forked from
 */
export function forkedFrom(fork: Session, parent: Session): void {
  const child = record(fork);
  child.episode = parent.episode;
  child.steps = parent.steps;
  child.history = [...parent.history];
  moveTo(child, "live");
  if (parent.phase === "failed") moveTo(child, "failed");
}

/**
 * Closes a session's env and destroys its instance; failures are logged,
 * never thrown.
 *
 * @param session the session
 */
export async function tearDown(session: Pick<Session, "env" | "instance">): Promise<void> {
  await session.env.close().catch((error) => logFailure("close the env", error));
  await session.instance?.destroy().catch((error) => logFailure("destroy the instance", error));
}

/** 16 random hex digits, for session and group ids. */
export function randomId(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(8));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}
