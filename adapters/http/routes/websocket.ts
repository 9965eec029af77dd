/**
 * The WebSocket endpoint `/ws`, speaking OpenEnv's session messages
 * (openenv-core 0.3.0, `openenv/core/env_server/http_server.py`): the client
 * sends `{type: "reset", data}`, `{type: "step", data: action}`,
 * `{type: "state"}`, `{type: "mcp", data: jsonrpc}` and `{type: "close"}`;
 * the server answers `{type: "observation", data: {observation, reward,
 * done, ...}}`, `{type: "state", data: {episode_id, step_count, ...}}`,
 * `{type: "mcp", data: jsonrpc}` or `{type: "error", data: {message, code}}`
 * with OpenEnv's error codes.
 *
 * One connection drives one session at a time, its messages in order. Every
 * reset honours its options (`seed`, `task` or `task_id`, `split` and `index`
 * (OpenEnv's Task API: the split's task at that index), `site`/`template`,
 * `url`, `max_steps`, `observation`, `observation_options`, `viewport`, …;
 * unknown keys are refused
 * as OpenEnv refuses them); with no task named the connection's last one
 * runs, at first the first listed task. A session is held while its
 * connection is open (never reaped for idling), and a reset after it expired
 * opens a new one. `done` is true when the episode ended or was truncated
 * (`observation.metadata.truncated`, `truncation_reason`); a failure of ours
 * (`env_error`, `timeout`, `expired`) is an `error` message, which OpenEnv's
 * clients raise, never a step. `/ws/ws` is the same endpoint, for clients
 * given the `ws://host:port/ws` URL that append `/ws` themselves.
 *
 * Bounds: a connection queues at most `maxQueued` messages (the one running
 * included); a message past it is refused at once with an error
 * (`CAPACITY_REACHED`, reason `queue-full`) and never runs. When the client
 * goes, its queue is dropped (the messages not yet run never run) and its
 * session closed at once, which ends a step under way (its env is closed);
 * the count of queued messages is `webserv_ws_queued` in `/metrics`.
 *
 * @module
 */
import type { OpenAPIHono } from "@hono/zod-openapi";
import { upgradeWebSocket } from "hono/deno";
import type { WSContext } from "hono/ws";
import { HttpError } from "../http_error.ts";
import type { SessionSpec } from "../protocol.ts";
import type { Metrics } from "../metrics.ts";
import type { SessionManager } from "../sessions.ts";
import {
  needsNewSession,
  observationPayload,
  openingSpec,
  parseReset,
  type SplitTasks,
  stepPayload,
} from "../_openenv.ts";
import { handleRpc, mcpTools, RpcCode, rpcError, rpcSession } from "../_rpc.ts";

type Outgoing =
  | { type: "observation"; data: Record<string, unknown> }
  | { type: "state"; data: Record<string, unknown> }
  | { type: "mcp"; data: Record<string, unknown> }
  | { type: "error"; data: { message: string; code: string } & Record<string, unknown> };

/** Options of {@linkcode mountWebSocket}. */
export interface WebSocketOptions {
  /** Where the count of queued messages is shown (`webserv_ws_queued`). */
  metrics?: Metrics;
  /**
   * The cap on messages one connection has queued, the running one included.
   *
   * @default {64}
   */
  maxQueued?: number;
  /** The tasks a reset's `split` and `index` name (OpenEnv's Task API); without it they are refused. */
  tasks?: SplitTasks;
}

/**
 * Adds `/ws` (and `/ws/ws`) to the app.
 *
 * @param app the app
 * @param sessions the sessions
 * @param options the metrics and the queue's cap
 */
export function mountWebSocket(
  app: OpenAPIHono,
  sessions: SessionManager,
  options: WebSocketOptions = {},
): void {
  const maxQueued = options.maxQueued ?? 64;
  let queued = 0;
  options.metrics?.gauge(
    "webserv_ws_queued",
    "WebSocket messages queued or running, every connection together.",
    () => queued,
  );
  const handler = upgradeWebSocket((c) => {
    const connection = new Connection(sessions, c.req.query("session_id"), options.tasks);
    let chain: Promise<void> = Promise.resolve();
    let waiting = 0;
    return {
      onMessage(event, ws) {
        if (connection.gone) return;
        if (waiting >= maxQueued) {
          const refused = error(
            "CAPACITY_REACHED",
            `Too many messages queued on this connection (${maxQueued}): wait for the answers`,
            { reason: "queue-full" },
          );
          if (ws.readyState === 1) ws.send(JSON.stringify(refused));
          return;
        }
        const raw = typeof event.data === "string" ? event.data : "";
        waiting++;
        queued++;
        chain = chain.then(async () => {
          try {
            // A client gone drops what it queued.
            if (!connection.gone) await connection.handle(ws, raw);
          } finally {
            waiting--;
            queued--;
          }
        });
      },
      onClose() {
        // At once, not after the queue: closing the session ends a step under way.
        connection.leave().catch(() => {});
      },
    };
  });
  app.get("/ws", handler);
  app.get("/ws/ws", handler);
}

/** One WebSocket connection and the session it drives. */
class Connection {
  #sessions: SessionManager;
  #session: string | undefined;
  #release: (() => void) | undefined;
  #spec: SessionSpec = {};
  #episode = "";
  #episodes = 0;
  /** Whether the client went. */
  gone = false;

  /** Why the session named by `?session_id=` cannot be driven, if it cannot. */
  #unbound: string | undefined;
  /** Whether the session is another's (opened by `openenv/session/create`): left open at the end. */
  #borrowed = false;

  #tasks: SplitTasks | undefined;

  constructor(sessions: SessionManager, bound?: string, tasks?: SplitTasks) {
    this.#sessions = sessions;
    this.#tasks = tasks;
    // OpenEnv's MCP clients open a session over HTTP /mcp and drive the same
    // one here (`/ws?session_id=`): held while connected, closed by its opener.
    if (bound === undefined) return;
    try {
      this.#release = sessions.attach(bound);
      this.#session = bound;
      this.#borrowed = true;
    } catch (failure) {
      if (!(failure instanceof HttpError)) throw failure;
      this.#unbound = `Session "${bound}" cannot be driven: ${failure.message}`;
    }
  }

  async handle(ws: WSContext, raw: string): Promise<void> {
    const send = (message: Outgoing) => {
      if (ws.readyState === 1) ws.send(JSON.stringify(message));
    };
    let message: unknown;
    try {
      message = JSON.parse(raw);
    } catch {
      return send(error("INVALID_JSON", "Invalid JSON: the message is not JSON"));
    }
    if (typeof message !== "object" || message === null || Array.isArray(message)) {
      return send(error("VALIDATION_ERROR", "Invalid message: not a JSON object"));
    }
    const { type, data } = message as { type?: unknown; data?: unknown };
    const payload = typeof data === "object" && data !== null && !Array.isArray(data)
      ? data as Record<string, unknown>
      : {};
    if (this.#unbound !== undefined) return send(error("SESSION_ERROR", this.#unbound));
    try {
      switch (type) {
        case "reset":
          return send(await this.#reset(payload));
        case "step":
          return send(await this.#step(payload));
        case "state":
          return send(this.#state());
        case "mcp": {
          const response = typeof data === "object" && data !== null && !Array.isArray(data)
            ? await handleRpc(
              data,
              this.#session === undefined ? undefined : rpcSession(this.#sessions, this.#session),
            )
            : rpcError(null, RpcCode.INVALID_REQUEST, "Invalid request: data is not an object");
          return send({ type: "mcp", data: response });
        }
        case "close":
          await this.end();
          ws.close(1000, "closed");
          return;
        default:
          return send(error("UNKNOWN_TYPE", `Unknown message type: ${JSON.stringify(type)}`));
      }
    } catch (failure) {
      if (failure instanceof HttpError) {
        const code = failure.status === 429
          ? "CAPACITY_REACHED"
          : failure.status === 404 || failure.status === 410
          ? "SESSION_ERROR"
          : failure.status < 500
          ? "VALIDATION_ERROR"
          : "EXECUTION_ERROR";
        return send(error(code, failure.message, { status: failure.status, reason: failure.code }));
      }
      return send(error("EXECUTION_ERROR", String(failure)));
    }
  }

  /** The client went: drops what comes next and closes the session. */
  async leave(): Promise<void> {
    this.gone = true;
    await this.end();
  }

  /** Releases the session, and closes it unless it is another's. */
  async end(): Promise<void> {
    const id = this.#session;
    const borrowed = this.#borrowed;
    this.#release?.();
    this.#session = undefined;
    this.#release = undefined;
    this.#borrowed = false;
    if (id !== undefined && !borrowed) await this.#sessions.close(id).catch(() => false);
  }

  async #reset(payload: Record<string, unknown>): Promise<Outgoing> {
    const parsed = parseReset(payload, ["data"], this.#tasks);
    if (!parsed.ok) {
      return error("VALIDATION_ERROR", "Invalid message", { errors: parsed.issues });
    }
    const { spec: change, episodeId } = parsed.options;
    if (this.#session !== undefined && !needsNewSession(change)) {
      try {
        const { seed, task, max_steps, observation, observation_options, viewport } = change;
        const reset = await this.#sessions.reset(this.#session, {
          ...(seed !== undefined ? { seed } : {}),
          ...(task !== undefined ? { task } : {}),
          ...(max_steps !== undefined ? { max_steps } : {}),
          ...(observation !== undefined ? { observation } : {}),
          ...(observation_options !== undefined ? { observation_options } : {}),
          ...(viewport !== undefined ? { viewport } : {}),
        });
        this.#spec = openingSpec(this.#spec, change, undefined);
        return this.#opened(reset.observation, reset.task, episodeId);
      } catch (failure) {
        // An expired session is opened anew on this connection; the rest is refused.
        if (!(failure instanceof HttpError) || ![404, 410].includes(failure.status)) throw failure;
      }
    }
    await this.end();
    const spec = openingSpec(this.#spec, change, this.#sessions.catalogTasks(1)[0]?.id);
    const created = await this.#sessions.create(spec);
    if (this.gone) {
      // The client went while it opened: nobody holds it.
      await this.#sessions.close(created.id).catch(() => false);
      return error("SESSION_ERROR", "The connection closed");
    }
    this.#session = created.id;
    this.#release = this.#sessions.attach(created.id);
    this.#spec = spec;
    return this.#opened(created.observation, created.task, episodeId);
  }

  #opened(
    observation: Parameters<typeof observationPayload>[0],
    task: { id: string; instruction: string } | null,
    episodeId: string | undefined,
  ): Outgoing {
    this.#episode = episodeId ?? `${this.#session}-${this.#episodes}`;
    this.#episodes++;
    const metadata = {
      session_id: this.#session,
      episode_id: this.#episode,
      task_id: task?.id ?? null,
      instruction: task?.instruction ?? null,
    };
    return {
      type: "observation",
      data: observationPayload(observation, null, false, metadata, { task }),
    };
  }

  async #step(payload: Record<string, unknown>): Promise<Outgoing> {
    if (this.#session === undefined) {
      return error("SESSION_ERROR", "Send a reset before the first step");
    }
    const { request_id: requestId, ...action } = payload;
    // OpenEnv's MCP client (openenv-core's default mode) sends its tool
    // actions as steps: listing is not a step, a call is one.
    if (action.type === "list_tools" && Object.keys(action).length === 1) {
      return {
        type: "observation",
        data: { observation: { tools: mcpTools(), metadata: {} }, reward: null, done: false },
      };
    }
    if (action.type === "call_tool") return await this.#callTool(this.#session, action);
    const result = await this.#sessions.step(this.#session, {
      action,
      ...(typeof requestId === "string" ? { request_id: requestId } : {}),
    });
    const data = stepPayload(result, this.#spec.max_steps);
    if (data) return { type: "observation", data };
    // Ours, never a step: OpenEnv's clients raise an error message.
    const failure = result.info.error;
    return error(
      result.status === "expired" ? "SESSION_ERROR" : "EXECUTION_ERROR",
      `${result.status}: ${
        failure?.message ?? "the step failed on the server's side"
      }; reset to go on`,
      { status: result.status, error: failure ?? null },
    );
  }

  /** A `call_tool` step: the MCP tool run on the session, answered as OpenEnv's CallToolObservation. */
  async #callTool(id: string, action: Record<string, unknown>): Promise<Outgoing> {
    const name = action.tool_name;
    const reply = await handleRpc(
      {
        jsonrpc: "2.0",
        id: 0,
        method: "tools/call",
        params: { name, arguments: action.arguments ?? {} },
      },
      rpcSession(this.#sessions, id),
    );
    if ("error" in reply && reply.error) {
      const { code, message } = reply.error as { code: number; message: string };
      // Ours (a failed step, an expired session): an error frame, never an observation.
      if (code === RpcCode.SERVER_ERROR) return error("EXECUTION_ERROR", message);
      const known = mcpTools().some((tool) => tool.name === name);
      return {
        type: "observation",
        data: {
          observation: {
            tool_name: typeof name === "string" ? name : "",
            result: null,
            error: { error_type: known ? "invalid_args" : "tool_not_found", message },
            metadata: {},
          },
          reward: 0,
          done: false,
        },
      };
    }
    const state = this.#sessions.state(id);
    const reward = state.done ? state.rewards.at(-1) ?? 0 : 0;
    return {
      type: "observation",
      data: {
        observation: {
          tool_name: name,
          result: (reply as { result?: unknown }).result ?? null,
          error: null,
          metadata: { session_id: id, step: state.step },
        },
        reward,
        done: state.done,
      },
    };
  }

  #state(): Outgoing {
    if (this.#session === undefined) {
      return { type: "state", data: { episode_id: null, step_count: 0 } };
    }
    const state = this.#sessions.state(this.#session);
    return {
      type: "state",
      data: {
        episode_id: this.#episode,
        step_count: state.step,
        session_id: state.id,
        task: state.task,
        task_id: state.task?.id ?? null,
        url: state.url,
        done: state.done,
        lease: state.lease,
      },
    };
  }
}

function error(code: string, message: string, extra: Record<string, unknown> = {}): Outgoing {
  return { type: "error", data: { message, code, ...extra } };
}
