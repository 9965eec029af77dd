/**
 * Many sessions at once: a group opened on one task and seed (GRPO
 * groups, each session on its own instance and context), and a batch of
 * steps across sessions whose failures stay per session.
 *
 * @module
 */
import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import { HttpError } from "../http_error.ts";
import { BatchRequest, BatchResponse, GroupCreated, GroupSpec } from "../protocol.ts";
import type { SessionManager } from "../sessions.ts";
import { ERRORS, json, type RouteDeps } from "./_shared.ts";

const openGroup = createRoute({
  method: "post",
  path: "/v1/groups",
  summary: "Open a group of sessions on one task and seed",
  description: "Each session has its own sandbox instance and browser context (GRPO groups).",
  request: { body: { content: { "application/json": { schema: GroupSpec } }, required: true } },
  responses: { 201: json(GroupCreated, "The group"), ...ERRORS },
});

const batchStep = createRoute({
  method: "post",
  path: "/v1/batch/step",
  summary: "Step many sessions at once",
  description: "Per-session results; one failure does not fail the batch.",
  request: {
    body: { content: { "application/json": { schema: BatchRequest } }, required: true },
  },
  responses: { 200: json(BatchResponse, "The results, in request order"), ...ERRORS },
});

/**
 * Declares the group and batch routes on the app.
 *
 * @param app the app
 * @param deps the sessions
 */
export function groupRoutes(app: OpenAPIHono, { sessions }: Pick<RouteDeps, "sessions">): void {
  app.openapi(openGroup, async (c) => {
    const { n, ...spec } = c.req.valid("json");
    return c.json(await sessions.createGroup(spec, n), 201);
  });
  app.openapi(
    batchStep,
    async (c) => c.json({ results: await stepAll(sessions, c.req.valid("json").steps) }, 200),
  );
}

/** Steps every session of a batch in parallel; a refusal is that session's result. */
function stepAll(sessions: SessionManager, steps: BatchRequest["steps"]) {
  return Promise.all(steps.map(async (step) => {
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
}
