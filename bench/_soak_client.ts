/**
 * The soak's client side: every request any actor sends goes through
 * {@linkcode Ledger.call}, which times it and notes what came back, so each
 * figure of the report is computed from what a client actually observed.
 *
 * @module
 */
import { xorshift32 } from "../fixtures/sites/kit/xorshift.ts";

/** What came of a request. */
export type Outcome = "answered" | "5xx" | "dropped" | "no-answer" | "abandoned";

/** One step result a client saw, for the trajectory check. */
export interface SeenStep {
  /** `info.step` of the result. */
  step: number;
  status: string;
  reward?: number;
  done: boolean;
  /** The actor that sent it (`solver`, `hostile:…`). */
  actor: string;
}

/** One request as a client saw it. */
export interface Call {
  actor: string;
  kind: string;
  /** Whether this is a step the server must answer (HTTP, batch item or WebSocket). */
  step: boolean;
  session?: string;
  /** Epoch ms. */
  start: number;
  end: number;
  http?: number;
  outcome: Outcome;
  stepStatus?: string;
  error?: string;
}

/** What {@linkcode Ledger.call} asks for. */
export interface CallSpec {
  actor: string;
  kind: string;
  method: "GET" | "POST" | "DELETE";
  path: string;
  body?: string;
  step?: boolean;
  session?: string;
  /** How long a client waits for an answer before it counts as none, ms. */
  timeoutMs?: number;
}

/** A step's response body, as far as the soak reads it. */
export interface StepBody {
  status: string;
  reward?: number;
  done: boolean;
  truncated: boolean;
  observation: { text: string; url: string; elements?: unknown[] } | null;
  info: { step: number; error?: { code: string; message: string } };
}

/** A rule broken by a step's result: a reward on an infrastructure failure. */
export interface RewardViolation {
  session: string;
  actor: string;
  why: string;
}

/** Every request of the run, and every step result per session. */
export class Ledger {
  readonly base: string;
  readonly calls: Call[] = [];
  /** Step results seen, per session, in the order they arrived. */
  readonly seen = new Map<string, SeenStep[]>();
  /** Sessions that failed on our side and have not been reset since. */
  readonly tainted = new Set<string>();
  readonly violations: RewardViolation[] = [];
  /** Sessions whose trajectories are checked, with who opened them. */
  readonly sessions = new Map<string, { actor: string; ws: boolean }>();
  /** When each session's current episode started (its create's or reset's answer), epoch ms. */
  readonly episodeStart = new Map<string, number>();
  /** When the browser was killed, epoch ms: every live episode ended there. */
  readonly browserKills: number[] = [];
  /** Hostile sessions that earned a reward above 0. */
  readonly hostileRewards: { session: string; kind: string }[] = [];

  /** The connections every call goes over, so that the soak can close them all before it measures idle. */
  #client: Deno.HttpClient = Deno.createHttpClient({});

  constructor(base: string) {
    this.base = base;
  }

  /**
   * Closes the kept-alive connections of the calls so far (the server's
   * descriptors for them go too); later calls open new ones.
   */
  closeConnections(): void {
    this.#client.close();
    this.#client = Deno.createHttpClient({});
  }

  /**
   * Sends a request and notes the result.
   *
   * @param spec the request
   * @returns the HTTP status (0 for none), the parsed JSON body (or undefined) and the record
   */
  async call(spec: CallSpec): Promise<{ status: number; body: unknown; record: Call }> {
    const start = Date.now();
    const record: Call = {
      actor: spec.actor,
      kind: spec.kind,
      step: spec.step ?? false,
      start,
      end: start,
      outcome: "answered",
      ...(spec.session ? { session: spec.session } : {}),
    };
    this.calls.push(record);
    try {
      const response = await fetch(this.base + spec.path, {
        client: this.#client,
        method: spec.method,
        ...(spec.body !== undefined
          ? { body: spec.body, headers: { "content-type": "application/json" } }
          : {}),
        signal: AbortSignal.timeout(spec.timeoutMs ?? 120_000),
      });
      const text = await response.text();
      record.end = Date.now();
      record.http = response.status;
      if (response.status >= 500) record.outcome = "5xx";
      let body: unknown;
      try {
        body = JSON.parse(text);
      } catch {
        // Not JSON (`/metrics`): the text itself.
        body = text === "" ? undefined : text;
      }
      if (response.status >= 500) record.error = text.slice(0, 200);
      return { status: response.status, body, record };
    } catch (error) {
      record.end = Date.now();
      const name = error instanceof Error ? error.name : "";
      record.outcome = name === "TimeoutError" ? "no-answer" : "dropped";
      record.error = String(error).slice(0, 200);
      return { status: 0, body: undefined, record };
    }
  }

  /** Notes that a session was opened, so its trajectory is checked. */
  opened(session: string, actor: string, ws = false): void {
    if (!this.sessions.has(session)) this.sessions.set(session, { actor, ws });
    this.tainted.delete(session);
    this.episodeStart.set(session, Date.now());
  }

  /**
   * Notes a step result a client got: for the trajectory check and the
   * rules on rewards (none with a failure of ours, none after one until a reset).
   */
  stepSeen(session: string, actor: string, body: StepBody, sentAt?: number): void {
    const list = this.seen.get(session) ?? [];
    list.push({
      step: body.info.step,
      status: body.status,
      done: body.done,
      actor,
      ...(body.reward !== undefined ? { reward: body.reward } : {}),
    });
    this.seen.set(session, list);
    const ours = body.status !== "ok" && body.status !== "action_error";
    if (ours && body.reward !== undefined) {
      this.violations.push({ session, actor, why: `reward ${body.reward} with ${body.status}` });
    }
    if (!ours && (body.reward ?? 0) > 0 && this.tainted.has(session)) {
      this.violations.push({
        session,
        actor,
        why: `reward ${body.reward} after a failure of ours, before any reset`,
      });
    }
    // A browser killed after the episode started and before this step was
    // sent: the episode's browser state is gone, so no step of it may earn.
    const began = this.episodeStart.get(session);
    if (
      !ours && (body.reward ?? 0) > 0 && sentAt !== undefined && began !== undefined &&
      this.browserKills.some((t) => t > began && t < sentAt)
    ) {
      this.violations.push({ session, actor, why: `reward ${body.reward} after a browser kill` });
    }
    if (ours) this.tainted.add(session);
    if (actor.startsWith("hostile") && (body.reward ?? 0) > 0) {
      this.hostileRewards.push({ session, kind: actor });
    }
  }

  /**
   * A step over HTTP: the call, and the result noted when there is one.
   *
   * @returns the step's body, or undefined when it did not answer one
   */
  async step(
    actor: string,
    session: string,
    action: unknown,
    raw?: string,
    kind = "step",
  ): Promise<StepBody | undefined> {
    const { status, body, record } = await this.call({
      actor,
      kind,
      method: "POST",
      path: `/v1/sessions/${encodeURIComponent(session)}/step`,
      body: raw ?? JSON.stringify({ action }),
      step: true,
      session,
    });
    if (status === 200 && isStep(body)) {
      record.stepStatus = body.status;
      this.stepSeen(session, actor, body, record.start);
      return body;
    }
    return undefined;
  }
}

/**
 * Whether a body is a step result.
 *
 * @param body a parsed body
 * @returns true for a step result
 */
export function isStep(body: unknown): body is StepBody {
  return typeof body === "object" && body !== null && "status" in body && "info" in body &&
    typeof (body as { info: unknown }).info === "object";
}

/** A seeded xorshift generator in [0, 1). */
export function random(seed: number): () => number {
  const next = xorshift32(seed);
  return () => next() / 2 ** 32;
}

/**
 * The value at a percentile (nearest rank).
 *
 * @param values the samples
 * @param p the percentile, 0-100
 * @returns the value, NaN for no samples
 */
export function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? NaN;
}
