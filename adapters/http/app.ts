/**
 * The rollout server's app: the middleware every request passes (who may
 * ask, the token, bounded JSON bodies, undeclared query parameters), one
 * `onError` that turns every refusal into `{ code, message }`, and the
 * faces, each mounted from its module under `routes/`. Routes are declared
 * with `@hono/zod-openapi`, so validation and `/openapi.json` come from the
 * schemas of `protocol.ts`.
 *
 * @module
 */
import type { OpenAPIHono } from "@hono/zod-openapi";
import { HTTPException } from "hono/http-exception";
import type { Context, MiddlewareHandler } from "hono";
import { logFailure } from "../../engine/log.ts";
import type { Catalog } from "./catalog.ts";
import { HttpError } from "./http_error.ts";
import type { Metrics } from "./metrics.ts";
import type { SessionManager } from "./sessions.ts";
import type { TrajectoryLog } from "./trajectory.ts";
import { strictRoutes } from "./_strict.ts";
import { hostGuard, type HostPolicy } from "./_guard.ts";
import { jsonBodies, MAX_BODY_BYTES, MAX_JSON_DEPTH } from "./_json_body.ts";
import { mountDashboard } from "./routes/dashboard.ts";
import { groupRoutes } from "./routes/groups.ts";
import { healthRoutes } from "./routes/health.ts";
import { mountMcp } from "./routes/mcp.ts";
import { mountOpenEnv } from "./routes/openenv.ts";
import { openapiRoutes } from "./routes/openapi.ts";
import { mountOrs } from "./routes/ors.ts";
import { sessionRoutes } from "./routes/sessions.ts";
import { taskRoutes } from "./routes/tasks.ts";
import { mountWebSocket } from "./routes/websocket.ts";
import { routeApp } from "./routes/_shared.ts";

/** What the app is built from. */
export interface AppOptions {
  /**
   * How many task proposals one client may make in a minute.
   *
   * @default {30}
   */
  proposalsPerMinute?: number;
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
  /** Where trajectories go, for the dashboard's session page; none when absent. */
  trajectories?: TrajectoryLog;
  /**
   * Other runs the dashboard lists, read only: run directories, or parents
   * holding runs one level down.
   *
   * @default {[]}
   */
  runs?: readonly string[];
  /**
   * The cap on messages one WebSocket connection has queued.
   *
   * @default {64}
   */
  wsMaxQueued?: number;
}

/**
 * Builds the app.
 *
 * @param options the sessions, catalog, metrics and token
 * @returns the Hono app
 */
export function createApp(options: AppOptions): OpenAPIHono {
  const { sessions, catalog, metrics, browserConnected } = options;
  const app = routeApp(metrics);

  // Who may ask comes first: a foreign Host or Origin is refused before the token is read.
  app.use("*", closeUnreadBodies);
  app.use("*", hostGuard(options.hosts ?? { loopback: false, port: () => undefined }));
  app.use("*", bearerToken(options.token));
  // Every route that takes a body, the OpenEnv, ORS and MCP ones included, reads it through here.
  app.use(
    "*",
    jsonBodies({ maxBytes: options.maxBodyBytes ?? MAX_BODY_BYTES, maxDepth: MAX_JSON_DEPTH }),
  );
  const document = { openapi: "3.1.0", info: { title: "WebServ rollout server", version: "1" } };
  const strict = strictRoutes(app, document);
  app.use("*", strict.query);
  app.onError((error, c) => refusal(error, c, metrics));
  app.notFound((c) =>
    strict.methodNotAllowed(c) ??
      c.json({ code: "not-found", message: `No route "${c.req.path}"` }, 404)
  );

  sessionRoutes(app, { sessions });
  groupRoutes(app, { sessions });
  taskRoutes(app, {
    catalog,
    ...(options.proposalsPerMinute !== undefined
      ? { proposalsPerMinute: options.proposalsPerMinute }
      : {}),
  });
  healthRoutes(app, { sessions, metrics, browserConnected });
  mountOpenEnv(app, sessions, catalog);
  mountMcp(app, sessions);
  mountOrs(app, sessions, catalog);
  // Before the document is made: the dashboard's JSON routes are in it.
  mountDashboard(app, {
    sessions,
    trajectories: options.trajectories,
    ...(options.runs ? { runs: options.runs } : {}),
  });
  openapiRoutes(app, strict.document);
  strict.prepare();
  mountWebSocket(app, sessions, {
    metrics,
    tasks: catalog,
    ...(options.wsMaxQueued !== undefined ? { maxQueued: options.wsMaxQueued } : {}),
  });
  return app;
}

/**
 * An answer given before the request's body was read (a refused host, a
 * missing token, a 404) leaves that body in the connection: the client is
 * told not to reuse it, instead of finding it closed under its next request.
 */
const closeUnreadBodies: MiddlewareHandler = async (c, next) => {
  const request = c.req.raw;
  // Read before the route runs: an upgraded request (a WebSocket) has no body to ask after.
  if (request.body === null) return await next();
  try {
    await next();
  } finally {
    if (!request.bodyUsed) c.header("connection", "close");
  }
};

/** Refuses a request without the token (bearer, `X-API-Key` or `?token=`), but `/health`. */
function bearerToken(token: string | undefined): MiddlewareHandler {
  return async (c, next) => {
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
  };
}

/** Every error as `{ code, message }`: ours typed, the caller's 400, anything else our 500. */
function refusal(error: Error, c: Context, metrics: Metrics): Response {
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
