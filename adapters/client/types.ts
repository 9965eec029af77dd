/**
 * The rollout server's messages as plain types, for clients. They mirror the
 * zod schemas of `adapters/http/protocol.ts` (the one definition the server
 * validates with); `test/adapters/client/types_test.ts` fails when the two
 * drift apart. The action is the engine's `Action`, derived from the one
 * declaration of the action space (`engine/act/action.ts`).
 *
 * @module
 */
export type { Action, ActionName } from "../../mod.ts";

/** An error as every endpoint returns it. */
export interface ErrorBody {
  /** A stable code, such as `"capacity"`. */
  code: string;
  /** What went wrong. */
  message: string;
}

/** How observations are returned. */
export type ObservationMode = "text" | "json" | "diff";

/** How the page is distilled into an observation. */
export interface ObservationOptions {
  /** Summarise runs of similar siblings longer than this; 0 never does. Default 20. */
  summarise_after?: number | undefined;
  /** How many items of a summarised run are listed besides those in view. Default 5. */
  keep_items?: number | undefined;
  /** Longest name or value kept, in characters (10 to 10000). Default 100. */
  max_text?: number | undefined;
}

/** What a session runs: a task id, a site with template and seed, or a bare URL. */
export interface SessionSpec {
  /** A task id, such as `"shop/add-to-cart/7"`. */
  task?: string | undefined;
  /** A site name. */
  site?: string | undefined;
  /** A template of the site. */
  template?: string | undefined;
  /** The seed of the site's data and the task. */
  seed?: number | undefined;
  /** A bare start URL: no site, no task, reward always 0. */
  url?: string | undefined;
  /** The viewport in CSS pixels. */
  viewport?: { width: number; height: number } | undefined;
  /** How observations are returned. */
  observation?: ObservationMode | undefined;
  /** How the page is distilled. */
  observation_options?: ObservationOptions | undefined;
  /** Steps after which the episode is truncated. */
  max_steps?: number | undefined;
  /** Whether a PNG is written beside the trajectory after every step. */
  record_screenshots?: boolean | undefined;
  /** With the incus backend: the cluster member to place the site's instance on. */
  target?: string | undefined;
  /** This session's idle timeout in seconds, instead of the server's. */
  idle_timeout_s?: number | undefined;
}

/** An observation. */
export interface ObservationBody {
  /** The compact page text with element ids. */
  text: string;
  /** The active tab's URL. */
  url: string;
  /** Its title. */
  title: string;
  /** Every tab. */
  tabs: { index: number; title: string; url: string; active: boolean }[];
  /** With mode `json`: every element with an id. */
  elements?: Record<string, unknown>[] | undefined;
  /** With modes `json` and `diff`: what changed. */
  diff?: { added: number[]; removed: number[]; changed: number[] } | undefined;
  /** An open JavaScript dialog. */
  dialog?: Record<string, unknown> | undefined;
}

/** A session's lease. */
export interface LeaseBody {
  /** When the session is reaped if left idle. */
  expires_at: string;
  /** The idle timeout in seconds. */
  idle_timeout_s: number;
  /** The end of the session's lifetime. */
  hard_expires_at: string;
}

/** A task as listed. */
export interface TaskBody {
  /** `site/template/seed`. */
  id: string;
  /** The site. */
  site: string;
  /** The template. */
  template: string;
  /** The seed. */
  seed: number;
  /** What the agent is asked to do. */
  instruction: string;
  /** `"train"` for seeds 0-999, `"test"` for 1000 and up. */
  split?: "train" | "test" | undefined;
  /** How hard the task is. */
  difficulty?: "easy" | "medium" | "hard" | undefined;
  /** `"state"`, `"information"` or `"navigation"`. */
  kind?: string | undefined;
  /** `false` on an accepted task proposal: no solver has won it. */
  proven?: false | undefined;
}

/**
 * A task as `GET /v1/tasks` lists it: described from its template, nothing
 * seeded, so without the instruction when that is drawn from the seed's data
 * (a recreated site's tasks); a session opened on it has the whole task.
 */
export interface ListedTask extends Omit<TaskBody, "instruction"> {
  /** What the agent is asked; absent when drawn from the seed's data (open a session for it). */
  instruction?: string | undefined;
}

/** Which tasks `GET /v1/tasks` lists. */
export interface TaskQuery {
  /** Only this site's tasks. */
  site?: string | undefined;
  /** Only this template's tasks. */
  template?: string | undefined;
  /** Only seeds of this split; `"train"` when absent. */
  split?: "train" | "test" | undefined;
  /** How many tasks to skip. */
  offset?: number | undefined;
  /** The most tasks listed (default 50, at most 500). */
  limit?: number | undefined;
}

/** A page of tasks. */
export interface TaskPage {
  /** The tasks, seed by seed. */
  tasks: ListedTask[];
  /** The offset of the next page; `null` on the last. */
  next_offset: number | null;
}

/** A new or reset session. */
export interface SessionCreated {
  /** The session id. */
  id: string;
  /** The first observation. */
  observation: ObservationBody;
  /** The lease. */
  lease: LeaseBody;
  /** The task, or `null`. */
  task: TaskBody | null;
  /** The group, for a group's sessions. */
  group?: string | undefined;
}

/** The forks of a session (`POST /v1/sessions/{id}/fork`). */
export interface ForkCreated {
  /** The new sessions, each with its first observation and lease. */
  sessions: SessionCreated[];
}

/** A group of sessions. */
export interface GroupCreated {
  /** The group id. */
  group: string;
  /** Its sessions. */
  sessions: SessionCreated[];
}

/** The status of a step; only `ok` and `action_error` carry a reward. */
export type StepStatus = "ok" | "action_error" | "env_error" | "timeout" | "expired";

/** A verifier's judgement. */
export interface VerdictBody {
  /** The reward. */
  reward: number;
  /** Why. */
  reason: string;
  /** The reward's parts, each 0 or 1: `task` and `harm` (absent on change tasks). */
  components?: Record<string, number> | undefined;
}

/** The result of one step. */
export interface StepResponse {
  /** The outcome. */
  status: StepStatus;
  /** The observation after the step; `null` after `stop` or an infrastructure failure. */
  observation: ObservationBody | null;
  /** Only with `ok` and `action_error`. */
  reward?: number | undefined;
  /** Whether the episode ended with `stop`. */
  done: boolean;
  /** Whether it was cut off by the step limit. */
  truncated: boolean;
  /** The step number, timing, settle report, error, verdict and answer. */
  info: {
    step: number;
    elapsed_ms: number;
    settle?: Record<string, unknown> | undefined;
    error?: ErrorBody | undefined;
    verdict?: VerdictBody | undefined;
    answer?: string | undefined;
  };
}

/** Reset options. */
export interface ResetRequest {
  /** A new seed. */
  seed?: number | undefined;
  /** A new task id. */
  task?: string | undefined;
  /** A new step limit. */
  max_steps?: number | undefined;
  /** A new observation mode. */
  observation?: ObservationMode | undefined;
  /** New observation options. */
  observation_options?: ObservationOptions | undefined;
  /** A new viewport. */
  viewport?: { width: number; height: number } | undefined;
}

/** A session's state. */
export interface SessionState {
  /** The session id. */
  id: string;
  /** The task, or `null`. */
  task: TaskBody | null;
  /** Steps taken in this episode. */
  step: number;
  /** The active tab's URL. */
  url: string;
  /** Seconds since the session opened. */
  elapsed_s: number;
  /** When it opened. */
  created_at: string;
  /** Whether the episode ended. */
  done: boolean;
  /** The final rewards of its episodes. */
  rewards: number[];
  /** The lease. */
  lease: LeaseBody;
  /** The group, if any. */
  group?: string | undefined;
}

/** Per-session results of a batch. */
export interface BatchResponse {
  /** In request order. */
  results: {
    session_id: string;
    result?: StepResponse | undefined;
    error?: ErrorBody | undefined;
  }[];
}

/** The server's capacity. */
export interface HealthBody {
  /** `degraded` while the browser is down (OpenEnv's values). */
  status: "healthy" | "degraded";
  /** Live sessions. */
  live: number;
  /** The cap. */
  max: number;
  /** Free slots. */
  free: number;
  /** Whether the browser is connected. */
  browser: boolean;
}
