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
 * - `POST /mcp` (MCP's JSON-RPC, OpenEnv's session handshake) is in `mcp.ts`.
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
import { ERRORS, json } from "./_shared.ts";
import {
  observationPayload,
  OPENENV_VERSION,
  openingSpec,
  parseReset,
  pydanticIssues,
  type SplitTasks,
  stepPayload,
} from "../_openenv.ts";

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

const REFUSED = {
  400: ERRORS[400],
  401: ERRORS[401],
  403: ERRORS[403],
  413: ERRORS[413],
  415: ERRORS[415],
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
