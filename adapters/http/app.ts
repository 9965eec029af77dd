/**
 * The rollout server's routes: the session API under `/v1`, declared with
 * `@hono/zod-openapi` so validation and `/openapi.json` come from the
 * schemas of `protocol.ts`; `/health`, `/metrics`, `/docs`; one `onError`
 * that turns every refusal into `{ code, message }` with a 4xx status.
 *
 * @module
 */
import { createRoute, OpenAPIHono, z } from "@hono/zod-openapi";
import { HTTPException } from "hono/http-exception";
import type { Context } from "hono";
import { actionTools } from "../../mod.ts";
import { logFailure } from "../../engine/log.ts";
import type { Catalog } from "./catalog.ts";
import { docsPage } from "./docs.ts";
import { proposalRoutes } from "./proposals.ts";
import { HttpError } from "./http_error.ts";
import type { Metrics } from "./metrics.ts";
import {
  BatchRequest,
  BatchResponse,
  ErrorBody,
  GroupCreated,
  GroupSpec,
  HealthBody,
  ObservationBody,
  ObservationMode,
  ResetRequest,
  SessionCreated,
  SessionSpec,
  SessionState,
  StepRequest,
  StepResponse,
  TaskPage,
  TaskQuery,
  VerdictBody,
} from "./protocol.ts";
import type { SessionManager } from "./sessions.ts";
import { mountOpenEnv } from "./openenv.ts";
import { mountOrs } from "./ors.ts";
import { strictRoutes } from "./_strict.ts";
import { hostGuard, type HostPolicy } from "./_guard.ts";
import { jsonBodies, MAX_BODY_BYTES, MAX_JSON_DEPTH } from "./_json_body.ts";

/** What the app is built from. */
export interface AppOptions {
  /** The sessions. */
  sessions: SessionManager;
  /** The sites and tasks. */
  catalog: Catalog;
  /** The counters. */
  metrics: Metrics;
  /** Whether the browser is connected now. */
  browserConnected: () => boolean;
  /**
   * A token every request but `/health` must carry (bearer, `X-API-Key` or
   * `?token=`); none when absent.
   */
  token?: string;
  /**
   * The largest request body, in bytes.
   *
   * @default {1048576}
   */
  maxBodyBytes?: number;
  /**
   * The names the server answers to (`_guard.ts`); without it, any `Host`,
   * but cross-origin browser requests are still refused.
   */
  hosts?: HostPolicy;
  /**
   * How many task proposals one client may make in a minute.
   *
   * @default {30}
   */
  proposalsPerMinute?: number;
}

const json = <T extends z.ZodType>(schema: T, description: string) => ({
  content: { "application/json": { schema } },
  description,
});

const ERRORS = {
  400: json(ErrorBody, "Bad input"),
  401: json(ErrorBody, "Missing or wrong bearer token"),
  403: json(ErrorBody, "A foreign Host or Origin (DNS rebinding, cross-site requests)"),
  404: json(ErrorBody, "Unknown session, task or site"),
  409: json(ErrorBody, "Not possible in the session's state"),
  410: json(ErrorBody, "The session expired or was closed"),
  422: json(ErrorBody, "A bare start URL did not load"),
  405: json(ErrorBody, "The path is served under other methods; see Allow"),
  413: json(ErrorBody, "The body is larger than the server takes"),
  415: json(ErrorBody, 'The body is not sent as "content-type: application/json"'),
  429: json(ErrorBody, "Too many live sessions; see Retry-After"),
  500: json(ErrorBody, "Our bug (logged with its stack); retrying will not help"),
  503: json(ErrorBody, "Our side failed (browser, site, sandbox); see Retry-After"),
} as const;

const SessionId = z.object({
  id: z.string().min(1).max(100).openapi({ param: { name: "id", in: "path" } }),
});

/**
 * Builds the app.
 *
 * @param options the sessions, catalog, metrics and token
 * @returns the Hono app
 */
export function createApp(options: AppOptions): OpenAPIHono {
  const { sessions, catalog, metrics } = options;
  const app = new OpenAPIHono({
    defaultHook(result, c) {
      if (!result.success) {
        const issue = result.error.issues[0];
        const where = issue?.path.length ? `"${issue.path.join(".")}": ` : "";
        metrics.error("bad-request");
        return c.json({
          code: "bad-request",
          message: `Invalid request: ${where}${issue?.message}`,
        }, 400);
      }
    },
  });

  // Who may ask comes first: a foreign Host or Origin is refused before the token is read.
  // An answer given before the request's body was read (a refused host, a
  // missing token, a 404) leaves that body in the connection: the client is
  // told not to reuse it, instead of finding it closed under its next request.
  app.use("*", async (c, next) => {
    const request = c.req.raw;
    // Read before the route runs: an upgraded request (a WebSocket) has no body to ask after.
    if (request.body === null) return await next();
    try {
      await next();
    } finally {
      if (!request.bodyUsed) c.header("connection", "close");
    }
  });
  app.use("*", hostGuard(options.hosts ?? { loopback: false, port: () => undefined }));
  app.use("*", async (c, next) => {
    const token = options.token;
    if (!token || c.req.path === "/health") return await next();
    const header = c.req.header("authorization");
    // ORS's client sends its key (ORS_API_KEY) as X-API-Key.
    const given = header?.startsWith("Bearer ")
      ? header.slice(7)
      : c.req.header("x-api-key") ?? c.req.query("token");
    if (!given || !equalTimingSafe(given, token)) {
      throw new HttpError(401, "unauthorized", "A valid bearer token is required");
    }
    await next();
  });
  // Every route that takes a body, the OpenEnv, ORS and MCP ones included, reads it through here.
  app.use(
    "*",
    jsonBodies({ maxBytes: options.maxBodyBytes ?? MAX_BODY_BYTES, maxDepth: MAX_JSON_DEPTH }),
  );

  const document = { openapi: "3.1.0", info: { title: "WebServ rollout server", version: "1" } };
  const strict = strictRoutes(app, document);
  app.use("*", strict.query);

  app.onError((error, c) => {
    if (error instanceof HttpError) {
      metrics.error(error.code);
      for (const [name, value] of Object.entries(error.headers)) c.header(name, value);
      return c.json({ code: error.code, message: error.message }, error.status);
    }
    if (error instanceof HTTPException) {
      const status = error.status >= 500 ? 400 : error.status;
      metrics.error("bad-request");
      return c.json({ code: "bad-request", message: error.message || "Bad request" }, status);
    }
    // A body that is not JSON is the caller's; any other error (a TypeError
    // included) is our bug, logged with its stack.
    if (error instanceof SyntaxError) {
      metrics.error("bad-request");
      return c.json({ code: "bad-request", message: error.message }, 400);
    }
    metrics.error("internal");
    logFailure(`${c.req.method} ${c.req.path}: unexpected error`, error, "internal");
    return c.json({ code: "internal", message: "The server failed to handle the request" }, 500);
  });
  app.notFound((c) =>
    strict.methodNotAllowed(c) ??
      c.json({ code: "not-found", message: `No route "${c.req.path}"` }, 404)
  );

  app.openapi(
    createRoute({
      method: "post",
      path: "/v1/sessions",
      summary: "Open a session",
      description: "From a task id, a site with template and seed, or a bare start URL.",
      request: {
        body: { content: { "application/json": { schema: SessionSpec } }, required: true },
      },
      responses: {
        201: json(SessionCreated, "The session, its first observation and lease"),
        ...ERRORS,
      },
    }),
    async (c) => c.json(await sessions.create(c.req.valid("json")), 201),
  );

  app.openapi(
    createRoute({
      method: "get",
      path: "/v1/sessions",
      summary: "List live sessions",
      responses: {
        200: json(z.object({ sessions: z.array(SessionState) }), "The sessions"),
        ...ERRORS,
      },
    }),
    (c) => c.json({ sessions: sessions.list() }, 200),
  );

  app.openapi(
    createRoute({
      method: "get",
      path: "/v1/sessions/{id}",
      summary: "A session's state",
      request: { params: SessionId },
      responses: { 200: json(SessionState, "Task, step count, URL, elapsed time"), ...ERRORS },
    }),
    (c) => c.json(sessions.state(c.req.valid("param").id), 200),
  );

  app.openapi(
    createRoute({
      method: "delete",
      path: "/v1/sessions/{id}",
      summary: "Close a session",
      request: { params: SessionId },
      responses: { 200: json(z.object({ closed: z.boolean() }), "Closed"), ...ERRORS },
    }),
    async (c) => {
      const id = c.req.valid("param").id;
      sessions.state(id);
      return c.json({ closed: await sessions.close(id) }, 200);
    },
  );

  app.openapi(
    createRoute({
      method: "post",
      path: "/v1/sessions/{id}/step",
      summary: "Take one action",
      description: "Every result carries a status; a reward only comes with ok and action_error. " +
        "The reward is the verifier's when the episode ends (stop or max_steps) on a task, else 0. " +
        "A malformed action is the agent's: action_error with code invalid-action.",
      request: {
        params: SessionId,
        body: { content: { "application/json": { schema: StepRequest } }, required: true },
      },
      responses: {
        200: json(StepResponse, "The step's result"),
        ...ERRORS,
        410: json(StepResponse, "The session expired: status expired"),
      },
    }),
    async (c) => {
      const result = await sessions.step(c.req.valid("param").id, c.req.valid("json"));
      return result.status === "expired" ? c.json(result, 410) : c.json(result, 200);
    },
  );

  app.openapi(
    createRoute({
      method: "get",
      path: "/v1/sessions/{id}/observe",
      summary: "Observe the active tab",
      request: {
        params: SessionId,
        query: z.object({ mode: ObservationMode.optional() }),
      },
      responses: { 200: json(ObservationBody, "The observation"), ...ERRORS },
    }),
    async (c) => {
      const { id } = c.req.valid("param");
      return c.json(await sessions.observe(id, c.req.valid("query").mode), 200);
    },
  );

  app.openapi(
    createRoute({
      method: "get",
      path: "/v1/sessions/{id}/screenshot",
      summary: "A PNG of the active tab",
      request: {
        params: SessionId,
        query: z.object({ marks: z.enum(["true", "false", "1", "0"]).optional() }),
      },
      responses: {
        200: {
          content: { "image/png": { schema: z.string().openapi({ format: "binary" }) } },
          description: "PNG",
        },
        ...ERRORS,
      },
    }),
    async (c) => {
      const { id } = c.req.valid("param");
      const marks = ["true", "1"].includes(c.req.valid("query").marks ?? "false");
      const png = await sessions.screenshot(id, marks);
      return c.body(png.slice().buffer, 200, {
        "content-type": "image/png",
        "cache-control": "no-store",
      });
    },
  );

  app.openapi(
    createRoute({
      method: "post",
      path: "/v1/sessions/{id}/reset",
      summary: "Start a new episode",
      description: "Optionally on a new seed or task; the site back to its state, a fresh context.",
      request: {
        params: SessionId,
        body: { content: { "application/json": { schema: ResetRequest } }, required: false },
      },
      responses: { 200: json(SessionCreated, "The first observation and lease"), ...ERRORS },
    }),
    async (c) => {
      const { id } = c.req.valid("param");
      const body = await c.req.json().catch(() => ({}));
      const parsed = ResetRequest.safeParse(body ?? {});
      if (!parsed.success) {
        throw new HttpError(
          400,
          "bad-request",
          `Invalid request: ${parsed.error.issues[0]?.message}`,
        );
      }
      return c.json(await sessions.reset(id, parsed.data), 200);
    },
  );

  app.openapi(
    createRoute({
      method: "post",
      path: "/v1/sessions/{id}/verify",
      summary: "Run the task's verifier now",
      request: { params: SessionId },
      responses: { 200: json(VerdictBody, "The verdict"), ...ERRORS },
    }),
    async (c) => c.json(await sessions.verify(c.req.valid("param").id), 200),
  );

  app.openapi(
    createRoute({
      method: "post",
      path: "/v1/groups",
      summary: "Open a group of sessions on one task and seed",
      description: "Each session has its own sandbox instance and browser context (GRPO groups).",
      request: { body: { content: { "application/json": { schema: GroupSpec } }, required: true } },
      responses: { 201: json(GroupCreated, "The group"), ...ERRORS },
    }),
    async (c) => {
      const { n, ...spec } = c.req.valid("json");
      return c.json(await sessions.createGroup(spec, n), 201);
    },
  );

  app.openapi(
    createRoute({
      method: "post",
      path: "/v1/batch/step",
      summary: "Step many sessions at once",
      description: "Per-session results; one failure does not fail the batch.",
      request: {
        body: { content: { "application/json": { schema: BatchRequest } }, required: true },
      },
      responses: { 200: json(BatchResponse, "The results, in request order"), ...ERRORS },
    }),
    async (c) => {
      const { steps } = c.req.valid("json");
      const results = await Promise.all(steps.map(async (step) => {
        try {
          const result = await sessions.step(step.session_id, step);
          return { session_id: step.session_id, result };
        } catch (error) {
          const { code, message } = error instanceof HttpError
            ? error
            : { code: "internal", message: String(error) };
          return { session_id: step.session_id, error: { code, message } };
        }
      }));
      return c.json({ results }, 200);
    },
  );

  app.openapi(
    createRoute({
      method: "get",
      path: "/v1/tasks",
      summary: "List tasks",
      description: "Seed by seed, every chosen template for each seed; a page at a time",
      request: { query: TaskQuery },
      responses: { 200: json(TaskPage, "A page of tasks"), ...ERRORS },
    }),
    (c) => {
      const query = c.req.valid("query");
      return c.json(
        catalog.list({
          ...(query.site !== undefined ? { site: query.site } : {}),
          ...(query.template !== undefined ? { template: query.template } : {}),
          ...(query.split !== undefined ? { split: query.split } : {}),
          ...(query.offset !== undefined ? { offset: query.offset } : {}),
          ...(query.limit !== undefined ? { limit: query.limit } : {}),
        }),
        200,
      );
    },
  );

  app.openapi(
    createRoute({
      method: "get",
      path: "/v1/tools",
      summary: "The action space as tool definitions",
      request: { query: z.object({ format: z.enum(["openai", "anthropic"]).optional() }) },
      responses: {
        200: json(z.object({ tools: z.array(z.record(z.string(), z.unknown())) }), "The tools"),
        ...ERRORS,
      },
    }),
    (c) => {
      const tools = actionTools(c.req.valid("query").format ?? "openai") as unknown as Record<
        string,
        unknown
      >[];
      return c.json({ tools }, 200);
    },
  );

  app.openapi(
    createRoute({
      method: "get",
      path: "/health",
      summary: "Capacity",
      responses: { 200: json(HealthBody, "Live, max and free sessions") },
    }),
    (c) => {
      const live = sessions.live;
      const browser = options.browserConnected();
      return c.json({
        status: browser ? "healthy" as const : "degraded" as const,
        live,
        max: sessions.max,
        free: Math.max(0, sessions.max - live),
        browser,
      }, 200);
    },
  );

  app.get("/metrics", (c) =>
    c.text(metrics.render(sessions.live), 200, {
      "content-type": "text/plain; version=0.0.4; charset=utf-8",
    }));

  mountOpenEnv(app, sessions);
  mountOrs(app, sessions, catalog);

  app.get("/openapi.json", (c: Context) => c.json(strict.document()));
  let docs: { for: unknown; html: string } | undefined;
  app.get("/docs", (c: Context) => {
    const current = strict.document();
    if (docs?.for !== current) docs = { for: current, html: docsPage(current) };
    return c.html(docs.html);
  });
  proposalRoutes(app, catalog, options.proposalsPerMinute);
  strict.prepare();
  return app;
}

function equalTimingSafe(a: string, b: string): boolean {
  const left = new TextEncoder().encode(a);
  const right = new TextEncoder().encode(b);
  let diff = left.length ^ right.length;
  for (let i = 0; i < Math.max(left.length, right.length); i++) {
    diff |= (left[i] ?? 0) ^ (right[i] ?? 0);
  }
  return diff === 0;
}
