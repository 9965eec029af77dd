/**
 * The session API: open, list, read, close, step, observe, screenshot,
 * reset, verify and fork a session (`/v1/sessions…`). Each handler hands its
 * validated input to the `SessionManager` and shapes its answer; the
 * session's lifecycle lives there, not here.
 *
 * @module
 */
import { createRoute, type OpenAPIHono, z } from "@hono/zod-openapi";
import { HttpError } from "../http_error.ts";
import {
  ForkCreated,
  ForkRequest,
  ObservationBody,
  ObservationMode,
  ResetRequest,
  SessionCreated,
  SessionSpec,
  SessionState,
  StepRequest,
  StepResponse,
  VerdictBody,
} from "../protocol.ts";
import { ERRORS, json, type RouteDeps, SessionId } from "./_shared.ts";

const open = createRoute({
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
});

const list = createRoute({
  method: "get",
  path: "/v1/sessions",
  summary: "List live sessions",
  responses: {
    200: json(z.object({ sessions: z.array(SessionState) }), "The sessions"),
    ...ERRORS,
  },
});

const state = createRoute({
  method: "get",
  path: "/v1/sessions/{id}",
  summary: "A session's state",
  request: { params: SessionId },
  responses: { 200: json(SessionState, "Task, step count, URL, elapsed time"), ...ERRORS },
});

const close = createRoute({
  method: "delete",
  path: "/v1/sessions/{id}",
  summary: "Close a session",
  request: { params: SessionId },
  responses: { 200: json(z.object({ closed: z.boolean() }), "Closed"), ...ERRORS },
});

const step = createRoute({
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
});

const observe = createRoute({
  method: "get",
  path: "/v1/sessions/{id}/observe",
  summary: "Observe the active tab",
  request: {
    params: SessionId,
    query: z.object({ mode: ObservationMode.optional() }),
  },
  responses: { 200: json(ObservationBody, "The observation"), ...ERRORS },
});

const screenshot = createRoute({
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
});

const reset = createRoute({
  method: "post",
  path: "/v1/sessions/{id}/reset",
  summary: "Start a new episode",
  description: "Optionally on a new seed or task; the site back to its state, a fresh context.",
  request: {
    params: SessionId,
    body: { content: { "application/json": { schema: ResetRequest } }, required: false },
  },
  responses: { 200: json(SessionCreated, "The first observation and lease"), ...ERRORS },
});

const verify = createRoute({
  method: "post",
  path: "/v1/sessions/{id}/verify",
  summary: "Run the task's verifier now",
  request: { params: SessionId },
  responses: { 200: json(VerdictBody, "The verdict"), ...ERRORS },
});

const fork = createRoute({
  method: "post",
  path: "/v1/sessions/{id}/fork",
  summary: "Fork a live episode into n sessions",
  description: "Each fork runs on a copy of the session's site state (database and files) and " +
    "browser state (URL, cookies, storage, scroll, typed fields) at this moment, on the same " +
    "task and seed, with its step count and trajectory prefix; writes never cross between them. " +
    "A fork's reset returns it to the task's start.",
  request: {
    params: SessionId,
    body: { content: { "application/json": { schema: ForkRequest } }, required: true },
  },
  responses: {
    201: json(ForkCreated, "The forks, each with its observation and lease"),
    ...ERRORS,
  },
});

/**
 * Declares the session API on the app.
 *
 * @param app the app
 * @param deps the sessions
 */
export function sessionRoutes(app: OpenAPIHono, { sessions }: Pick<RouteDeps, "sessions">): void {
  app.openapi(open, async (c) => c.json(await sessions.create(c.req.valid("json")), 201));
  app.openapi(list, (c) => c.json({ sessions: sessions.list() }, 200));
  app.openapi(state, (c) => c.json(sessions.state(c.req.valid("param").id), 200));
  app.openapi(close, async (c) => {
    const id = c.req.valid("param").id;
    sessions.state(id);
    return c.json({ closed: await sessions.close(id) }, 200);
  });
  app.openapi(step, async (c) => {
    const result = await sessions.step(c.req.valid("param").id, c.req.valid("json"));
    return result.status === "expired" ? c.json(result, 410) : c.json(result, 200);
  });
  app.openapi(observe, async (c) => {
    const { id } = c.req.valid("param");
    return c.json(await sessions.observe(id, c.req.valid("query").mode), 200);
  });
  app.openapi(screenshot, async (c) => {
    const { id } = c.req.valid("param");
    const marks = ["true", "1"].includes(c.req.valid("query").marks ?? "false");
    const png = await sessions.screenshot(id, marks);
    return c.body(png.slice().buffer, 200, {
      "content-type": "image/png",
      "cache-control": "no-store",
    });
  });
  app.openapi(reset, async (c) => {
    const request = resetRequest(await c.req.json().catch(() => ({})));
    return c.json(await sessions.reset(c.req.valid("param").id, request), 200);
  });
  app.openapi(verify, async (c) => c.json(await sessions.verify(c.req.valid("param").id), 200));
  app.openapi(fork, async (c) => {
    const { id } = c.req.valid("param");
    return c.json(await sessions.fork(id, c.req.valid("json").n), 201);
  });
}

/**
 * A reset's body: optional, so an empty or absent one is a plain reset.
 *
 * @param body the body, `{}` when absent or not JSON
 * @returns the reset's new seed or task
 * @throws {HttpError} 400 when the body is not a reset request
 */
function resetRequest(body: unknown): ResetRequest {
  const parsed = ResetRequest.safeParse(body ?? {});
  if (!parsed.success) {
    throw new HttpError(400, "bad-request", `Invalid request: ${parsed.error.issues[0]?.message}`);
  }
  return parsed.data;
}
