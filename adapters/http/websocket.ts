/**
 * The WebSocket endpoint `/ws`, speaking OpenEnv's session messages
 * (meta-pytorch/OpenEnv `src/openenv/core/env_server/types.py`): the client
 * sends `{type: "reset", data}`, `{type: "step", data: action}`,
 * `{type: "state"}` and `{type: "close"}`; the server answers
 * `{type: "observation", data: {observation, reward, done, ...}}`,
 * `{type: "state", data: {episode_id, step_count, ...}}` or
 * `{type: "error", data: {message, code}}` with OpenEnv's error codes.
 *
 * One connection drives one session (opened by the first `reset`, from
 * `data.task`, `data.site`/`template`/`seed` or `data.url`, else the first
 * listed task); messages run in order. WebServ's extras ride along inside
 * `data`: `status`, `truncated`, `info`. `reward` is `null` whenever the
 * status is neither `ok` nor `action_error`.
 *
 * @module
 */
import type { OpenAPIHono } from "@hono/zod-openapi";
import { upgradeWebSocket } from "hono/deno";
import type { WSContext } from "hono/ws";
import { HttpError } from "./http_error.ts";
import { SessionSpec } from "./protocol.ts";
import type { SessionManager } from "./sessions.ts";

type Outgoing =
  | { type: "observation"; data: Record<string, unknown> }
  | { type: "state"; data: Record<string, unknown> }
  | { type: "error"; data: { message: string; code: string } };

/**
 * Adds `/ws` to the app.
 *
 * @param app the app
 * @param sessions the sessions
 */
export function mountWebSocket(app: OpenAPIHono, sessions: SessionManager): void {
  app.get(
    "/ws",
    upgradeWebSocket(() => {
      let session: string | undefined;
      let episode = "";
      let chain: Promise<void> = Promise.resolve();
      const send = (ws: WSContext, message: Outgoing) => {
        if (ws.readyState === 1) ws.send(JSON.stringify(message));
      };
      const handle = async (ws: WSContext, raw: string): Promise<void> => {
        let message: unknown;
        try {
          message = JSON.parse(raw);
        } catch {
          return send(ws, error("INVALID_JSON", "The message is not JSON"));
        }
        if (typeof message !== "object" || message === null || Array.isArray(message)) {
          return send(ws, error("VALIDATION_ERROR", "The message is not an object"));
        }
        const { type, data } = message as { type?: unknown; data?: unknown };
        const payload = typeof data === "object" && data !== null && !Array.isArray(data)
          ? data as Record<string, unknown>
          : {};
        try {
          switch (type) {
            case "reset": {
              const episodeId = typeof payload.episode_id === "string" ? payload.episode_id : "";
              if (session === undefined) {
                const { episode_id: _, ...rest } = payload;
                const spec = SessionSpec.safeParse(rest);
                if (!spec.success) {
                  return send(ws, error("VALIDATION_ERROR", spec.error.issues[0]?.message ?? ""));
                }
                const chosen = spec.data.task ?? spec.data.site ?? spec.data.url;
                const first = chosen === undefined ? defaultTask(sessions) : undefined;
                const created = await sessions.create(
                  first ? { ...spec.data, task: first } : spec.data,
                );
                session = created.id;
                episode = episodeId || `${created.id}-0`;
                return send(
                  ws,
                  observation(created.observation, null, false, { task: created.task }),
                );
              }
              const seed = typeof payload.seed === "number" ? payload.seed : undefined;
              const task = typeof payload.task === "string" ? payload.task : undefined;
              const reset = await sessions.reset(session, {
                ...(seed !== undefined ? { seed } : {}),
                ...(task !== undefined ? { task } : {}),
              });
              episode = episodeId || `${session}-${Date.now()}`;
              return send(ws, observation(reset.observation, null, false, { task: reset.task }));
            }
            case "step": {
              if (session === undefined) {
                return send(ws, error("SESSION_ERROR", "Send a reset before the first step"));
              }
              const { request_id: requestId, ...action } = payload;
              const result = await sessions.step(session, {
                action,
                ...(typeof requestId === "string" ? { request_id: requestId } : {}),
              });
              return send(
                ws,
                observation(result.observation, result.reward ?? null, result.done, {
                  status: result.status,
                  truncated: result.truncated,
                  info: result.info,
                }),
              );
            }
            case "state": {
              if (session === undefined) {
                return send(ws, { type: "state", data: { episode_id: null, step_count: 0 } });
              }
              const state = sessions.state(session);
              return send(ws, {
                type: "state",
                data: {
                  episode_id: episode,
                  step_count: state.step,
                  session_id: state.id,
                  task: state.task,
                  url: state.url,
                  done: state.done,
                },
              });
            }
            case "close": {
              if (session !== undefined) await sessions.close(session);
              session = undefined;
              ws.close(1000, "closed");
              return;
            }
            default:
              return send(
                ws,
                error("UNKNOWN_TYPE", `Unknown message type ${JSON.stringify(type)}`),
              );
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
            return send(ws, error(code, failure.message));
          }
          return send(ws, error("EXECUTION_ERROR", String(failure)));
        }
      };
      return {
        onMessage(event, ws) {
          const raw = typeof event.data === "string" ? event.data : "";
          chain = chain.then(() => handle(ws, raw));
        },
        onClose() {
          chain = chain.then(async () => {
            if (session !== undefined) await sessions.close(session).catch(() => false);
          });
        },
      };
    }),
  );
}

function defaultTask(sessions: SessionManager): string | undefined {
  return sessions.catalogTasks(1)[0]?.id;
}

function observation(
  body: unknown,
  reward: number | null,
  done: boolean,
  extra: Record<string, unknown>,
): Outgoing {
  return { type: "observation", data: { observation: body, reward, done, ...extra } };
}

function error(code: string, message: string): Outgoing {
  return { type: "error", data: { message, code } };
}
