/**
 * A run's episodes, read back from its trajectory files: one summary per
 * episode (task, site, template, split, group, steps, reward, outcome,
 * errors by kind, times), for the dashboard's figures and its episode
 * picker. Files are append-only, so each is parsed again only when it grew;
 * a run of thousands of sessions costs one `stat` per file per read.
 *
 * @module
 */
import { join } from "node:path";
import { splitOf } from "../../fixtures/sites/mod.ts";
import { logFailure } from "../../engine/log.ts";
import type { TrajectoryEvent } from "./trajectory.ts";

/** How an episode ended, or that it has not. */
export type Outcome = "success" | "failure" | "truncated" | "unfinished" | "running";

/** Whose an error is: the agent's action, or our infrastructure (never the agent's fault). */
export type ErrorKind = "agent" | "infrastructure";

/** One error of an episode. */
export interface EpisodeError {
  /** Whose it is. */
  kind: ErrorKind;
  /** Its code (`stale-id`, `browser-gone`, `timeout`…). */
  code: string;
  /** The step it happened on. */
  step: number;
}

/** One episode of a run, as the dashboard counts it. */
export interface EpisodeSummary {
  /** The session. */
  session: string;
  /** The episode's number within the session. */
  episode: number;
  /** The task id, or `null` for an episode on a URL or a site without a task. */
  task: string | null;
  /** The site, when the task names one. */
  site: string | null;
  /** The template, when the task names one. */
  template: string | null;
  /** The seed's split (`train`, `test`), when the task names a seed. */
  split: string | null;
  /** The GRPO group the session belongs to. */
  group: string | null;
  /** Steps taken. */
  steps: number;
  /** The final reward (the verifier's), once the episode ended. */
  reward: number | null;
  /** How it ended. */
  outcome: Outcome;
  /** Its errors, in order. */
  errors: EpisodeError[];
  /** When it started (ms since the epoch). */
  started: number;
  /** When it ended, if it did. */
  ended: number | null;
  /** When each step was taken (ms since the epoch), for the throughput figures. */
  stepTimes: number[];
}

/** Statuses of steps that failed on our side. */
const INFRASTRUCTURE: ReadonlySet<string> = new Set(["env_error", "timeout", "expired"]);

/**
 * Summarises one session's trajectory into its episodes.
 *
 * @param events the session's events, oldest first
 * @param live whether the session is still open (its last episode is then `running`)
 * @returns one summary per episode
 */
export function episodesOf(events: readonly TrajectoryEvent[], live: boolean): EpisodeSummary[] {
  const episodes: EpisodeSummary[] = [];
  let current: EpisodeSummary | undefined;
  let group: string | null = null;
  let truncated = false;
  const finish = (at: number | null) => {
    if (!current) return;
    if (current.outcome === "running") {
      current.outcome = truncated ? "truncated" : "unfinished";
      current.ended = at;
    }
  };
  for (const event of events) {
    const at = Date.parse(String(event["t"] ?? "")) || 0;
    if (event.type === "start") {
      finish(at);
      truncated = false;
      if (typeof event["group"] === "string") group = event["group"];
      const task = typeof event["task"] === "string" ? event["task"] : null;
      const [site, template, seedText] = task?.split("/") ?? [];
      const seed = Number(seedText);
      current = {
        session: String(event["session"] ?? ""),
        episode: Number(event["episode"] ?? episodes.length),
        task,
        site: site ?? null,
        template: template ?? null,
        split: seedText !== undefined && Number.isInteger(seed) && seed >= 0 ? splitOf(seed) : null,
        group,
        steps: 0,
        reward: null,
        outcome: "running",
        errors: [],
        started: at,
        ended: null,
        stepTimes: [],
      };
      episodes.push(current);
    } else if (event.type === "step" && current) {
      const step = Number(event["step"] ?? current.steps + 1);
      const status = String(event["status"] ?? "");
      current.steps = Math.max(current.steps, step);
      current.stepTimes.push(at);
      const error = event["error"] as { code?: unknown } | undefined;
      if (status === "action_error" || INFRASTRUCTURE.has(status)) {
        current.errors.push({
          kind: INFRASTRUCTURE.has(status) ? "infrastructure" : "agent",
          code: typeof error?.code === "string" ? error.code : status,
          step,
        });
      }
      if (event["truncated"] === true) truncated = true;
      if (event["done"] === true && !truncated) {
        const verdict = event["verdict"] as { reward?: unknown } | undefined;
        const reward = typeof verdict?.reward === "number"
          ? verdict.reward
          : typeof event["reward"] === "number"
          ? event["reward"]
          : null;
        current.reward = reward;
        current.outcome = reward !== null && reward > 0 ? "success" : "failure";
        current.ended = at;
      }
    } else if (event.type === "end") {
      finish(at);
    }
  }
  if (!live) finish(current?.stepTimes.at(-1) ?? current?.started ?? null);
  return episodes;
}

/** What a reader keeps of one session's file: its summaries, never its lines. */
export interface SessionSummary {
  /** The episodes, as they stand while the session is open (the last one `running`). */
  live: EpisodeSummary[];
  /** The episodes once the session is closed (the last one `unfinished` or `truncated`). */
  closed: EpisodeSummary[];
  /** Why the session closed, when its last line is an `end`. */
  ended: string | null;
}

interface CachedFile extends SessionSummary {
  size: number;
  mtime: number;
}

/**
 * Reads a run directory's trajectories, keeping each file's summary until
 * the file changes: memory holds summaries, not observations, so a run of
 * 10,000 episodes costs a few MiB, and a read costs a `stat` per open
 * session's file (a closed session's file is final).
 */
export class RunReader {
  readonly #directory: string;
  #files = new Map<string, CachedFile>();

  /**
   * Creates a reader.
   *
   * @param directory the run directory
   */
  constructor(directory: string) {
    this.#directory = directory;
  }

  /**
   * Every session's summary, keyed by session id.
   *
   * @returns the sessions' summaries; a file that cannot be read is logged and left out
   */
  async sessions(): Promise<Map<string, SessionSummary>> {
    const seen = new Map<string, SessionSummary>();
    for await (const entry of Deno.readDir(this.#directory)) {
      if (!entry.isFile || !entry.name.endsWith(".jsonl") || entry.name === "episodes.jsonl") {
        continue;
      }
      const id = entry.name.slice(0, -".jsonl".length);
      const file = join(this.#directory, entry.name);
      // A closed session's file never changes again (ids are not reused): no `stat` for it.
      const known = this.#files.get(id);
      if (known !== undefined && known.ended !== null) {
        seen.set(id, known);
        continue;
      }
      try {
        const info = await Deno.stat(file);
        const mtime = info.mtime?.getTime() ?? 0;
        let cached = this.#files.get(id);
        if (!cached || cached.size !== info.size || cached.mtime !== mtime) {
          const events = parseLines(await Deno.readTextFile(file));
          const last = events.at(-1);
          cached = {
            size: info.size,
            mtime,
            live: episodesOf(events, true),
            closed: episodesOf(events, false),
            ended: last?.type === "end" ? String(last["reason"] ?? "") : null,
          };
          this.#files.set(id, cached);
        }
        seen.set(id, cached);
      } catch (error) {
        logFailure(`read the trajectory "${entry.name}"`, error);
      }
    }
    for (const id of this.#files.keys()) if (!seen.has(id)) this.#files.delete(id);
    return seen;
  }
}

/** JSONL lines; a torn last line (a write in progress) is left for the next read. */
function parseLines(text: string): TrajectoryEvent[] {
  const events: TrajectoryEvent[] = [];
  for (const line of text.split("\n")) {
    if (line === "") continue;
    try {
      events.push(JSON.parse(line) as TrajectoryEvent);
    } catch {
      // A line being appended while read: the next read has it whole.
    }
  }
  return events;
}
