/**
 * The dashboard's JSON routes as OpenAPI declares them: the runs, a run's
 * figures and episodes, and a session's trajectory. Every one takes `run`
 * (a name from `/dashboard/runs`; the run this server records when absent).
 * The figures' and the lines' shapes are declared where they are made
 * (`_run_stats.ts`, `trajectory.ts`); here they are objects.
 *
 * @module
 */
import { createRoute, z } from "@hono/zod-openapi";
import { ErrorBody } from "../protocol.ts";
import { json, SessionId } from "./_shared.ts";

const run = z.string().max(200).optional().openapi({
  description: "A run's name from /dashboard/runs; the run this server records when absent",
});

/** The filters of the figures and the episode list, and the run. */
const RunQuery = z.object({
  run,
  site: z.string().optional(),
  template: z.string().optional(),
  split: z.string().optional(),
  outcome: z.string().optional().openapi({
    description: "success, failure, truncated, unfinished or running",
  }),
  error: z.string().optional().openapi({ description: "An error code" }),
});

/** One run of the list. */
export const RunEntryBody = z.object({
  id: z.string().openapi({ description: "The run's name, what ?run= takes" }),
  current: z.boolean().openapi({ description: "Whether this server records it (live sessions)" }),
  episodes: z.number().int(),
  sessions: z.number().int(),
  first: z.number().nullable().openapi({
    description: "First episode's start, ms since the epoch",
  }),
  last: z.number().nullable().openapi({ description: "Last activity, ms since the epoch" }),
}).openapi("RunEntry");

const FREE_OBJECT = z.record(z.string(), z.unknown());

/** `GET /dashboard/runs`. */
export const listRuns = createRoute({
  method: "get",
  path: "/dashboard/runs",
  summary: "The runs the dashboard can show",
  responses: {
    200: json(
      z.object({ runs: z.array(RunEntryBody) }),
      "The current run first, then newest first",
    ),
  },
});

/** `GET /dashboard/stats`. */
export const runStatsRoute = createRoute({
  method: "get",
  path: "/dashboard/stats",
  summary: "A run's figures",
  request: { query: RunQuery },
  responses: {
    200: json(FREE_OBJECT.openapi("RunStats"), "The run at a glance (see docs/dashboard.md)"),
    400: json(ErrorBody, "A bad filter"),
    404: json(ErrorBody, "Unknown run"),
  },
});

/** `GET /dashboard/episodes`. */
export const runEpisodes = createRoute({
  method: "get",
  path: "/dashboard/episodes",
  summary: "A run's episodes, newest first",
  request: {
    query: RunQuery.extend({
      limit: z.string().optional().openapi({ description: "1 to 1000, 200 when absent" }),
    }),
  },
  responses: {
    200: json(
      z.object({ total: z.number().int(), episodes: z.array(FREE_OBJECT) }),
      "The episodes the filters pass, newest first",
    ),
    400: json(ErrorBody, "A bad filter or limit"),
    404: json(ErrorBody, "Unknown run"),
  },
});

/** `GET /dashboard/trajectories/{id}`. */
export const sessionTrajectory = createRoute({
  method: "get",
  path: "/dashboard/trajectories/{id}",
  summary: "A session's trajectory lines",
  request: { params: SessionId, query: z.object({ run }) },
  responses: {
    200: json(z.object({ session: z.string(), events: z.array(FREE_OBJECT) }), "Oldest first"),
    400: json(ErrorBody, "A session id that is not a plain name"),
    404: json(ErrorBody, "No trajectory for the session, or an unknown run"),
  },
});
