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
 * @module
 */
import { parseArgs } from "node:util";
import { join } from "node:path";

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
}

/**
 * Reads a run directory and groups its events into episodes.
 *
 * @param directory the run directory
 * @returns the episodes, by session then episode
 */
export async function exportRun(directory: string): Promise<ExportedEpisode[]> {
  const files: string[] = [];
  for await (const entry of Deno.readDir(directory)) {
    if (entry.isFile && entry.name.endsWith(".jsonl")) files.push(entry.name);
  }
  files.sort();
  const episodes: ExportedEpisode[] = [];
  for (const file of files) {
    const text = await Deno.readTextFile(join(directory, file));
    let current: ExportedEpisode | undefined;
    let last = "";
    for (const line of text.split("\n")) {
      if (line.trim() === "") continue;
      const event = JSON.parse(line) as Record<string, unknown>;
      if (event.type === "start") {
        if (current) episodes.push(current);
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
        if (event.done === true || event.truncated === true) {
          current.finished = typeof event.reward === "number";
          current.final_reward = typeof event.reward === "number" ? event.reward : null;
        }
      }
    }
    if (current) episodes.push(current);
  }
  return episodes;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    args: Deno.args,
    options: { run: { type: "string" }, out: { type: "string" } },
  });
  if (!values.run) {
    console.error("Usage: deno task export --run DIR [--out FILE]");
    Deno.exit(2);
  }
  const episodes = await exportRun(values.run);
  const out = values.out ?? join(values.run, "episodes.jsonl");
  await Deno.writeTextFile(out, episodes.map((e) => JSON.stringify(e)).join("\n") + "\n");
  console.log(`${episodes.length} episode(s) written to ${out}`);
}

if (import.meta.main) await main();
