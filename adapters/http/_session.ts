/**
 * The record of one session and its bookkeeping: the queue its operations
 * run on one at a time, the cache of retried steps, the rewards and recent
 * history, and the counters a reset starts again.
 *
 * @module
 */
import type { Browser, Env } from "../../mod.ts";
import { logFailure, settled } from "../../engine/log.ts";
import type { Instance } from "../../sandboxes/mod.ts";
import type { Placement, ServedTask } from "./catalog.ts";
import { HttpError } from "./http_error.ts";
import type { SessionSpec, StepResponse } from "./protocol.ts";

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

/** A live session: its env, its instance and its counters. */
export interface Session {
  /** The session's id. */
  id: string;
  /** The group it belongs to, if any. */
  group: string | undefined;
  /** What it runs. */
  spec: SessionSpec;
  /** Where its task or site came from; `null` for a bare URL. */
  placement: Placement | null;
  /** The sandbox instance behind it; none for a bare URL. */
  instance: Instance | undefined;
  /** The env it steps. */
  env: Env;
  /** The task bound to the instance, if any. */
  task: ServedTask | undefined;
  /** The browser its context lives in. */
  browser: Browser;
  /** The active tab's URL as last observed. */
  url: string;
  /** When it opened (epoch milliseconds). */
  createdAt: number;
  /** When it was last used (epoch milliseconds). */
  lastUsed: number;
  /** How many operations are queued or running on it. */
  busy: number;
  /** How many connections hold it open (a WebSocket); never reaped for idling while held. */
  attached: number;
  /** The episode's index, from 0. */
  episode: number;
  /** The steps taken in the episode. */
  steps: number;
  /** Whether the episode ended. */
  done: boolean;
  /** The rewards of the episodes that ended. */
  rewards: number[];
  /** The last observation text. */
  text: string;
  /** The recent steps, oldest first. */
  history: HistoryEntry[];
  /** The results of steps by request id, for retries. */
  cache: Map<string, Promise<StepResponse>>;
  /** The end of the last queued operation. */
  queue: Promise<unknown>;
  /** Whether it was closed. */
  closed: boolean;
}

/** What a session is opened with; the rest starts fresh. */
export type SessionParts = Pick<
  Session,
  "group" | "spec" | "placement" | "instance" | "env" | "task" | "browser"
>;

const CACHE_SIZE = 32;
const HISTORY_SIZE = 200;

/**
 * A new session record, with a fresh id, at its first episode.
 *
 * @param parts what it runs and where
 * @returns the record
 */
export function newSession(parts: SessionParts): Session {
  const now = Date.now();
  return {
    id: `s-${randomId()}`,
    ...parts,
    url: "",
    createdAt: now,
    lastUsed: now,
    busy: 0,
    attached: 0,
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
}

/**
 * Runs an operation after the session's earlier ones; it is refused once
 * the session is closed. The session counts as used while it waits.
 *
 * @param session the session
 * @param run the operation
 * @returns what the operation returns
 * @throws {HttpError} 410 when the session closed before its turn
 */
export function enqueue<T>(
  session: Pick<Session, "id" | "busy" | "lastUsed" | "queue" | "closed">,
  run: () => Promise<T>,
): Promise<T> {
  session.busy++;
  session.lastUsed = Date.now();
  const result = session.queue.then(() => {
    if (session.closed) {
      throw new HttpError(410, "expired", `Session "${session.id}" is closed`);
    }
    return run();
  });
  // The tail: what `run` throws is the caller's, through `result`.
  session.queue = settled(result).finally(() => {
    session.busy--;
    session.lastUsed = Date.now();
  });
  return result;
}

/**
 * Runs a step once per request id: a retry gets the first result, a failed
 * one may be retried, and only the latest ids are kept.
 *
 * @param cache the session's results by request id
 * @param key the request id, if any
 * @param run takes the step
 * @returns the step's result
 */
export function oncePerRequest(
  cache: Map<string, Promise<StepResponse>>,
  key: string | undefined,
  run: () => Promise<StepResponse>,
): Promise<StepResponse> {
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
export function noteStep(
  session: Pick<Session, "rewards" | "history">,
  action: unknown,
  response: StepResponse,
): void {
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
}

/**
 * Starts the session's next episode: no steps taken, not done, no cached
 * retries.
 *
 * @param session the session
 */
export function newEpisode(
  session: Pick<Session, "episode" | "steps" | "done" | "cache">,
): void {
  session.episode++;
  session.steps = 0;
  session.done = false;
  session.cache.clear();
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
