/**
 * OpenEnv's shapes, shared by the WebSocket (`/ws`) and OpenEnv's HTTP
 * routes (`/reset`, `/step`, `/state`, …): reset options checked the way
 * OpenEnv's pydantic models check them (unknown keys refused, the errors in
 * pydantic's `{type, loc, msg, input}` list), the spec a reset opens, and
 * the observation payload its clients parse (`{observation, reward, done}`,
 * WebServ's extras beside them and in `observation.metadata`).
 *
 * Matched against openenv-core 0.3.0 from PyPI
 * (`openenv/core/env_server/http_server.py`, `types.py`, `env_client.py`,
 * `generic_client.py`).
 *
 * @module
 */
import type { Catalog } from "./catalog.ts";
import type { z } from "@hono/zod-openapi";
import { type ObservationBody, SessionSpec, type StepResponse } from "./protocol.ts";
import { respec } from "./_build.ts";

/** The openenv-core version whose protocol this server speaks. */
export const OPENENV_VERSION = "0.3.0";

/** One validation error, as pydantic reports it (OpenEnv's error details). */
export interface ValidationIssue {
  /** pydantic's error type, such as `"extra_forbidden"`. */
  type: string;
  /** Where: the path to the offending value. */
  loc: (string | number)[];
  /** What is wrong, for a person. */
  msg: string;
  /** The offending value. */
  input: unknown;
}

/** What a reset asks for: the spec's changes and the episode's id. */
export interface ResetOptions {
  /** The session spec's keys the reset sets. */
  spec: SessionSpec;
  /** The client's episode id, when it gave one. */
  episodeId?: string;
}

/** The outcome of checking reset options. */
export type ParsedReset =
  | { ok: true; options: ResetOptions }
  | { ok: false; issues: ValidationIssue[] };

const SPEC_KEYS = Object.keys(SessionSpec.shape);
/**
 * Keys a reset may carry: OpenEnv's (`seed`, `episode_id`), `task_id`, the
 * Task API's `split` and `index`, and the session spec's.
 */
export const RESET_KEYS: readonly string[] = [
  "episode_id",
  "task_id",
  "split",
  "index",
  ...SPEC_KEYS,
];

/** The tasks a split holds, as the catalog counts and lists them. */
export type SplitTasks = Pick<Catalog, "count" | "ids">;

/**
 * The task at an index of a split (OpenEnv's Task API, ORS's `split` and
 * `index`): `train` or `test`, counted as `GET /v1/tasks` lists them.
 *
 * @param tasks the catalog
 * @param split the split's name
 * @param index the index in it
 * @returns the task id, or why there is none
 */
export function taskAtIndex(
  tasks: SplitTasks,
  split: unknown,
  index: unknown,
): { id: string } | { error: string } {
  if (split !== "train" && split !== "test") {
    return { error: `No split ${JSON.stringify(split)}: the splits are "train", "test"` };
  }
  const count = tasks.count({ split });
  if (typeof index !== "number" || !Number.isInteger(index) || index < 0 || index >= count) {
    return {
      error: `No task ${JSON.stringify(index)} in split "${split}": it has ${count} (0-${
        count - 1
      })`,
    };
  }
  return { id: tasks.ids({ split, offset: index, limit: 1 })[0]! };
}

/**
 * Checks reset options: every key known, every value valid.
 *
 * @param data the reset's `data` (WebSocket) or body (HTTP)
 * @param loc where `data` sits, for the errors' `loc`
 * @param tasks the catalog a `split` and `index` are resolved in
 * @returns the options, or the issues in pydantic's shape
 */
export function parseReset(
  data: Record<string, unknown>,
  loc: string[],
  tasks?: SplitTasks,
): ParsedReset {
  const issues: ValidationIssue[] = [];
  const { episode_id: episodeId, task_id: taskId, split, index, ...rest } = data;
  if (split !== undefined || index !== undefined) {
    const found = tasks === undefined || split === undefined || index === undefined
      ? { error: '"split" and "index" name a task together: give both' }
      : taskAtIndex(tasks, split, index);
    if ("error" in found) {
      issues.push({ type: "value_error", loc: [...loc, "index"], msg: found.error, input: index });
    } else if (taskId !== undefined || rest.task !== undefined) {
      issues.push({
        type: "value_error",
        loc: [...loc, "split"],
        msg: 'Give a task by "task" or by "split" and "index", not both',
        input: split,
      });
    } else rest.task = found.id;
  }
  for (const key of Object.keys(data)) {
    if (!RESET_KEYS.includes(key)) {
      issues.push({
        type: "extra_forbidden",
        loc: [...loc, key],
        msg: `Extra inputs are not permitted: the reset options are ${RESET_KEYS.join(", ")}`,
        input: data[key],
      });
    }
  }
  if (episodeId !== undefined && (typeof episodeId !== "string" || episodeId.length > 255)) {
    issues.push({
      type: "string_type",
      loc: [...loc, "episode_id"],
      msg: "episode_id must be a string of at most 255 characters",
      input: episodeId,
    });
  }
  if (taskId !== undefined) {
    if (rest.task !== undefined && rest.task !== taskId) {
      issues.push({
        type: "value_error",
        loc: [...loc, "task_id"],
        msg: '"task_id" and "task" name different tasks: give one',
        input: taskId,
      });
    } else rest.task = taskId;
  }
  const known = Object.fromEntries(Object.entries(rest).filter(([key]) => SPEC_KEYS.includes(key)));
  const parsed = SessionSpec.safeParse(known);
  if (!parsed.success) issues.push(...pydanticIssues(parsed.error, loc));
  if (issues.length > 0 || !parsed.success) return { ok: false, issues };
  return {
    ok: true,
    options: { spec: parsed.data, ...(typeof episodeId === "string" ? { episodeId } : {}) },
  };
}

/**
 * zod's issues in pydantic's shape.
 *
 * @param error zod's error
 * @param loc where the checked value sits
 * @returns the issues
 */
export function pydanticIssues(error: z.ZodError, loc: (string | number)[]): ValidationIssue[] {
  return error.issues.map((issue) => ({
    type: issue.code,
    loc: [...loc, ...issue.path.map((p) => typeof p === "symbol" ? String(p) : p)],
    msg: issue.message,
    input: issue.input,
  }));
}

/** The spec keys only a new session can change (its instance or start). */
const PLACEMENT_KEYS = [
  "site",
  "template",
  "url",
  "target",
  "record_screenshots",
  "idle_timeout_s",
];

/**
 * Whether a reset's options need a new session rather than a reset of the
 * open one (a new site, URL, placement target or lease).
 *
 * @param spec the reset's spec keys
 * @returns whether the session must be opened anew
 */
export function needsNewSession(spec: SessionSpec): boolean {
  return PLACEMENT_KEYS.some((key) => key in spec);
}

/**
 * The spec a reset opens a session with: the connection's last spec with the
 * reset's keys over it (a new task, site or URL replaces the others), the
 * default task when none is named, and a seed applied to the task's site
 * and template.
 *
 * @param base the connection's last spec
 * @param change the reset's keys
 * @param defaultTask the task to run when none is named
 * @returns the spec
 */
export function openingSpec(
  base: SessionSpec,
  change: SessionSpec,
  defaultTask: string | undefined,
): SessionSpec {
  let next: SessionSpec = { ...base };
  if (change.task !== undefined || change.site !== undefined || change.url !== undefined) {
    delete next.task, delete next.site, delete next.template, delete next.url, delete next.seed;
  }
  const { seed, ...rest } = change;
  next = { ...next, ...rest };
  if (next.task === undefined && next.site === undefined && next.url === undefined) {
    if (defaultTask !== undefined) next.task = defaultTask;
  }
  return seed === undefined ? next : respec(next, { seed });
}

/** An observation as OpenEnv's clients parse it, WebServ's fields beside. */
export interface OpenEnvPayload {
  /** The observation, its `metadata` inside. */
  observation: Record<string, unknown>;
  /** The reward; `null` at reset. */
  reward: number | null;
  /** Whether the episode is over, truncation included. */
  done: boolean;
  /** WebServ's extras: `status`, `truncated`, `info`, `task`. */
  [extra: string]: unknown;
}

/** Why an episode was cut short. */
export type TruncationReason = "max_steps" | "episode_limit";

/**
 * The `data` of an OpenEnv observation message (and the body of OpenEnv's
 * HTTP `/reset` and `/step`): the observation with WebServ's step facts in
 * its `metadata`, the reward, and `done`, which is true when the episode
 * ended or was truncated (OpenEnv's client keeps only these three).
 *
 * @param observation the observation
 * @param reward the reward; `null` at reset
 * @param done whether the episode is over, truncation included
 * @param metadata what else the agent's loop may read
 * @param extra WebServ's fields beside OpenEnv's
 * @returns the payload
 */
export function observationPayload(
  observation: ObservationBody,
  reward: number | null,
  done: boolean,
  metadata: Record<string, unknown>,
  extra: Record<string, unknown> = {},
): OpenEnvPayload {
  return { observation: { ...observation, metadata }, reward, done, ...extra };
}

/**
 * A step's OpenEnv payload, when it has one: `ok` and `action_error` are
 * observations; `env_error`, `timeout` and `expired` are not (the caller
 * raises them as errors, so no loop reads them as a step).
 *
 * @param result the step's result
 * @param maxSteps the session's step limit, to name why it was truncated
 * @returns the payload, or `undefined` for a failure of ours
 */
export function stepPayload(
  result: StepResponse,
  maxSteps: number | undefined,
): OpenEnvPayload | undefined {
  if (result.status !== "ok" && result.status !== "action_error") return undefined;
  if (result.observation === null) return undefined;
  const reason: TruncationReason | undefined = !result.truncated
    ? undefined
    : maxSteps !== undefined && result.info.step >= maxSteps
    ? "max_steps"
    : "episode_limit";
  return observationPayload(
    result.observation,
    result.reward ?? 0,
    result.done || result.truncated,
    {
      status: result.status,
      step: result.info.step,
      terminated: result.done,
      truncated: result.truncated,
      ...(reason ? { truncation_reason: reason } : {}),
      ...(result.info.error ? { error: result.info.error } : {}),
      ...(result.info.verdict ? { verdict: result.info.verdict } : {}),
      ...(result.info.answer !== undefined ? { answer: result.info.answer } : {}),
    },
    { status: result.status, truncated: result.truncated, info: result.info },
  );
}
