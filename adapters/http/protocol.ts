/**
 * The session protocol, defined once: the zod schemas of every request and
 * response of the rollout server. The HTTP routes validate with them and
 * build `/openapi.json` from them, the WebSocket speaks the same step and
 * observation shapes, and the clients follow them.
 *
 * @module
 */
import { z } from "@hono/zod-openapi";
import { ACTION_SCHEMA } from "../../engine/mod.ts";
import type { ObserveOptions } from "../../engine/mod.ts";
import { MAX_SEED, NAME_PATTERN } from "../../fixtures/sites/kit/mod.ts";

const NAME = NAME_PATTERN.source.replace(/^\^|\$$/g, "");
/** A task id: `site/template/seed`, as `GET /v1/tasks` lists them. */
export const TASK_ID_PATTERN: RegExp = new RegExp(`^${NAME}/${NAME}/(0|[1-9][0-9]*)$`);
const TaskId = z.string().min(1).max(200).regex(TASK_ID_PATTERN);

/** An error as every endpoint returns it. */
export const ErrorBody = z.object({
  code: z.string().openapi({ example: "not-found" }),
  message: z.string().openapi({ example: 'No session "s-12"' }),
}).openapi("Error");
/** An error as every endpoint returns it. */
export type ErrorBody = z.infer<typeof ErrorBody>;

/** How observations are returned: text only, text and elements as JSON, or a diff text. */
export const ObservationMode = z.enum(["text", "json", "diff"]).openapi("ObservationMode");
/** How observations are returned. */
export type ObservationMode = z.infer<typeof ObservationMode>;

/**
 * The observation options an agent may set for its session, beside the
 * mode: the engine's `ObserveOptions` (`engine/observe/observation.ts`) in
 * the protocol's snake case. `observeOptionsOf` maps them to the engine's,
 * and the compiler checks that every key is one of the engine's.
 */
export const ObservationOptionsBody = z.object({
  summarise_after: z.number().int().min(0).max(10_000).optional().openapi({
    description: "Summarise runs of similar siblings longer than this; 0 never does. Default 20",
  }),
  keep_items: z.number().int().min(0).max(1_000).optional().openapi({
    description: "How many items of a summarised run are listed besides those in view. Default 5",
  }),
  max_text: z.number().int().min(10).max(10_000).optional().openapi({
    description: "Longest name or value kept, in characters. Default 100",
  }),
}).strict().openapi("ObservationOptions");
/** The observation options an agent may set. */
export type ObservationOptionsBody = z.infer<typeof ObservationOptionsBody>;

/**
 * The engine's observation options for a session's.
 *
 * @param body the session's options
 * @returns the engine's, only those set
 */
export function observeOptionsOf(
  body: ObservationOptionsBody,
): Pick<ObserveOptions, "summariseAfter" | "keepItems" | "maxText"> {
  return {
    ...(body.summarise_after !== undefined ? { summariseAfter: body.summarise_after } : {}),
    ...(body.keep_items !== undefined ? { keepItems: body.keep_items } : {}),
    ...(body.max_text !== undefined ? { maxText: body.max_text } : {}),
  };
}

/** A viewport in CSS pixels. */
export const ViewportBody = z.object({
  width: z.number().int().min(200).max(4096),
  height: z.number().int().min(200).max(4096),
}).openapi("Viewport");

const ONE_OF_RULE = 'Exactly one of "task", "site" (with "template" and "seed") or "url"';
// The one-of rule as JSON Schema, so generated clients and fuzzers know it:
// with each branch requiring its key, two present keys match two branches.
const ONE_OF = [
  { required: ["task"], title: "A task" },
  { required: ["site"], title: "A site" },
  { required: ["url"], title: "A bare URL" },
];

/** What a session runs: a task id, a site with template and seed, or a bare URL. */
export const SessionSpec = z.object({
  task: TaskId.optional().openapi({
    description: 'A task id from GET /v1/tasks, "site/template/seed", such as "shop/add-to-cart/7"',
  }),
  site: z.string().min(1).max(100).optional().openapi({ description: "A site name" }),
  template: z.string().min(1).max(100).optional().openapi({
    description: "A template of the site; without it the session has no task",
  }),
  seed: z.number().int().min(0).max(MAX_SEED).optional().openapi({
    description: "The seed of the site's data and the task: an integer from 0 to 2^31 - 1",
  }),
  url: z.string().url().max(2000).optional().openapi({
    description: "A bare start URL: no site, no task, reward always 0",
  }),
  viewport: ViewportBody.optional(),
  observation: ObservationMode.optional().openapi({ description: 'Default "text"' }),
  observation_options: ObservationOptionsBody.optional().openapi({
    description: "How the page is distilled: summaries of long runs, text length",
  }),
  max_steps: z.number().int().min(1).max(10_000).optional(),
  record_screenshots: z.boolean().optional().openapi({
    description: "Write a PNG beside the trajectory after every step",
  }),
  target: z.string().min(1).max(100).regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/).optional().openapi({
    description:
      "With the incus backend: the cluster member to place the site's instance on (Incus ?target=)",
  }),
  idle_timeout_s: z.number().int().min(1).max(86_400).optional().openapi({
    description: "This session's idle timeout in seconds, instead of the server's; " +
      "the server's lifetime still caps it",
  }),
}).strict().openapi("SessionSpec", { description: ONE_OF_RULE, oneOf: ONE_OF });
/** What a session runs. */
export type SessionSpec = z.infer<typeof SessionSpec>;

/** A group of sessions on one task and seed. */
export const GroupSpec = SessionSpec.extend({
  n: z.number().int().min(1).max(64).openapi({
    description: "How many sessions; more than the server's --max-sessions is refused (400)",
  }),
}).strict().openapi("GroupSpec", { description: ONE_OF_RULE, oneOf: ONE_OF });
/** A group of sessions on one task and seed. */
export type GroupSpec = z.infer<typeof GroupSpec>;

/** A tab of the env. */
export const TabBody = z.object({
  index: z.number().int(),
  title: z.string(),
  url: z.string(),
  active: z.boolean(),
});

/** An observation as the server returns it. */
export const ObservationBody = z.object({
  text: z.string().openapi({ description: "The compact page text with element ids" }),
  url: z.string(),
  title: z.string(),
  tabs: z.array(TabBody),
  elements: z.array(z.record(z.string(), z.unknown())).optional().openapi({
    description: 'With observation "json": every element with an id',
  }),
  diff: z.object({
    added: z.array(z.number()),
    removed: z.array(z.number()),
    changed: z.array(z.number()),
  }).optional(),
  dialog: z.record(z.string(), z.unknown()).optional(),
}).openapi("Observation");
/** An observation as the server returns it. */
export type ObservationBody = z.infer<typeof ObservationBody>;

/** A session's lease: renewed by every use. */
export const LeaseBody = z.object({
  expires_at: z.string().openapi({ description: "When the session is reaped if left idle" }),
  idle_timeout_s: z.number(),
  hard_expires_at: z.string().openapi({ description: "The end of the session's lifetime" }),
}).openapi("Lease");
/** A session's lease. */
export type LeaseBody = z.infer<typeof LeaseBody>;

/** A task as listed. */
export const TaskBody = z.object({
  id: z.string(),
  site: z.string(),
  template: z.string(),
  seed: z.number(),
  instruction: z.string(),
  split: z.enum(["train", "test"]).optional().openapi({
    description: 'Seeds 0-999 are "train", 1000 and up "test"',
  }),
  difficulty: z.enum(["easy", "medium", "hard"]).optional(),
  kind: z.string().optional().openapi({ description: '"state", "information" or "navigation"' }),
  proven: z.literal(false).optional().openapi({
    description: "false on an accepted task proposal: no solver has won it",
  }),
}).openapi("Task");
/** A task as listed. */
export type TaskBody = z.infer<typeof TaskBody>;

/**
 * A task as `GET /v1/tasks` lists it: described from its template, nothing
 * seeded, so without the instruction when that is drawn from the seed's data
 * (a recreated site's tasks); a session opened on it shows the whole task.
 */
// From TaskBody's fields, not `TaskBody.extend()`: an extension of a named
// schema is documented as `allOf` with it, which requires the instruction.
export const ListedTask = z.object({
  ...TaskBody.shape,
  instruction: z.string().optional().openapi({
    description: "Absent when drawn from the seed's data: open a session for it",
  }),
}).openapi("ListedTask");
/** A task as listed. */
export type ListedTask = z.infer<typeof ListedTask>;

/** Which tasks `GET /v1/tasks` lists. */
export const TaskQuery = z.object({
  site: z.string().max(100).optional(),
  template: z.string().max(100).optional(),
  split: z.enum(["train", "test"]).optional().openapi({ description: 'Default "train"' }),
  offset: z.coerce.number().int().min(0).max(2 ** 40).optional(),
  // Listing describes tasks from their templates, seeding nothing; 100 keeps
  // a page small; more is paged with `next_offset`.
  limit: z.coerce.number().int().min(1).max(100).optional().openapi({
    description: "Default 50, at most 100; page on with next_offset",
  }),
}).openapi("TaskQuery");
/** Which tasks `GET /v1/tasks` lists. */
export type TaskQuery = z.infer<typeof TaskQuery>;

/** A page of tasks. */
export const TaskPage = z.object({
  tasks: z.array(ListedTask),
  next_offset: z.number().nullable().openapi({ description: "null on the last page" }),
}).openapi("TaskPage");
/** A page of tasks. */
export type TaskPage = z.infer<typeof TaskPage>;

/** A new or reset session. */
export const SessionCreated = z.object({
  id: z.string(),
  observation: ObservationBody,
  lease: LeaseBody,
  // A union, not .nullable(): that becomes allOf [ref, nullable], which null fails.
  task: z.union([TaskBody, z.null()]),
  group: z.string().optional(),
}).openapi("SessionCreated");
/** A new or reset session. */
export type SessionCreated = z.infer<typeof SessionCreated>;

/** A group of sessions. */
export const GroupCreated = z.object({
  group: z.string(),
  sessions: z.array(SessionCreated),
}).openapi("GroupCreated");
/** A group of sessions. */
export type GroupCreated = z.infer<typeof GroupCreated>;

/** The most forks one request makes (the engine's `MAX_FORKS`). */
export const MAX_FORKS = 16;

/** A fork request: how many copies of the live episode. */
export const ForkRequest = z.object({
  n: z.number().int().min(1).max(MAX_FORKS).openapi({
    description: "How many forks, 1 to 16; more than the free session capacity is refused (429)",
  }),
}).strict().openapi("ForkRequest");
/** A fork request. */
export type ForkRequest = z.infer<typeof ForkRequest>;

/** The forks of a session: new sessions on copies of its site and browser state. */
export const ForkCreated = z.object({
  sessions: z.array(SessionCreated),
}).openapi("ForkCreated");
/** The forks of a session. */
export type ForkCreated = z.infer<typeof ForkCreated>;

/**
 * An action, documented with the engine's schema (`ACTION_SCHEMA`, from the
 * one declaration in `engine/act/action.ts`). Any object passes here: the
 * step validates it with the same declaration, so that a malformed action is
 * the agent's `action_error` (`invalid-action`, the field and why), not a 400.
 */
export const ActionBody = z.record(z.string(), z.unknown()).openapi("Action", {
  description:
    'An action such as {"action": "click", "id": 12}, one of the variants; validated by the step: ' +
    "a malformed one is action_error with code invalid-action. As tools: GET /v1/tools",
  oneOf: ACTION_SCHEMA.oneOf as Record<string, never>[],
  example: { action: "click", id: 12 },
});

/** One action for one session. */
export const StepRequest = z.object({
  action: ActionBody,
  request_id: z.string().min(1).max(200).optional().openapi({
    description: "A retried step with the same id returns the first result",
  }),
}).openapi("StepRequest");
/** One action for one session. */
export type StepRequest = z.infer<typeof StepRequest>;

/**
 * The outcome of a step: `ok`; `action_error` (the agent's fault, the
 * episode goes on); `env_error` (ours); `timeout` (our deadline passed);
 * `expired` (the session is gone). Only `ok` and `action_error` carry a reward.
 */
export const StepStatus = z.enum(["ok", "action_error", "env_error", "timeout", "expired"])
  .openapi("StepStatus");
/** The outcome of a step. */
export type StepStatus = z.infer<typeof StepStatus>;

/** A verifier's judgement. */
export const VerdictBody = z.object({
  reward: z.number(),
  reason: z.string(),
  components: z.record(z.string(), z.number()).optional().openapi({
    description: "The reward's parts, each 0 or 1: task (the asked outcome) and harm (1 when " +
      "nothing else changed; absent on change tasks)",
  }),
}).openapi("Verdict");
/** A verifier's judgement. */
export type VerdictBody = z.infer<typeof VerdictBody>;

/** The result of one step. */
export const StepResponse = z.object({
  status: StepStatus,
  observation: z.union([ObservationBody, z.null()]),
  reward: z.number().optional().openapi({
    description: "Only with ok and action_error: the verifier's reward when the episode " +
      "ends on a task, else 0",
  }),
  done: z.boolean(),
  truncated: z.boolean(),
  info: z.object({
    step: z.number().int(),
    elapsed_ms: z.number(),
    settle: z.record(z.string(), z.unknown()).optional(),
    error: ErrorBody.optional(),
    verdict: VerdictBody.optional(),
    answer: z.string().optional(),
  }),
}).openapi("StepResponse");
/** The result of one step. */
export type StepResponse = z.infer<typeof StepResponse>;

/**
 * Reset options: a new seed or task, and the episode options that may
 * change between episodes. Unknown keys are refused.
 */
export const ResetRequest = z.object({
  seed: z.number().int().min(0).max(MAX_SEED).optional(),
  task: TaskId.optional(),
  max_steps: z.number().int().min(1).max(10_000).optional(),
  observation: ObservationMode.optional(),
  observation_options: ObservationOptionsBody.optional(),
  viewport: ViewportBody.optional(),
}).strict().openapi("ResetRequest");
/** Reset options. */
export type ResetRequest = z.infer<typeof ResetRequest>;

/** A session's state. */
export const SessionState = z.object({
  id: z.string(),
  // A union, not .nullable(): that becomes allOf [ref, nullable], which null fails.
  task: z.union([TaskBody, z.null()]),
  step: z.number().int(),
  url: z.string(),
  elapsed_s: z.number(),
  created_at: z.string(),
  done: z.boolean(),
  rewards: z.array(z.number()),
  lease: LeaseBody,
  group: z.string().optional(),
}).openapi("SessionState");
/** A session's state. */
export type SessionState = z.infer<typeof SessionState>;

/** Steps for many sessions. */
export const BatchRequest = z.object({
  steps: z.array(z.object({
    session_id: z.string().min(1).max(100),
    action: ActionBody,
    request_id: z.string().min(1).max(200).optional(),
  })).min(1).max(256),
}).openapi("BatchRequest");
/** Steps for many sessions. */
export type BatchRequest = z.infer<typeof BatchRequest>;

/** Per-session results of a batch. */
export const BatchResponse = z.object({
  results: z.array(z.object({
    session_id: z.string(),
    result: StepResponse.optional(),
    error: ErrorBody.optional(),
  })),
}).openapi("BatchResponse");
/** Per-session results of a batch. */
export type BatchResponse = z.infer<typeof BatchResponse>;

/** The server's capacity. */
export const HealthBody = z.object({
  status: z.enum(["healthy", "degraded"]).openapi({
    description: 'OpenEnv\'s values: "degraded" while the browser is not connected',
  }),
  live: z.number().int(),
  max: z.number().int(),
  free: z.number().int(),
  browser: z.boolean().openapi({ description: "Whether the browser is connected" }),
}).openapi("Health");
/** The server's capacity. */
export type HealthBody = z.infer<typeof HealthBody>;
