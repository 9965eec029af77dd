/**
 * The task catalog and the action space: `GET /v1/tasks` (a page of tasks,
 * seed by seed), `GET /v1/tools` (the actions as tool definitions), and the
 * task proposals beside them (`proposals.ts`).
 *
 * @module
 */
import { createRoute, type OpenAPIHono, z } from "@hono/zod-openapi";
import { actionTools } from "../../../mod.ts";
import { TaskPage, TaskQuery } from "../protocol.ts";
import { proposalRoutes } from "./proposals.ts";
import { ERRORS, json, type RouteDeps } from "./_shared.ts";

const listTasks = createRoute({
  method: "get",
  path: "/v1/tasks",
  summary: "List tasks",
  description: "Seed by seed, every chosen template for each seed; a page at a time",
  request: { query: TaskQuery },
  responses: { 200: json(TaskPage, "A page of tasks"), ...ERRORS },
});

const listTools = createRoute({
  method: "get",
  path: "/v1/tools",
  summary: "The action space as tool definitions",
  request: { query: z.object({ format: z.enum(["openai", "anthropic"]).optional() }) },
  responses: {
    200: json(z.object({ tools: z.array(z.record(z.string(), z.unknown())) }), "The tools"),
    ...ERRORS,
  },
});

/**
 * Declares the task, tool and proposal routes on the app.
 *
 * @param app the app
 * @param deps the catalog
 */
export function taskRoutes(
  app: OpenAPIHono,
  { catalog, proposalsPerMinute }: Pick<RouteDeps, "catalog"> & { proposalsPerMinute?: number },
): void {
  app.openapi(listTasks, (c) => {
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
  });
  app.openapi(listTools, (c) => {
    const format = c.req.valid("query").format ?? "openai";
    const tools = actionTools(format) as unknown as Record<string, unknown>[];
    return c.json({ tools }, 200);
  });
  proposalRoutes(app, catalog, proposalsPerMinute);
}
