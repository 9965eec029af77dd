/**
 * OpenEnv's HTTP routes beside the session API (openenv-core 0.3.0,
 * `http_server.py`, simulation mode), so OpenEnv's tools (`openenv validate
 * --url`, `AutoEnv`) see an OpenEnv server:
 *
 * - `POST /reset` and `POST /step` are stateless, as OpenEnv's are: each
 *   runs on a session of its own, opened for the request and closed after
 *   it (`/reset` answers the first observation of the episode its options
 *   name; `/step` takes one action on a fresh episode of the first listed
 *   task). Episodes run over `/ws` or `/v1/sessions`.
 * - `GET /state` is a fresh env's state (`{episode_id: null, step_count: 0}`).
 * - `GET /schema` is the action, observation and state JSON Schemas;
 *   `GET /metadata` the name, description and version.
 * - `POST /mcp` is MCP's JSON-RPC (`initialize`, `tools/list`, `tools/call`,
 *   notifications) answered as JSON, bound to a session by `?session=<id>`
 *   (a handle `POST /v1/sessions` minted) or by `session_id` in the params;
 *   without one, tools list but do not run. OpenEnv's session lifecycle
 *   (openenv 0.10 `MCPToolClient`, production mode): `openenv/session/create`
 *   opens a session on the first listed task and answers its `session_id`,
 *   which `/ws?session_id=` then drives (reset, step) and
 *   `openenv/session/close` closes.
 *
 * Bad reset options are refused as OpenEnv (FastAPI) refuses them: 422 with
 * `{detail: [{type, loc, msg, input}]}`.
 *
 * @module
 */
import { createRoute, type OpenAPIHono, z } from "@hono/zod-openapi";
import { ACTION_SCHEMA } from "../../../engine/mod.ts";
import { HttpError } from "../http_error.ts";
import { ErrorBody, ObservationBody } from "../protocol.ts";
import type { SessionManager } from "../sessions.ts";
import {
  observationPayload,
  OPENENV_VERSION,
  openingSpec,
  parseReset,
  pydanticIssues,
  type SplitTasks,
  stepPayload,
} from "../_openenv.ts";
import { handleRpc, RpcCode, rpcError, rpcSession } from "../_rpc.ts";

const Detail = z.object({
  detail: z.array(z.object({
    type: z.string(),
    loc: z.array(z.union([z.string(), z.number()])),
    msg: z.string(),
    input: z.unknown().optional(),
  })),
}).openapi("ValidationDetail");

const OpenEnvObservation = z.object({
  observation: z.record(z.string(), z.unknown()).openapi({
    description: "The observation (text, url, title, tabs) with metadata",
  }),
  reward: z.number().nullable(),
  done: z.boolean(),
}).passthrough().openapi("OpenEnvObservation");

const OpenEnvState = z.object({
  episode_id: z.string().nullable(),
  step_count: z.number().int().min(0),
}).passthrough().openapi("OpenEnvState");

const JsonRpcBody = z.record(z.string(), z.unknown()).openapi("JsonRpcMessage", {
  description: "A JSON-RPC 2.0 request or notification",
});

const json = <T extends z.ZodType>(schema: T, description: string) => ({
  content: { "application/json": { schema } },
  description,
});

const REFUSED = {
  400: json(ErrorBody, "Bad input"),
  401: json(ErrorBody, "Missing or wrong bearer token"),
  403: json(ErrorBody, "A foreign Host or Origin (DNS rebinding, cross-site requests)"),
  413: json(ErrorBody, "The body is larger than the server takes"),
  415: json(ErrorBody, 'The body is not sent as "content-type: application/json"'),
  422: json(Detail, "Invalid options, in OpenEnv's (FastAPI's) shape"),
  429: json(ErrorBody, "Too many live sessions; see Retry-After"),
  503: json(ErrorBody, "Our side failed (browser, site, sandbox)"),
} as const;

/**
 * Adds OpenEnv's HTTP routes to the app.
 *
 * @param app the app
 * @param sessions the sessions
 * @param tasks the tasks a reset's `split` and `index` name (OpenEnv's Task API)
 */
export function mountOpenEnv(
  app: OpenAPIHono,
  sessions: SessionManager,
  tasks?: SplitTasks,
): void {
  const firstTask = () => sessions.catalogTasks(1)[0]?.id;

  app.openapi(
    createRoute({
      method: "post",
      path: "/reset",
      summary: "OpenEnv: the first observation of an episode (stateless)",
      description: "Opens a session on the options' task (`task` or `task_id`, `seed`, `site`, " +
        "`url`, …; the first listed task by default), answers its first observation and " +
        "closes it. Episodes run over /ws or /v1/sessions.",
      tags: ["OpenEnv"],
      request: {
        body: {
          content: { "application/json": { schema: z.record(z.string(), z.unknown()) } },
          required: false,
        },
      },
      responses: { 200: json(OpenEnvObservation, "The first observation"), ...REFUSED },
    }),
    async (c) => {
      const body = await c.req.json().catch(() => ({}));
      const data = typeof body === "object" && body !== null && !Array.isArray(body) ? body : {};
      const parsed = parseReset(data as Record<string, unknown>, ["body"], tasks);
      // The typed routes only type their 2xx; the 422 is declared above.
      if (!parsed.ok) return c.json({ detail: parsed.issues }, 422) as never;
      const created = await sessions.create(
        openingSpec({}, parsed.options.spec, firstTask()),
      );
      await sessions.close(created.id);
      return c.json(
        observationPayload(created.observation, null, false, {
          episode_id: parsed.options.episodeId ?? null,
          task_id: created.task?.id ?? null,
          instruction: created.task?.instruction ?? null,
        }),
        200,
      );
    },
  );

  const StepBody = z.object({
    action: z.record(z.string(), z.unknown()),
    timeout_s: z.number().gt(0).optional(),
    request_id: z.string().max(255).optional(),
  });
  app.openapi(
    createRoute({
      method: "post",
      path: "/step",
      summary: "OpenEnv: one action on a fresh episode (stateless)",
      description: "Opens a session on the first listed task, takes the action, answers and " +
        "closes it, as OpenEnv's stateless /step does. Episodes run over /ws or /v1/sessions.",
      tags: ["OpenEnv"],
      request: {
        body: {
          content: { "application/json": { schema: StepBody.openapi("OpenEnvStep") } },
          required: true,
        },
      },
      responses: { 200: json(OpenEnvObservation, "The step's observation"), ...REFUSED },
    }),
    async (c) => {
      const created = await sessions.create(openingSpec({}, {}, firstTask()));
      try {
        const result = await sessions.step(created.id, { action: c.req.valid("json").action });
        const data = stepPayload(result, undefined);
        if (!data) {
          throw new HttpError(
            503,
            result.info.error?.code ?? result.status,
            `${result.status}: ${result.info.error?.message}`,
          );
        }
        return c.json(data, 200);
      } finally {
        await sessions.close(created.id);
      }
    },
    (result, c) => {
      if (!result.success) {
        return c.json({ detail: pydanticIssues(result.error, ["body"]) }, 422) as never;
      }
    },
  );

  app.openapi(
    createRoute({
      method: "get",
      path: "/state",
      summary: "OpenEnv: a fresh env's state",
      tags: ["OpenEnv"],
      responses: {
        200: json(OpenEnvState, "No episode, no step"),
        400: REFUSED[400],
        401: REFUSED[401],
        403: REFUSED[403],
        413: REFUSED[413],
        415: REFUSED[415],
      },
    }),
    (c) => c.json({ episode_id: null, step_count: 0 }, 200),
  );

  const schemas = {
    action: ACTION_SCHEMA as Record<string, unknown>,
    observation: z.toJSONSchema(ObservationBody) as Record<string, unknown>,
    state: z.toJSONSchema(OpenEnvState) as Record<string, unknown>,
  };
  app.openapi(
    createRoute({
      method: "get",
      path: "/schema",
      summary: "OpenEnv: the action, observation and state JSON Schemas",
      tags: ["OpenEnv"],
      responses: {
        200: json(
          z.object({
            action: z.record(z.string(), z.unknown()),
            observation: z.record(z.string(), z.unknown()),
            state: z.record(z.string(), z.unknown()),
          }).openapi("OpenEnvSchemas"),
          "The schemas",
        ),
        400: REFUSED[400],
        401: REFUSED[401],
        403: REFUSED[403],
        413: REFUSED[413],
        415: REFUSED[415],
      },
    }),
    (c) => c.json(schemas, 200),
  );

  app.openapi(
    createRoute({
      method: "get",
      path: "/metadata",
      summary: "OpenEnv: what this environment is",
      tags: ["OpenEnv"],
      responses: {
        200: json(
          z.object({
            name: z.string(),
            description: z.string(),
            version: z.string(),
            openenv_version: z.string(),
            documentation_url: z.string(),
          }).openapi("OpenEnvMetadata"),
          "Name, description, version",
        ),
        400: REFUSED[400],
        401: REFUSED[401],
        403: REFUSED[403],
        413: REFUSED[413],
        415: REFUSED[415],
      },
    }),
    (c) =>
      c.json({
        name: "webserv",
        description: "Web tasks for RL web agents: recreated sites in sandboxes, driven " +
          "through a real Chromium, rewarded by each task's verifier.",
        version: "0.1.0",
        openenv_version: OPENENV_VERSION,
        documentation_url: "/docs",
      }, 200),
  );
}

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
        "session); notifications answer 202. Reset, verify and reward are not tools.",
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
