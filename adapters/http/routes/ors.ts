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
import type { Catalog } from "../catalog.ts";
import { HttpError } from "../http_error.ts";
import { ErrorBody } from "../protocol.ts";
import type { SessionManager } from "../sessions.ts";
import { orsCall, orsTools } from "./_ors_call.ts";
import {
  CallBody,
  CreateBody,
  IN_SESSION,
  ORS_ENV,
  ORS_LIST_LIMIT,
  RANGE_LIMIT,
  REFUSED,
  Sid,
  SidBody,
  Split,
  SplitBody,
  sse,
  TaskList,
  TaskSpec,
  TextBlock,
  Tools,
} from "./_ors_schemas.ts";
import { OrsSessions } from "./_ors_sessions.ts";
import { json } from "./_shared.ts";

export { ORS_ENV, ORS_LIST_LIMIT } from "./_ors_schemas.ts";

/** How often a running call's stream carries a heartbeat comment. */
const HEARTBEAT_MS = 10_000;

const listEnvironments = createRoute({
  method: "get",
  path: "/list_environments",
  summary: "ORS: the environments",
  tags: ["ORS"],
  responses: { 200: json(z.array(z.string()), "Just webserv"), ...REFUSED },
});

const createSession = createRoute({
  method: "post",
  path: "/create_session",
  summary: "ORS: mint a session id (SSE: task_id, then end)",
  tags: ["ORS"],
  responses: { 200: sse("A task_id event carrying the id, then end"), ...REFUSED },
});

const ping = createRoute({
  method: "post",
  path: "/ping",
  summary: "ORS: keep the session's lease",
  tags: ["ORS"],
  request: { headers: Sid },
  responses: { 200: json(z.object({ status: z.literal("ok") }), "Renewed"), ...IN_SESSION },
});

const create = createRoute({
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
});

function deletion(path: string) {
  return createRoute({
    method: "post",
    path,
    summary: "ORS: close the session",
    tags: ["ORS"],
    request: { headers: Sid },
    responses: { 200: json(SidBody, "Closed (or already gone)"), ...REFUSED },
  });
}

const splits = createRoute({
  method: "get",
  path: `/${ORS_ENV}/splits`,
  summary: "ORS: the splits",
  tags: ["ORS"],
  responses: {
    200: json(z.array(z.object({ name: Split, type: Split })), "train and test"),
    ...REFUSED,
  },
});

function toolList(path: string) {
  return createRoute({
    method: "get",
    path,
    summary: "ORS: one tool per action",
    tags: ["ORS"],
    responses: { 200: json(Tools, "The tools"), ...REFUSED },
  });
}

const tasks = createRoute({
  method: "post",
  path: `/${ORS_ENV}/tasks`,
  summary: `ORS: the split's first ${ORS_LIST_LIMIT} tasks`,
  tags: ["ORS"],
  request: { body: { content: { "application/json": { schema: SplitBody } }, required: true } },
  responses: { 200: json(TaskList.openapi("OrsTasks"), "Task specs"), ...REFUSED },
});

const numTasks = createRoute({
  method: "post",
  path: `/${ORS_ENV}/num_tasks`,
  summary: "ORS: how many tasks the split has",
  tags: ["ORS"],
  request: { body: { content: { "application/json": { schema: SplitBody } }, required: true } },
  responses: { 200: json(z.object({ num_tasks: z.number().int() }), "The count"), ...REFUSED },
});

const task = createRoute({
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
});

const taskRange = createRoute({
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
});

const prompt = createRoute({
  method: "get",
  path: `/${ORS_ENV}/prompt`,
  summary: "ORS: the instruction and the first observation",
  tags: ["ORS"],
  request: { headers: Sid },
  responses: { 200: json(z.array(TextBlock), "Text blocks"), ...IN_SESSION },
});

const call = createRoute({
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
});

/**
 * Adds the ORS routes to the app.
 *
 * @param app the app
 * @param sessions the sessions
 * @param catalog the tasks
 */
export function mountOrs(app: OpenAPIHono, sessions: SessionManager, catalog: Catalog): void {
  const ors = new OrsSessions(sessions);
  const index = new SplitIndex(catalog);
  const sidOf = (headers: { "x-session-id": string }) => headers["x-session-id"];

  app.openapi(listEnvironments, (c) => c.json([ORS_ENV], 200));
  app.openapi(createSession, (c) =>
    streamSSE(c, async (stream) => {
      await stream.writeSSE({ event: "task_id", data: crypto.randomUUID() });
      await stream.writeSSE({ event: "end", data: "" });
    }) as never);
  app.openapi(ping, (c) => {
    // Reading the state renews the lease; a reaped session answers 410.
    sessions.state(ors.entry(sidOf(c.req.valid("header"))).id);
    return c.json({ status: "ok" as const }, 200);
  });
  app.openapi(create, async (c) => {
    const sid = sidOf(c.req.valid("header"));
    const body = checkedCreate(c.req.valid("json"));
    if (ors.has(sid)) {
      throw new HttpError(409, "session-exists", `ORS session "${sid}" already exists`);
    }
    const chosen = body.task_spec ? body.task_spec.task : index.at(body.split!, body.index!);
    await ors.bind(sid, await sessions.create({ task: chosen }));
    return c.json({ sid }, 200);
  });
  for (const path of ["/delete", "/delete_session"]) {
    app.openapi(
      deletion(path),
      async (c) => c.json(await ors.close(sidOf(c.req.valid("header"))), 200),
    );
  }
  app.openapi(splits, (c) =>
    c.json([{ name: "train" as const, type: "train" as const }, {
      name: "test" as const,
      type: "test" as const,
    }], 200));
  for (const path of [`/${ORS_ENV}/tools`, `/${ORS_ENV}/task_tools`]) {
    app.openapi(toolList(path), (c) => c.json({ tools: orsTools() }, 200));
  }
  app.openapi(tasks, (c) => {
    const ids = index.first(c.req.valid("json").split, ORS_LIST_LIMIT);
    return c.json({ tasks: ids.map(spec), env_name: ORS_ENV }, 200);
  });
  app.openapi(numTasks, (c) => c.json({ num_tasks: index.count(c.req.valid("json").split) }, 200));
  app.openapi(task, (c) => {
    const { split: name, index: at } = c.req.valid("json");
    return c.json({ task: spec(index.at(name, at)) }, 200);
  });
  app.openapi(taskRange, (c) => {
    const { split: name, start, stop } = c.req.valid("json");
    return c.json({ tasks: index.range(name, start ?? 0, stop ?? undefined).map(spec) }, 200);
  });
  app.openapi(prompt, (c) => {
    const found = ors.entry(sidOf(c.req.valid("header")));
    sessions.state(found.id);
    return c.json([
      { type: "text" as const, text: found.instruction },
      { type: "text" as const, text: found.firstText },
    ], 200);
  });
  app.openapi(call, (c) => {
    const found = ors.entry(sidOf(c.req.valid("header")));
    const { name, input, task_id } = c.req.valid("json");
    const requestId = task_id ?? crypto.randomUUID();
    return streamSSE(c, async (stream) => {
      await stream.writeSSE({ event: "task_id", data: requestId });
      const heartbeat = setInterval(() => {
        stream.write(": ping\n\n").catch(() => {});
      }, HEARTBEAT_MS);
      try {
        const result = await orsCall(sessions, found.id, { name, input, requestId });
        await stream.writeSSE({ event: "end", data: JSON.stringify(result) });
      } finally {
        clearInterval(heartbeat);
      }
    }) as never;
  });
}

/** A task id as ORS's task spec. */
function spec(task: string): { task: string } {
  return { task };
}

/**
 * A `POST /create` body that names one task: a task spec, or a split and an index.
 *
 * @throws {HttpError} 404 for another environment, 400 for both or neither
 */
function checkedCreate(body: z.infer<typeof CreateBody>): z.infer<typeof CreateBody> {
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
  return body;
}

/** The catalog's splits, indexed as ORS indexes them. */
class SplitIndex {
  #catalog: Catalog;

  constructor(catalog: Catalog) {
    this.#catalog = catalog;
  }

  /** How many tasks a split has. */
  count(name: string): number {
    return this.#catalog.count({ split: split(name) });
  }

  /** A split's first tasks. */
  first(name: string, limit: number): string[] {
    return this.#catalog.ids({ split: split(name), limit });
  }

  /** A split's task at an index; 400 past its end. */
  at(name: string, index: number): string {
    const chosen = split(name);
    if (index >= this.#catalog.count({ split: chosen })) {
      throw new HttpError(400, "bad-index", `No task ${index} in split "${chosen}"`);
    }
    return this.#catalog.ids({ split: chosen, offset: index, limit: 1 })[0]!;
  }

  /** A split's tasks in `range(start, stop)`, by Python's slice rules; 400 past {@linkcode RANGE_LIMIT}. */
  range(name: string, start: number, stop: number | undefined): string[] {
    const chosen = split(name);
    const size = this.#catalog.count({ split: chosen });
    const clamp = (i: number) => Math.min(size, Math.max(0, i < 0 ? size + i : i));
    const from = clamp(start);
    const to = clamp(stop ?? size);
    if (to - from > RANGE_LIMIT) {
      throw new HttpError(
        400,
        "bad-index",
        `The range holds ${to - from} tasks; ask for at most ${RANGE_LIMIT} at a time`,
      );
    }
    return to <= from ? [] : this.#catalog.ids({ split: chosen, offset: from, limit: to - from });
  }
}

/** A split's name, checked. */
function split(name: string): "train" | "test" {
  const parsed = Split.safeParse(name);
  if (!parsed.success) {
    throw new HttpError(400, "bad-split", `No split "${name}": the splits are "train", "test"`);
  }
  return parsed.data;
}
