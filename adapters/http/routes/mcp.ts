/**
 * MCP's JSON-RPC at `POST /mcp` (`initialize`, `tools/list`, `tools/call`,
 * notifications), answered as JSON, bound to a session by `?session=<id>` (a
 * handle `POST /v1/sessions` minted) or by `session_id` in the params; without
 * one, tools list but do not run. The `fork` tool copies the bound session's
 * live episode and answers the new sessions' ids, each bound the same way. OpenEnv's session lifecycle (openenv 0.10
 * `MCPToolClient`, production mode): `openenv/session/create` opens a session
 * on the first listed task and answers its `session_id`, which
 * `/ws?session_id=` then drives (reset, step) and `openenv/session/close`
 * closes.
 *
 * @module
 */
import { createRoute, type OpenAPIHono, z } from "@hono/zod-openapi";
import { HttpError } from "../http_error.ts";
import { ErrorBody } from "../protocol.ts";
import type { SessionManager } from "../sessions.ts";
import { openingSpec } from "../_openenv.ts";
import { handleRpc, RpcCode, rpcError, rpcSession } from "../_rpc.ts";
import { ERRORS as REFUSED, json } from "./_shared.ts";

const JsonRpcBody = z.record(z.string(), z.unknown()).openapi("JsonRpcMessage", {
  description: "A JSON-RPC 2.0 request or notification",
});

/**
 * Adds MCP's JSON-RPC route (`POST /mcp`) to the app.
 *
 * @param app the app
 * @param sessions the sessions
 */
export function mountMcp(app: OpenAPIHono, sessions: SessionManager): void {
  app.openapi(
    createRoute({
      method: "post",
      path: "/mcp",
      summary: "MCP over JSON-RPC, bound to a session by ?session=",
      description: "initialize, tools/list (one tool per action), tools/call (steps the bound " +
        "session; `fork` copies it and answers the new sessions' ids); notifications answer " +
        "202. Reset, verify and reward are not tools.",
      tags: ["MCP"],
      request: {
        query: z.object({
          session: z.string().min(1).max(100).optional().openapi({
            description: "The session the tools act on: an id from POST /v1/sessions",
          }),
        }),
        body: { content: { "application/json": { schema: JsonRpcBody } }, required: true },
      },
      responses: {
        200: json(JsonRpcBody, "The JSON-RPC response"),
        202: { description: "A notification, accepted" },
        400: REFUSED[400],
        401: REFUSED[401],
        403: REFUSED[403],
        413: REFUSED[413],
        415: REFUSED[415],
        404: json(ErrorBody, "The bound session is unknown"),
        409: json(ErrorBody, "The bound session's episode is over"),
        410: json(ErrorBody, "The bound session expired"),
      },
    }),
    async (c) => {
      const bound = c.req.valid("query").session;
      const request: unknown = await c.req.json().catch(() => undefined);
      let reply: Record<string, unknown> | undefined;
      try {
        reply = await answerMcp(bound, request);
      } catch (failure) {
        // A refusal about the bound session is a JSON-RPC error the agent app reads.
        if (!(failure instanceof HttpError)) throw failure;
        reply = rpcError(idOf(request), RpcCode.SERVER_ERROR, failure.message, {
          status: failure.status,
          code: failure.code,
        });
      }
      return reply === undefined ? c.body(null, 202) : c.json(reply, 200);
    },
  );

  /** The answer to one MCP message; `undefined` for a notification. */
  async function answerMcp(
    bound: string | undefined,
    request: unknown,
  ): Promise<Record<string, unknown> | undefined> {
    if (request === undefined) return rpcError(null, RpcCode.PARSE_ERROR, "Parse error: not JSON");
    const message = (typeof request === "object" && request !== null ? request : {}) as Record<
      string,
      unknown
    >;
    if (typeof message.method === "string" && message.id === undefined) return undefined;
    if (message.method === "initialize") {
      const params = (message.params ?? {}) as { protocolVersion?: unknown };
      return {
        jsonrpc: "2.0",
        id: idOf(request),
        result: {
          protocolVersion: typeof params.protocolVersion === "string"
            ? params.protocolVersion
            : "2025-06-18",
          capabilities: { tools: { listChanged: false } },
          serverInfo: { name: "webserv", version: "0.1.0" },
          instructions: bound === undefined
            ? "Bind a session with /mcp?session=<id>"
            : sessions.state(bound).task?.instruction ?? "Browse the page",
        },
      };
    }
    if (message.method === "ping") return { jsonrpc: "2.0", id: idOf(request), result: {} };
    const params =
      (typeof message.params === "object" && message.params !== null
        ? message.params
        : {}) as Record<string, unknown>;
    const named = typeof params.session_id === "string" ? params.session_id : undefined;
    if (message.method === "openenv/session/create") {
      if (bound !== undefined) return rpcResult(request, { session_id: bound });
      const created = await sessions.create(
        openingSpec({}, {}, sessions.catalogTasks(1)[0]?.id),
      );
      return rpcResult(request, { session_id: created.id });
    }
    if (message.method === "openenv/session/close") {
      if (named === undefined) {
        return rpcError(
          idOf(request),
          RpcCode.INVALID_PARAMS,
          "openenv/session/close needs a session_id",
        );
      }
      sessions.state(named); // 404 or 410 for one unknown or gone
      return rpcResult(request, { session_id: named, closed: await sessions.close(named) });
    }
    // OpenEnv's MCP clients name the session in the params (openenv 0.10
    // `mcp_client.py`); agent apps bind it with ?session=.
    const target = bound ?? named;
    return await handleRpc(
      request,
      target === undefined ? undefined : rpcSession(sessions, target),
      // Here a fork's id can be bound (`?session=`, or `session_id` in the params).
      { fork: true },
    );
  }
}

function rpcResult(request: unknown, result: Record<string, unknown>): Record<string, unknown> {
  return { jsonrpc: "2.0", id: idOf(request), result };
}

function idOf(request: unknown): string | number | null {
  const id = (request as { id?: unknown } | null)?.id;
  return typeof id === "string" || typeof id === "number" ? id : null;
}
