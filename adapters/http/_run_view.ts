/**
 * What the dashboard reads of a run: its episodes from the trajectory
 * files (live sessions' and finished ones' alike, so a finished run read
 * back from its directory shows the same figures), the live sessions'
 * phases from the session manager, and the figures of `_run_stats.ts`.
 *
 * @module
 */
import { type EpisodeSummary, RunReader } from "./_run_episodes.ts";
import { type RunFilter, type RunStats, runStats } from "./_run_stats.ts";
import type { SessionManager } from "./sessions.ts";

/** Close reasons that mean the server reaped the session (as `SessionManager` records them). */
const EXPIRED: ReadonlySet<string> = new Set(["idle", "lifetime"]);

/** What a view needs of the live sessions: which are open, and their phases. */
export type LiveSessions = Pick<SessionManager, "list" | "phases">;

/** The live sessions of a run this server does not record: none. */
export const NO_LIVE_SESSIONS: LiveSessions = { list: () => [], phases: () => ({}) };

/** The dashboard's reading of one run. */
export class RunView {
  readonly #sessions: LiveSessions;
  readonly #reader: RunReader | undefined;
  readonly #directory: string | undefined;
  #cached: { at: number; result: ReturnType<RunView["episodes"]> } | undefined;

  /**
   * Creates the view.
   *
   * @param sessions the live sessions: the server's for the run it records, none for another
   * @param directory the run directory; without one only the lifecycle counts are known
   */
  constructor(sessions: LiveSessions, directory: string | undefined) {
    this.#sessions = sessions;
    this.#directory = directory;
    this.#reader = directory === undefined ? undefined : new RunReader(directory);
  }

  /** The run directory, when there is one. */
  get directory(): string | undefined {
    return this.#directory;
  }

  /** Whether there is a run directory to read episodes from. */
  get recorded(): boolean {
    return this.#reader !== undefined;
  }

  /**
   * Every episode of the run, and the closed sessions by how they closed.
   *
   * @returns the episodes, oldest first, and the closed counts
   */
  episodes(): Promise<
    { episodes: EpisodeSummary[]; closed: { expired: number; closed: number } }
  > {
    // One reading serves every request of the next second: pages poll, and
    // several viewers of a large run would otherwise each walk its directory.
    const now = Date.now();
    if (this.#cached && now - this.#cached.at < 1000) return this.#cached.result;
    const result = this.#read();
    this.#cached = { at: now, result };
    result.catch(() => this.#cached = undefined);
    return result;
  }

  async #read(): Promise<
    { episodes: EpisodeSummary[]; closed: { expired: number; closed: number } }
  > {
    const closed = { expired: 0, closed: 0 };
    if (!this.#reader) return { episodes: [], closed };
    const live = new Set(this.#sessions.list().map((s) => s.id));
    const episodes: EpisodeSummary[] = [];
    for (const [id, summary] of await this.#reader.sessions()) {
      const open = live.has(id);
      if (summary.ended !== null && !open) {
        if (EXPIRED.has(summary.ended)) closed.expired++;
        else closed.closed++;
      }
      for (const episode of open ? summary.live : summary.closed) episodes.push(episode);
    }
    episodes.sort((a, b) => a.started - b.started);
    return { episodes, closed };
  }

  /**
   * The figures.
   *
   * @param filter which episodes count
   * @returns the run at a glance
   */
  async stats(filter: RunFilter): Promise<RunStats & { recorded: boolean }> {
    const { episodes, closed } = await this.episodes();
    return {
      ...runStats(episodes, this.#sessions.phases(), closed, { filter }),
      recorded: this.recorded,
    };
  }
}
