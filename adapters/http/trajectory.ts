/**
 * Trajectories: append-only JSONL, one file per session under a run
 * directory, one event a line.
 *
 * Schema, version 1 (`v: 1` on every line):
 * - `{ v, type: "start", t, session, episode, group?, task, instruction, url, observation }`
 *   when an episode starts (create or reset); `group` is the GRPO group of a
 *   session opened by `/v1/groups`;
 * - `{ v, type: "step", t, session, episode, step, action, status, reward?, done,
 *   truncated, observation, url, elapsed_ms, settle?, error?, verdict?, judged?, screenshot?, marks? }`
 *   after every step (`observation` is the text the agent saw after the
 *   action, `screenshot` a file name beside the JSONL; on the step that ends
 *   a task episode, `verdict` is `{ reward, reason }` and `judged` what the
 *   verifier judged: the evaluator's whole input `{ answer?, url, origin?, diff?,
 *   instruction?, harmless?, history?, rows? }` and the `evaluator` itself (its
 *   truth included), the diff being the site's state diff since the episode's
 *   mark, so `export --reverify` judges it again as the live step did;
 *   `marks`, beside a screenshot, is `{ viewport: [w, h], elements: [{ id, box: [x, y, w, h] }] }`:
 *   the elements in view in the step's observation, CSS pixels, for the viewer's set-of-marks);
 * - `{ v, type: "end", t, session, episode, reason }` when the session closes.
 *
 * `t` is an ISO time; `task` is the task id or `null`; `error` is `{ code, message }`.
 *
 * @module
 */
import { join } from "node:path";
import { plainName, readTrajectory } from "./_run_files.ts";

/** The schema version of every line. */
export const TRAJECTORY_VERSION = 1;

/** One line of a trajectory. */
export type TrajectoryEvent = Record<string, unknown> & { type: "start" | "step" | "end" };

/**
 * Writes the trajectories of one run.
 *
 * @example Append an event
 * ```text
 * const run = await TrajectoryLog.open("runs/today");
 * await run.append("s-1", { type: "end", reason: "closed" });
 * ```
 */
export class TrajectoryLog {
  /** The run directory. */
  readonly directory: string;

  private constructor(directory: string) {
    this.directory = directory;
  }

  /**
   * Opens (creates) a run directory.
   *
   * @param directory where the JSONL files go
   * @returns the log
   */
  static async open(directory: string): Promise<TrajectoryLog> {
    await Deno.mkdir(join(directory, "screenshots"), { recursive: true });
    return new TrajectoryLog(directory);
  }

  /**
   * The path of a session's JSONL file.
   *
   * @param session the session id
   * @returns the path
   */
  path(session: string): string {
    return join(this.directory, `${session}.jsonl`);
  }

  /**
   * Appends one event to a session's file (in order per session).
   *
   * @param session the session id
   * @param event the event without `v`, `t` and `session`
   * @returns settled once the line is in the file (it is written before this
   *   returns); rejects (never throws) when the event cannot be serialised or
   *   written
   */
  append(session: string, event: TrajectoryEvent): Promise<void> {
    try {
      const line = JSON.stringify({
        v: TRAJECTORY_VERSION,
        t: new Date().toISOString(),
        session,
        ...event,
      }) + "\n";
      // Written at once, synchronously: the line is in the file before the
      // caller answers the step, lines keep their order without a queue per
      // session, and a line of a few KiB costs about a third of the CPU of an
      // async write's open/write/close round through the op pool.
      Deno.writeTextFileSync(this.path(session), line, { append: true });
      return Promise.resolve();
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /**
   * Writes a screenshot beside the trajectories.
   *
   * @param name the file name
   * @param png the PNG bytes
   * @returns the file name relative to the run directory
   */
  async screenshot(name: string, png: Uint8Array): Promise<string> {
    const file = join("screenshots", name);
    await Deno.writeFile(join(this.directory, file), png);
    return file;
  }

  /**
   * Reads a session's events.
   *
   * @param session the session id
   * @returns its events, oldest first (none when the file does not exist,
   *   or resolves outside the run directory)
   * @throws {HttpError} 400 when the id is not a plain name (a path)
   */
  async read(session: string): Promise<TrajectoryEvent[]> {
    plainName(session, "session id");
    return await readTrajectory(this.directory, session);
  }

  /**
   * Waits for every pending write: none, since {@linkcode append} writes
   * before it returns; kept so callers need not know how lines are written.
   *
   * @returns at once
   */
  flush(): Promise<void> {
    return Promise.resolve();
  }
}
