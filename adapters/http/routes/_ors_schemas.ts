/**
 * The shapes of the ORS routes (`ors.ts`), as `ors-sdk` 0.1.0 sends and
 * reads them.
 *
 * @module
 */
import { z } from "@hono/zod-openapi";
import { ErrorBody, TASK_ID_PATTERN } from "../protocol.ts";
import { json } from "./_shared.ts";

/** The environment's name: the first segment of its routes. */
export const ORS_ENV = "webserv";

/** How many tasks `POST /webserv/tasks` lists: the split's first. */
export const ORS_LIST_LIMIT = 50;

/** The most tasks one `task_range` answers. */
export const RANGE_LIMIT = 100;

/** A split's name. */
export const Split = z.enum(["train", "test"]);
/** A task spec: `{"task": "<id>"}`. */
export const TaskSpec = z.object({
  task: z.string().min(1).max(200).regex(TASK_ID_PATTERN).openapi({
    description: 'A task id, "site/template/seed"',
  }),
}).strict().openapi("OrsTaskSpec");
/** The header carrying the ORS session id. */
export const Sid = z.object({
  "x-session-id": z.string().min(1).max(100).openapi({
    description: "The ORS session id /create_session minted",
  }),
});
/** A text block of a prompt or an output. */
export const TextBlock = z.object({
  type: z.literal("text"),
  text: z.string(),
  detail: z.record(z.string(), z.unknown()).nullable().optional(),
}).openapi("OrsTextBlock");
/** The tools, as ORS lists them. */
export const Tools = z.object({
  tools: z.array(z.object({
    name: z.string(),
    description: z.string(),
    input_schema: z.record(z.string(), z.unknown()),
  })),
}).openapi("OrsTools");
/** An answer naming the ORS session. */
export const SidBody = z.object({ sid: z.string() }).openapi("OrsSid");

/** Each event of the stream, as an SSE parser reads it (comments are no events). */
export const SseEvent = z.object({
  event: z.string().optional(),
  data: z.string().optional(),
  id: z.string().optional(),
  retry: z.number().optional(),
}).openapi("OrsSseEvent");
/** An SSE response entry. */
export function sse(
  description: string,
): { content: { "text/event-stream": { schema: typeof SseEvent } }; description: string } {
  return { content: { "text/event-stream": { schema: SseEvent } }, description };
}

/** The refusals every ORS route documents. */
export const REFUSED = {
  400: json(ErrorBody, "Bad input"),
  401: json(ErrorBody, "Missing or wrong token (X-API-Key or bearer)"),
  403: json(ErrorBody, "A foreign Host or Origin (DNS rebinding, cross-site requests)"),
  413: json(ErrorBody, "The body is larger than the server takes"),
  415: json(ErrorBody, 'The body is not sent as "content-type: application/json"'),
} as const;
/** The refusals of the routes that act in a session. */
export const IN_SESSION = {
  ...REFUSED,
  404: json(ErrorBody, "No ORS session with this id (none was created, or it was deleted)"),
  410: json(ErrorBody, "The session expired"),
} as const;

/** The body of `POST /create`: a task spec, or a split and an index. */
export const CreateBody = z.object({
  env_name: z.string().max(100).nullable().optional(),
  task_spec: TaskSpec.nullable().optional(),
  split: Split.nullable().optional(),
  index: z.number().int().min(0).nullable().optional(),
  secrets: z.record(z.string(), z.string()).nullable().optional(),
}).strict().openapi("OrsCreate");

/** A body naming a split. */
export const SplitBody = z.object({ split: z.string().max(100) }).strict();

/** A list of task specs. */
export const TaskList = z.object({ tasks: z.array(TaskSpec), env_name: z.string().optional() });

/** The body of `POST /webserv/call`: one tool call. */
export const CallBody = z.object({
  name: z.string().min(1).max(100),
  input: z.record(z.string(), z.unknown()),
  task_id: z.string().min(1).max(200).nullable().optional(),
}).strict().openapi("OrsToolCall");
