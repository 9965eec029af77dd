/**
 * `deno task export --run DIR [--out FILE]`: turns a run's trajectories
 * (see `trajectory.ts`) into one episode a line, for SFT and RL.
 *
 * Episode format, version 1:
 * `{ v: 1, session, episode, task, instruction, steps: [{ step, observation, action,
 *   status, reward?, error? }], messages: [{ role, content }], final_reward, finished }`
 * where `observation` is the text the agent saw before the action, `messages`
 * alternate `user` (instruction and observation) and `assistant` (the action as
 * JSON), `final_reward` is the reward of the step that ended the episode (or
 * `null` when it never ended), and `finished` says whether it ended by `stop`
 * or the step limit rather than by an infrastructure failure or closing.
 *
 * With `--reverify`, every finished episode of a site-kit task is scored
 * again from what the trajectory recorded the verifier judged (the step's
 * `judged`: the evaluator and its whole input, the answer, the final URL,
 * the state diff, the instruction, the harmless changes, the history rules),
 * through the live step's own path (`reverify` in `catalog.ts`:
 * `evaluatePlain` with the site's view reader), so it needs no private
 * split's key and gives the live verdict: the episode's
 * `final_reward` becomes the recomputed reward and
 * `reverified: { reward, reason, recorded_reward }` says what changed.
 * Episodes of other tasks (the demo's) keep their recorded reward, with
 * `reverified: null`.
 *
 * @module
 */
import { parseArgs } from "node:util";
import { join } from "node:path";
import { type JudgedOutcome, reverify } from "./catalog.ts";

/** One exported episode. */
export interface ExportedEpisode {
  /** The format version. */
  v: 1;
  /** The session id. */
  session: string;
  /** The episode's number within the session. */
  episode: number;
  /** The task id, or `null`. */
  task: string | null;
  /** The instruction, or `null`. */
  instruction: string | null;
  /** Every step. */
  steps: Record<string, unknown>[];
  /** The episode as chat messages. */
  messages: { role: "user" | "assistant"; content: string }[];
  /** The reward of the last step, when the episode ended. */
  final_reward: number | null;
  /** Whether the episode ended (stop or step limit). */
  finished: boolean;
  /**
   * With `reverify`: the recomputed verdict beside the recorded reward;
   * `null` when the episode cannot be re-verified.
   */
  reverified?: { reward: number; reason: string; recorded_reward: number | null } | null;
}

/** Options of {@linkcode exportRun}. */
export interface ExportOptions {
  /** Recompute the final rewards from the recorded verifier inputs. */
  reverify?: boolean;
}

/**
 * Reads a run directory and groups its events into episodes.
 *
 * @param directory the run directory
 * @param options whether to re-verify the final rewards
 * @returns the episodes, by session then episode
 * @throws {SyntaxError} when a line is not JSON
 */
export async function exportRun(
  directory: string,
  options: ExportOptions = {},
): Promise<ExportedEpisode[]> {
  const files: string[] = [];
  for await (const entry of Deno.readDir(directory)) {
    if (entry.isFile && entry.name.endsWith(".jsonl")) files.push(entry.name);
  }
  files.sort();
  const episodes: ExportedEpisode[] = [];
  for (const file of files) {
    const text = await Deno.readTextFile(join(directory, file));
    let current: ExportedEpisode | undefined;
    let judged: JudgedOutcome | undefined;
    let last = "";
    const finish = (episode: ExportedEpisode) => {
      if (options.reverify) episode.reverified = reverified(episode, judged);
      if (episode.reverified) episode.final_reward = episode.reverified.reward;
      episodes.push(episode);
      judged = undefined;
    };
    for (const line of text.split("\n")) {
      if (line.trim() === "") continue;
      const event = JSON.parse(line) as Record<string, unknown>;
      if (event.type === "start") {
        if (current) finish(current);
        last = String(event.observation ?? "");
        const instruction = typeof event.instruction === "string" ? event.instruction : null;
        current = {
          v: 1,
          session: String(event.session),
          episode: Number(event.episode ?? 0),
          task: typeof event.task === "string" ? event.task : null,
          instruction,
          steps: [],
          messages: [{ role: "user", content: [instruction, last].filter(Boolean).join("\n\n") }],
          final_reward: null,
          finished: false,
        };
      } else if (event.type === "step" && current) {
        current.steps.push({
          step: event.step,
          observation: last,
          action: event.action,
          status: event.status,
          ...(event.reward !== undefined ? { reward: event.reward } : {}),
          ...(event.error !== undefined ? { error: event.error } : {}),
        });
        current.messages.push({ role: "assistant", content: JSON.stringify(event.action) });
        if (typeof event.observation === "string") {
          last = event.observation;
          current.messages.push({ role: "user", content: last });
        }
        if (typeof event.judged === "object" && event.judged !== null) {
          judged = event.judged as JudgedOutcome;
        }
        if (event.done === true || event.truncated === true) {
          current.finished = typeof event.reward === "number";
          current.final_reward = typeof event.reward === "number" ? event.reward : null;
        }
      }
    }
    if (current) finish(current);
  }
  return episodes;
}

function reverified(
  episode: ExportedEpisode,
  judged: JudgedOutcome | undefined,
): NonNullable<ExportedEpisode["reverified"]> | null {
  if (!episode.finished || episode.task === null || judged === undefined) return null;
  let verdict;
  try {
    verdict = reverify(episode.task, judged);
  } catch {
    return null;
  }
  if (!verdict) return null;
  return { reward: verdict.reward, reason: verdict.reason, recorded_reward: episode.final_reward };
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    args: Deno.args,
    options: {
      run: { type: "string" },
      out: { type: "string" },
      reverify: { type: "boolean" },
    },
  });
  if (!values.run) {
    console.error("Usage: deno task export --run DIR [--out FILE] [--reverify]");
    Deno.exit(2);
  }
  const episodes = await exportRun(values.run, { reverify: values.reverify ?? false });
  const out = values.out ?? join(values.run, "episodes.jsonl");
  await Deno.writeTextFile(out, episodes.map((e) => JSON.stringify(e)).join("\n") + "\n");
  console.log(`${episodes.length} episode(s) written to ${out}`);
  if (values.reverify) {
    const checked = episodes.filter((e) => e.reverified);
    const changed = checked.filter((e) => e.reverified!.reward !== e.reverified!.recorded_reward);
    console.log(
      `${checked.length} episode(s) re-verified, ${changed.length} with a changed reward`,
    );
  }
}

if (import.meta.main) await main();
