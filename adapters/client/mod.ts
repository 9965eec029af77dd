/**
 * A TypeScript client of the WebServ rollout server (`deno task serve`),
 * over `fetch` only. Shapes are the server's protocol
 * (`adapters/http/protocol.ts`), as plain types in `./types.ts`.
 *
 * @example Run an episode
 * ```ts ignore
 * import { WebServClient } from "@webserv/webserv/client";
 * const client = new WebServClient("http://127.0.0.1:8800");
 * const session = await client.createSession({ task: "demo/add-note/1" });
 * const result = await client.step(session.id, { action: "stop", answer: "done" });
 * console.log(result.status, result.reward);
 * await client.close(session.id);
 * ```
 *
 * @module
 */
import type {
  Action,
  BatchResponse,
  ForkCreated,
  GroupCreated,
  HealthBody,
  ListedTask,
  ObservationBody,
  ObservationMode,
  ResetRequest,
  SessionCreated,
  SessionSpec,
  SessionState,
  StepResponse,
  TaskPage,
  TaskQuery,
  VerdictBody,
} from "./types.ts";

export type * from "./types.ts";
// The modifier keys an action names, so this entry point's documentation stands alone.
export type { Modifier } from "../../engine/mod.ts";

/** Options of {@linkcode WebServClient}. */
export interface WebServClientOptions {
  /** The server's bearer token. */
  token?: string;
  /**
   * The deadline of one call, retries included, in milliseconds.
   *
   * @default {120000}
   */
  timeoutMs?: number;
  /** Abandons every call when aborted (it rejects with the signal's reason). */
  signal?: AbortSignal;
  /**
   * How many times a call refused with `Retry-After` (429, 503) is tried
   * again after the wait the server names, within the deadline.
   *
   * @default {3}
   */
  retries?: number;
}

/**
 * The server could not be reached, or did not answer within the deadline:
 * a network failure, not a refusal.
 */
export class WebServNetworkError extends Error {
  /** The URL that was requested. */
  readonly url: string;
  /** Whether the deadline passed (rather than the connection failing). */
  readonly timedOut: boolean;

  /**
   * Creates the error.
   *
   * @param url the URL that was requested
   * @param timedOut whether the deadline passed
   * @param cause the underlying failure
   */
  constructor(url: string, timedOut: boolean, cause: unknown) {
    super(
      timedOut
        ? `No answer from ${url} within the deadline`
        : `Cannot reach ${url}: ${cause instanceof Error ? cause.message : String(cause)}`,
      { cause },
    );
    this.name = "WebServNetworkError";
    this.url = url;
    this.timedOut = timedOut;
  }
}

/** The server refused a request: its status, code and message. */
export class WebServError extends Error {
  /** The HTTP status. */
  readonly status: number;
  /** The server's error code, such as `"capacity"`. */
  readonly code: string;
  /** Seconds to wait before retrying, from `Retry-After`. */
  readonly retryAfter: number | undefined;

  /**
   * Creates a refusal.
   *
   * @param status the HTTP status
   * @param code the server's code
   * @param message the server's message
   * @param retryAfter seconds from `Retry-After`
   */
  constructor(status: number, code: string, message: string, retryAfter?: number) {
    super(message);
    this.name = "WebServError";
    this.status = status;
    this.code = code;
    this.retryAfter = retryAfter;
  }
}

/** A client of one rollout server. */
export class WebServClient {
  /** The server's base URL. */
  readonly url: string;
  #token: string | undefined;
  #timeoutMs: number;
  #signal: AbortSignal | undefined;
  #retries: number;

  /**
   * Creates a client of one server.
   *
   * @param url the server's base URL, such as `"http://127.0.0.1:8800"`
   * @param options the bearer token, the deadline of a call, an abort signal, retries
   */
  constructor(url: string, options: WebServClientOptions = {}) {
    this.url = url.replace(/\/+$/, "");
    this.#token = options.token;
    this.#timeoutMs = options.timeoutMs ?? 120_000;
    this.#signal = options.signal;
    this.#retries = options.retries ?? 3;
  }

  /**
   * Opens a session.
   *
   * @param spec a task id, a site with template and seed, or a URL
   * @returns the session, its first observation and lease
   * @throws {WebServError} when the server refuses; {WebServNetworkError} when it cannot be reached
   */
  createSession(spec: SessionSpec): Promise<SessionCreated> {
    return this.#json("POST", "/v1/sessions", spec);
  }

  /**
   * Opens `n` sessions on the same task and seed.
   *
   * @param spec what they run
   * @param n how many
   * @returns the group
   * @throws {WebServError} when the server refuses; {WebServNetworkError} when it cannot be reached
   */
  createGroup(spec: SessionSpec, n: number): Promise<GroupCreated> {
    return this.#json("POST", "/v1/groups", { ...spec, n });
  }

  /**
   * Forks a live session: `n` new sessions on copies of its site and
   * browser state at this moment, on the same task, with its step count.
   *
   * @param id the session
   * @param n how many forks, 1 to 16
   * @returns the forks, each with its first observation and lease
   * @throws {WebServError} when the server refuses (429 past the free capacity, 409 after the
   *   episode ended); {WebServNetworkError} when it cannot be reached
   */
  fork(id: string, n: number): Promise<ForkCreated> {
    return this.#json("POST", `/v1/sessions/${encodeURIComponent(id)}/fork`, { n });
  }

  /**
   * Takes one action.
   *
   * @param id the session
   * @param action the action, such as `{ action: "click", id: 3 }` (the engine's
   *   `Action`; the server validates it: a malformed one is `action_error` `invalid-action`)
   * @param requestId makes a retried step idempotent
   * @returns the result, with its status (`expired` included)
   * @throws {WebServError} when the server refuses; {WebServNetworkError} when it cannot be reached (unknown session, episode over)
   */
  step(id: string, action: Action, requestId?: string): Promise<StepResponse> {
    return this.#json("POST", `/v1/sessions/${encodeURIComponent(id)}/step`, {
      action,
      ...(requestId !== undefined ? { request_id: requestId } : {}),
    }, [410]);
  }

  /**
   * Steps many sessions in one request.
   *
   * @param steps one action per session
   * @returns per-session results
   * @throws {WebServError} when the request itself is refused
   */
  batchStep(
    steps: { session_id: string; action: Action; request_id?: string }[],
  ): Promise<BatchResponse> {
    return this.#json("POST", "/v1/batch/step", { steps });
  }

  /**
   * Starts a new episode.
   *
   * @param id the session
   * @param options a new seed or task
   * @returns the first observation
   * @throws {WebServError} when the server refuses; {WebServNetworkError} when it cannot be reached
   */
  reset(id: string, options: ResetRequest = {}): Promise<SessionCreated> {
    return this.#json("POST", `/v1/sessions/${encodeURIComponent(id)}/reset`, options);
  }

  /**
   * Observes a session.
   *
   * @param id the session
   * @param mode text, json or diff
   * @returns the observation
   * @throws {WebServError} when the server refuses; {WebServNetworkError} when it cannot be reached
   */
  observe(id: string, mode?: ObservationMode): Promise<ObservationBody> {
    const query = mode ? `?mode=${mode}` : "";
    return this.#json("GET", `/v1/sessions/${encodeURIComponent(id)}/observe${query}`);
  }

  /**
   * A PNG of the session's active tab.
   *
   * @param id the session
   * @param marks whether to draw element ids
   * @returns the PNG bytes
   * @throws {WebServError} when the server refuses; {WebServNetworkError} when it cannot be reached
   */
  async screenshot(id: string, marks = false): Promise<Uint8Array> {
    const response = await this.#fetch(
      "GET",
      `/v1/sessions/${encodeURIComponent(id)}/screenshot?marks=${marks}`,
    );
    if (!response.ok) throw await refusal(response);
    return new Uint8Array(await response.arrayBuffer());
  }

  /**
   * Runs the task's verifier.
   *
   * @param id the session
   * @returns the verdict
   * @throws {WebServError} when the server refuses; {WebServNetworkError} when it cannot be reached
   */
  verify(id: string): Promise<VerdictBody> {
    return this.#json("POST", `/v1/sessions/${encodeURIComponent(id)}/verify`, {});
  }

  /**
   * A session's state.
   *
   * @param id the session
   * @returns the state
   * @throws {WebServError} when the server refuses; {WebServNetworkError} when it cannot be reached
   */
  state(id: string): Promise<SessionState> {
    return this.#json("GET", `/v1/sessions/${encodeURIComponent(id)}`);
  }

  /**
   * Closes a session.
   *
   * @param id the session
   * @returns whether it was open
   * @throws {WebServError} when the server refuses; {WebServNetworkError} when it cannot be reached
   */
  async close(id: string): Promise<boolean> {
    const { closed } = await this.#json<{ closed: boolean }>(
      "DELETE",
      `/v1/sessions/${encodeURIComponent(id)}`,
    );
    return closed;
  }

  /**
   * The live sessions.
   *
   * @returns their states
   * @throws {WebServError} when the server refuses; {WebServNetworkError} when it cannot be reached
   */
  async list(): Promise<SessionState[]> {
    return (await this.#json<{ sessions: SessionState[] }>("GET", "/v1/sessions")).sessions;
  }

  /**
   * A page of the tasks the server offers.
   *
   * @param query a site, a template, a split (`"train"` by default) and the page
   * @returns the tasks of the page
   * @throws {WebServError} when the server refuses; {WebServNetworkError} when it cannot be reached
   */
  async tasks(query: TaskQuery = {}): Promise<ListedTask[]> {
    return (await this.taskPage(query)).tasks;
  }

  /**
   * A page of the tasks the server offers, with the offset of the next.
   *
   * @param query a site, a template, a split (`"train"` by default) and the page
   * @returns the tasks and the next page's offset (`null` on the last)
   * @throws {WebServError} when the server refuses; {WebServNetworkError} when it cannot be reached
   */
  async taskPage(query: TaskQuery = {}): Promise<TaskPage> {
    const params = new URLSearchParams();
    for (const [key, value] of Object.entries(query)) {
      if (value !== undefined) params.set(key, String(value));
    }
    const search = params.size > 0 ? `?${params}` : "";
    return await this.#json<TaskPage>("GET", `/v1/tasks${search}`);
  }

  /**
   * The action space as tool definitions.
   *
   * @param format OpenAI's or Anthropic's shape
   * @returns the tools
   * @throws {WebServError} when the server refuses; {WebServNetworkError} when it cannot be reached
   */
  async tools(format: "openai" | "anthropic" = "openai"): Promise<Record<string, unknown>[]> {
    return (await this.#json<{ tools: Record<string, unknown>[] }>(
      "GET",
      `/v1/tools?format=${format}`,
    )).tools;
  }

  /**
   * The server's capacity.
   *
   * @returns live, max and free sessions
   * @throws {WebServError} when the server refuses; {WebServNetworkError} when it cannot be reached
   */
  health(): Promise<HealthBody> {
    return this.#json("GET", "/health");
  }

  async #json<T>(method: string, path: string, body?: unknown, accept: number[] = []): Promise<T> {
    const response = await this.#fetch(method, path, body);
    if (!response.ok && !accept.includes(response.status)) throw await refusal(response);
    return await response.json() as T;
  }

  /**
   * One call: retried after the server's `Retry-After` (429 and 503 only,
   * where waiting can help) while retries and the deadline last.
   */
  async #fetch(method: string, path: string, body?: unknown): Promise<Response> {
    const headers: Record<string, string> = {};
    if (body !== undefined) headers["content-type"] = "application/json";
    if (this.#token) headers.authorization = `Bearer ${this.#token}`;
    const url = `${this.url}${path}`;
    const deadline = Date.now() + this.#timeoutMs;
    for (let attempt = 0;; attempt++) {
      const left = deadline - Date.now();
      const timer = AbortSignal.timeout(Math.max(1, left));
      const signal = this.#signal ? AbortSignal.any([this.#signal, timer]) : timer;
      let response: Response;
      try {
        response = await fetch(url, {
          method,
          headers,
          signal,
          ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
        });
      } catch (error) {
        if (this.#signal?.aborted) throw this.#signal.reason;
        throw new WebServNetworkError(url, timer.aborted, error);
      }
      const wait = Number(response.headers.get("retry-after") ?? NaN) * 1000;
      const retry = (response.status === 429 || response.status === 503) &&
        Number.isFinite(wait) && attempt < this.#retries && Date.now() + wait < deadline;
      if (!retry) return response;
      await response.body?.cancel();
      await sleep(wait, this.#signal);
    }
  }
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

async function refusal(response: Response): Promise<WebServError> {
  const text = await response.text();
  let code = "http-error";
  let message = text;
  try {
    const parsed = JSON.parse(text) as { code?: unknown; message?: unknown };
    if (typeof parsed.code === "string") code = parsed.code;
    if (typeof parsed.message === "string") message = parsed.message;
  } catch {
    // A body that is not JSON is shown as it is.
  }
  const retry = Number(response.headers.get("retry-after") ?? NaN);
  return new WebServError(
    response.status,
    code,
    message,
    Number.isFinite(retry) ? retry : undefined,
  );
}
