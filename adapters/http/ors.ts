/**
 * The Open Reward Standard (ORS, openrewardstandard.io) beside the session
 * API, matched against its reference client and server in `ors-sdk` 0.1.0
 * from PyPI (`ors/client/*.py`, `ors/server.py`): one environment,
 * `webserv`, whose routes sit under that literal name so nothing shadows
 * `/v1/*`.
 *
 * - Tasks come from the catalog: splits `train` and `test` as it has them,
 *   a task spec is `{"task": "<id>"}`. `POST /webserv/tasks` lists the
 *   split's first {@linkcode ORS_LIST_LIMIT} tasks (a split is seeds ×
 *   templates, too many to list); `num_tasks`, `task` and `task_range`
 *   index the whole split.
 * - A session: `POST /create_session` mints an ORS session id (SSE: a
 *   `task_id` event, then `end`); `POST /create` (header `X-Session-ID`)
 *   opens a WebServ session on the task, keyed by that id; `POST /ping`
 *   renews its lease (the client pings every 10 s); `POST /delete` and
 *   `/delete_session` close it.
 * - `GET /webserv/prompt` is the instruction and the first observation as
 *   text blocks; `GET /webserv/tools` (and `task_tools`) one tool per action.
 * - `POST /webserv/call` (SSE: `task_id`, comment heartbeats, `end`) is one
 *   step: `{ok: true, output: {blocks, metadata, reward, finished}}`, the
 *   reward the verifier's once the episode ends, `finished` when it is done
 *   or truncated. An `action_error` (or arguments a tool refuses) is the
 *   agent's: an error text it reads, the episode goes on. Our failures
 *   (`env_error`, `timeout`, `expired`) and an unknown tool are
 *   `{ok: false, error}`, which the client raises; never a reward. A
 *   retried call carries the first one's `task_id`, which is the step's
 *   `request_id`, so it is answered, not taken twice.
 *
 * The server's token is accepted as `X-API-Key` (the client's header, from
 * `ORS_API_KEY`); bad input gets the server's typed 4xx.
 *
 * @module
 */
import { createRoute, type OpenAPIHono, z } from "@hono/zod-openapi";
import { streamSSE } from "hono/streaming";
import { actionTools, parseToolCall } from "../../mod.ts";
import type { Catalog } from "./catalog.ts";
import { HttpError } from "./http_error.ts";
import { ErrorBody, type StepResponse, TASK_ID_PATTERN } from "./protocol.ts";
import type { SessionManager } from "./sessions.ts";

/** The environment's name: the first segment of its routes. */
export const ORS_ENV = "webserv";

/** How many tasks `POST /webserv/tasks` lists: the split's first. */
export const ORS_LIST_LIMIT = 50;

/** The most tasks one `task_range` answers. */
const RANGE_LIMIT = 100;

/** How many ORS ids of sessions closed without `/delete` are remembered. */
const TOMBSTONES = 1000;

/** How often a running call's stream carries a heartbeat comment. */
const HEARTBEAT_MS = 10_000;

const Split = z.enum(["train", "test"]);
const TaskSpec = z.object({
  task: z.string().min(1).max(200).regex(TASK_ID_PATTERN).openapi({
    description: 'A task id, "site/template/seed"',
  }),
}).strict().openapi("OrsTaskSpec");
const Sid = z.object({
  "x-session-id": z.string().min(1).max(100).openapi({
    description: "The ORS session id /create_session minted",
  }),
});
const TextBlock = z.object({
  type: z.literal("text"),
  text: z.string(),
  detail: z.record(z.string(), z.unknown()).nullable().optional(),
}).openapi("OrsTextBlock");
const Tools = z.object({
  tools: z.array(z.object({
    name: z.string(),
    description: z.string(),
    input_schema: z.record(z.string(), z.unknown()),
  })),
}).openapi("OrsTools");
const SidBody = z.object({ sid: z.string() }).openapi("OrsSid");

const json = <T extends z.ZodType>(schema: T, description: string) => ({
  content: { "application/json": { schema } },
  description,
});
// Each event of the stream, as an SSE parser reads it (comments are no events).
const SseEvent = z.object({
  event: z.string().optional(),
  data: z.string().optional(),
  id: z.string().optional(),
  retry: z.number().optional(),
}).openapi("OrsSseEvent");
const sse = (description: string) => ({
  content: { "text/event-stream": { schema: SseEvent } },
  description,
});

const REFUSED = {
  400: json(ErrorBody, "Bad input"),
  401: json(ErrorBody, "Missing or wrong token (X-API-Key or bearer)"),
  403: json(ErrorBody, "A foreign Host or Origin (DNS rebinding, cross-site requests)"),
  413: json(ErrorBody, "The body is larger than the server takes"),
  415: json(ErrorBody, 'The body is not sent as "content-type: application/json"'),
} as const;
const IN_SESSION = {
  ...REFUSED,
  404: json(ErrorBody, "No ORS session with this id (none was created, or it was deleted)"),
  410: json(ErrorBody, "The session expired"),
} as const;

/** One ORS session: the WebServ session behind it and what its prompt is. */
interface Entry {
  id: string;
  instruction: string;
  firstText: string;
}

/**
 * Adds the ORS routes to the app.
 *
 * @param app the app
 * @param sessions the sessions
 * @param catalog the tasks
 */
export function mountOrs(app: OpenAPIHono, sessions: SessionManager, catalog: Catalog): void {
  const bySid = new Map<string, Entry>();
  const sidById = new Map<string, string>();
  // A session closed behind ORS's back (reaped, closed over /v1) keeps a small
  // entry, so its next call is `expired` ({ok: false}), not an unknown id; the
  // oldest such entries go past TOMBSTONES (a client that never deletes).
  const closed = new Set<string>();
  sessions.subscribe((event) => {
    if (event.type !== "closed") return;
    const sid = sidById.get(event.session);
    if (sid === undefined) return;
    sidById.delete(event.session);
    bySid.set(sid, { id: event.session, instruction: "", firstText: "" });
    closed.add(sid);
    for (const old of closed) {
      if (closed.size <= TOMBSTONES) break;
      closed.delete(old);
      bySid.delete(old);
    }
  });
  const tools = () =>
    actionTools("anthropic").map((tool) => ({
      name: tool.name,
      description: tool.description,
      input_schema: tool.input_schema,
    }));
  const entry = (sid: string): Entry => {
    const found = bySid.get(sid);
    if (!found) {
      throw new HttpError(
        404,
        "unknown-ors-session",
        `No ORS session "${sid}": POST /create with this X-Session-ID first`,
      );
    }
    return found;
  };
  const split = (name: string) => {
    const parsed = Split.safeParse(name);
    if (!parsed.success) {
      throw new HttpError(400, "bad-split", `No split "${name}": the splits are "train", "test"`);
    }
    return parsed.data;
  };
  const spec = (task: string) => ({ task });
  const close = async (sid: string) => {
    const found = bySid.get(sid);
    bySid.delete(sid);
    closed.delete(sid);
    if (found && sidById.delete(found.id)) await sessions.close(found.id);
    return { sid };
  };

  app.openapi(
    createRoute({
      method: "get",
      path: "/list_environments",
      summary: "ORS: the environments",
      tags: ["ORS"],
      responses: { 200: json(z.array(z.string()), "Just webserv"), ...REFUSED },
    }),
    (c) => c.json([ORS_ENV], 200),
  );

  app.openapi(
    createRoute({
      method: "post",
      path: "/create_session",
      summary: "ORS: mint a session id (SSE: task_id, then end)",
      tags: ["ORS"],
      responses: { 200: sse("A task_id event carrying the id, then end"), ...REFUSED },
    }),
    (c) =>
      streamSSE(c, async (stream) => {
        await stream.writeSSE({ event: "task_id", data: crypto.randomUUID() });
        await stream.writeSSE({ event: "end", data: "" });
      }) as never,
  );

  app.openapi(
    createRoute({
      method: "post",
      path: "/ping",
      summary: "ORS: keep the session's lease",
      tags: ["ORS"],
      request: { headers: Sid },
      responses: { 200: json(z.object({ status: z.literal("ok") }), "Renewed"), ...IN_SESSION },
    }),
    (c) => {
      // Reading the state renews the lease; a reaped session answers 410.
      sessions.state(entry(c.req.valid("header")["x-session-id"]).id);
      return c.json({ status: "ok" as const }, 200);
    },
  );

  const CreateBody = z.object({
    env_name: z.string().max(100).nullable().optional(),
    task_spec: TaskSpec.nullable().optional(),
    split: Split.nullable().optional(),
    index: z.number().int().min(0).nullable().optional(),
    secrets: z.record(z.string(), z.string()).nullable().optional(),
  }).strict().openapi("OrsCreate");
  app.openapi(
    createRoute({
      method: "post",
      path: "/create",
      summary: "ORS: open the session's episode on a task",
      description: "From task_spec ({task: id}) or split and index; keyed by X-Session-ID.",
      tags: ["ORS"],
      request: {
        headers: Sid,
        body: { content: { "application/json": { schema: CreateBody } }, required: true },
      },
      responses: {
        200: json(SidBody, "Open"),
        ...IN_SESSION,
        409: json(ErrorBody, "This X-Session-ID already has a session"),
        429: json(ErrorBody, "Too many live sessions; see Retry-After"),
        503: json(ErrorBody, "Our side failed (browser, site, sandbox)"),
      },
    }),
    async (c) => {
      const sid = c.req.valid("header")["x-session-id"];
      const body = c.req.valid("json");
      if (body.env_name != null && body.env_name !== ORS_ENV) {
        throw new HttpError(404, "unknown-environment", `No environment "${body.env_name}"`);
      }
      const bySpec = body.task_spec != null;
      const byIndex = body.split != null && body.index != null;
      if (bySpec === byIndex || (body.split == null) !== (body.index == null)) {
        throw new HttpError(
          400,
          "bad-request",
          "Provide either task_spec or both split and index, not both/neither",
        );
      }
      if (bySid.has(sid)) {
        throw new HttpError(409, "session-exists", `ORS session "${sid}" already exists`);
      }
      const task = bySpec ? body.task_spec!.task : taskAt(body.split!, body.index!);
      const created = await sessions.create({ task });
      if (bySid.has(sid)) {
        // Two concurrent creates for one id: the later one is refused.
        await sessions.close(created.id);
        throw new HttpError(409, "session-exists", `ORS session "${sid}" already exists`);
      }
      sidById.set(created.id, sid);
      bySid.set(sid, {
        id: created.id,
        instruction: created.task?.instruction ?? "",
        firstText: created.observation.text,
      });
      return c.json({ sid }, 200);
    },
  );

  for (const path of ["/delete", "/delete_session"]) {
    app.openapi(
      createRoute({
        method: "post",
        path,
        summary: "ORS: close the session",
        tags: ["ORS"],
        request: { headers: Sid },
        responses: { 200: json(SidBody, "Closed (or already gone)"), ...REFUSED },
      }),
      async (c) => c.json(await close(c.req.valid("header")["x-session-id"]), 200),
    );
  }

  app.openapi(
    createRoute({
      method: "get",
      path: `/${ORS_ENV}/splits`,
      summary: "ORS: the splits",
      tags: ["ORS"],
      responses: {
        200: json(z.array(z.object({ name: Split, type: Split })), "train and test"),
        ...REFUSED,
      },
    }),
    (c) =>
      c.json([{ name: "train" as const, type: "train" as const }, {
        name: "test" as const,
        type: "test" as const,
      }], 200),
  );

  for (const path of [`/${ORS_ENV}/tools`, `/${ORS_ENV}/task_tools`]) {
    app.openapi(
      createRoute({
        method: "get",
        path,
        summary: "ORS: one tool per action",
        tags: ["ORS"],
        responses: { 200: json(Tools, "The tools"), ...REFUSED },
      }),
      (c) => c.json({ tools: tools() }, 200),
    );
  }

  const SplitBody = z.object({ split: z.string().max(100) }).strict();
  const taskAt = (name: string, index: number) => {
    const chosen = split(name);
    if (index >= catalog.count({ split: chosen })) {
      throw new HttpError(400, "bad-index", `No task ${index} in split "${chosen}"`);
    }
    return catalog.ids({ split: chosen, offset: index, limit: 1 })[0]!;
  };
  const TaskList = z.object({ tasks: z.array(TaskSpec), env_name: z.string().optional() });

  app.openapi(
    createRoute({
      method: "post",
      path: `/${ORS_ENV}/tasks`,
      summary: `ORS: the split's first ${ORS_LIST_LIMIT} tasks`,
      tags: ["ORS"],
      request: { body: { content: { "application/json": { schema: SplitBody } }, required: true } },
      responses: { 200: json(TaskList.openapi("OrsTasks"), "Task specs"), ...REFUSED },
    }),
    (c) => {
      const chosen = split(c.req.valid("json").split);
      const ids = catalog.ids({ split: chosen, limit: ORS_LIST_LIMIT });
      return c.json({ tasks: ids.map(spec), env_name: ORS_ENV }, 200);
    },
  );

  app.openapi(
    createRoute({
      method: "post",
      path: `/${ORS_ENV}/num_tasks`,
      summary: "ORS: how many tasks the split has",
      tags: ["ORS"],
      request: { body: { content: { "application/json": { schema: SplitBody } }, required: true } },
      responses: { 200: json(z.object({ num_tasks: z.number().int() }), "The count"), ...REFUSED },
    }),
    (c) => c.json({ num_tasks: catalog.count({ split: split(c.req.valid("json").split) }) }, 200),
  );

  app.openapi(
    createRoute({
      method: "post",
      path: `/${ORS_ENV}/task`,
      summary: "ORS: the split's task at an index",
      tags: ["ORS"],
      request: {
        body: {
          content: {
            "application/json": {
              schema: SplitBody.extend({ index: z.number().int().min(0) }).strict(),
            },
          },
          required: true,
        },
      },
      responses: { 200: json(z.object({ task: TaskSpec }), "The task spec"), ...REFUSED },
    }),
    (c) => {
      const { split: name, index } = c.req.valid("json");
      return c.json({ task: spec(taskAt(name, index)) }, 200);
    },
  );

  app.openapi(
    createRoute({
      method: "post",
      path: `/${ORS_ENV}/task_range`,
      summary: `ORS: the split's tasks in range(start, stop), at most ${RANGE_LIMIT}`,
      description: "Python's slice rules: negative indices count from the end.",
      tags: ["ORS"],
      request: {
        body: {
          content: {
            "application/json": {
              schema: SplitBody.extend({
                start: z.number().int().nullable().optional(),
                stop: z.number().int().nullable().optional(),
              }).strict(),
            },
          },
          required: true,
        },
      },
      responses: { 200: json(TaskList, "Task specs"), ...REFUSED },
    }),
    (c) => {
      const body = c.req.valid("json");
      const chosen = split(body.split);
      const size = catalog.count({ split: chosen });
      const clamp = (i: number) => Math.min(size, Math.max(0, i < 0 ? size + i : i));
      const start = clamp(body.start ?? 0);
      const stop = clamp(body.stop ?? size);
      if (stop - start > RANGE_LIMIT) {
        throw new HttpError(
          400,
          "bad-index",
          `The range holds ${stop - start} tasks; ask for at most ${RANGE_LIMIT} at a time`,
        );
      }
      const tasks = stop <= start
        ? []
        : catalog.ids({ split: chosen, offset: start, limit: stop - start });
      return c.json({ tasks: tasks.map(spec) }, 200);
    },
  );

  app.openapi(
    createRoute({
      method: "get",
      path: `/${ORS_ENV}/prompt`,
      summary: "ORS: the instruction and the first observation",
      tags: ["ORS"],
      request: { headers: Sid },
      responses: { 200: json(z.array(TextBlock), "Text blocks"), ...IN_SESSION },
    }),
    (c) => {
      const found = entry(c.req.valid("header")["x-session-id"]);
      sessions.state(found.id);
      return c.json([
        { type: "text" as const, text: found.instruction },
        { type: "text" as const, text: found.firstText },
      ], 200);
    },
  );

  const CallBody = z.object({
    name: z.string().min(1).max(100),
    input: z.record(z.string(), z.unknown()),
    task_id: z.string().min(1).max(200).nullable().optional(),
  }).strict().openapi("OrsToolCall");
  app.openapi(
    createRoute({
      method: "post",
      path: `/${ORS_ENV}/call`,
      summary: "ORS: one tool call, one step (SSE: task_id, end)",
      description: "The end event carries {ok: true, output: {blocks, metadata, reward, " +
        "finished}}, or {ok: false, error} for our failures and unknown tools.",
      tags: ["ORS"],
      request: {
        headers: Sid,
        body: { content: { "application/json": { schema: CallBody } }, required: true },
      },
      responses: { 200: sse("task_id, heartbeat comments, end"), ...IN_SESSION },
    }),
    (c) => {
      const found = entry(c.req.valid("header")["x-session-id"]);
      const { name, input, task_id } = c.req.valid("json");
      const requestId = task_id ?? crypto.randomUUID();
      return streamSSE(c, async (stream) => {
        await stream.writeSSE({ event: "task_id", data: requestId });
        const heartbeat = setInterval(() => {
          stream.write(": ping\n\n").catch(() => {});
        }, HEARTBEAT_MS);
        try {
          const result = await call(found.id, name, input, requestId);
          await stream.writeSSE({ event: "end", data: JSON.stringify(result) });
        } finally {
          clearInterval(heartbeat);
        }
      }) as never;
    },
  );

  /** One tool call's outcome, as ORS's `RunToolOutput`. */
  async function call(
    id: string,
    name: string,
    input: Record<string, unknown>,
    requestId: string,
  ): Promise<Record<string, unknown>> {
    if (!tools().some((tool) => tool.name === name)) {
      return { ok: false, error: `'${name}' is not a valid tool: see /${ORS_ENV}/tools` };
    }
    let action: Record<string, unknown>;
    try {
      action = { ...parseToolCall(name, input) };
    } catch (error) {
      // The agent's malformed call: an error it reads and fixes; no step taken.
      return output(
        `Error (invalid-action): ${(error as Error).message}`,
        {
          status: "action_error",
        },
        0,
        false,
      );
    }
    const result = await sessions.step(id, { action, request_id: requestId });
    return stepOutput(result);
  }
}

function output(
  text: string,
  metadata: Record<string, unknown>,
  reward: number | null,
  finished: boolean,
): Record<string, unknown> {
  return { ok: true, output: { blocks: [{ type: "text", text }], metadata, reward, finished } };
}

/**
 * A step as ORS's `RunToolOutput`: our failures are `{ok: false}`.
 *
 * @param result the step
 * @returns the output
 */
function stepOutput(result: StepResponse): Record<string, unknown> {
  if (result.status !== "ok" && result.status !== "action_error") {
    return { ok: false, error: `${result.status}: ${result.info.error?.message ?? "failed"}` };
  }
  const page = result.observation?.text ?? "";
  const text = result.status === "action_error"
    ? `Error (${result.info.error?.code}): ${result.info.error?.message}\n\n${page}`
    : page;
  return output(
    text,
    {
      status: result.status,
      step: result.info.step,
      done: result.done,
      truncated: result.truncated,
      url: result.observation?.url ?? "",
      ...(result.info.verdict ? { verdict: result.info.verdict } : {}),
      ...(result.info.answer !== undefined ? { answer: result.info.answer } : {}),
    },
    result.reward ?? null,
    result.done || result.truncated,
  );
}
