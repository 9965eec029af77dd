/**
 * The runs the dashboard can show: the run this server records (its live
 * sessions are that run's) and, read only, the finished runs it was pointed
 * at: run directories, or parents holding runs one level down (scanned
 * again each time the list is asked for, so a run started beside this one
 * appears). A run directory is one holding trajectory files (`*.jsonl`) or
 * the `screenshots/` folder `TrajectoryLog.open` makes.
 *
 * Each run is named by its directory's name, made a plain name and unique,
 * and keeps one `RunView` (with its reader's cache) for the server's life.
 *
 * @module
 */
import { basename, join } from "node:path";
import { logFailure } from "../../engine/log.ts";
import { HttpError } from "./http_error.ts";
import { type LiveSessions, NO_LIVE_SESSIONS, RunView } from "./_run_view.ts";

/** One run of the list. */
export interface RunEntry {
  /** The run's name, what `?run=` takes. */
  id: string;
  /** Whether it is the run this server records (the live sessions' run). */
  current: boolean;
  /** Its episodes, finished or not. */
  episodes: number;
  /** Its sessions (trajectory files). */
  sessions: number;
  /** When its first episode started (ms since the epoch), `null` before any. */
  first: number | null;
  /** Its last activity: the latest episode end or step (ms since the epoch). */
  last: number | null;
}

/** The runs of one server. */
export class RunCatalog {
  readonly #sessions: LiveSessions;
  readonly #current: RunView;
  readonly #currentId: string;
  readonly #roots: readonly string[];
  /** Views by real path, so a run found again keeps its reader's cache. */
  readonly #views = new Map<string, RunView>();
  #currentReal: string | undefined;

  /**
   * Creates the catalog.
   *
   * @param sessions the live sessions, which belong to the current run
   * @param current the run directory this server records into; none when it records nothing
   * @param roots other runs, or parents of runs, to list read only
   */
  constructor(sessions: LiveSessions, current: string | undefined, roots: readonly string[] = []) {
    this.#sessions = sessions;
    this.#current = new RunView(sessions, current);
    this.#currentId = current === undefined ? "current" : nameOf(current);
    this.#roots = roots;
  }

  /** The run this server records. */
  get current(): RunView {
    return this.#current;
  }

  /**
   * Every run, the current one first, then the others newest first.
   *
   * @returns the runs with their episode counts and time spans
   */
  async list(): Promise<RunEntry[]> {
    const runs = await this.#runs();
    const entries = await Promise.all(runs.map(async ([id, view]) => {
      const { episodes } = await view.episodes();
      let first: number | null = null, last: number | null = null;
      const sessions = new Set<string>();
      for (const episode of episodes) {
        sessions.add(episode.session);
        if (first === null || episode.started < first) first = episode.started;
        const end = Math.max(episode.ended ?? 0, episode.stepTimes.at(-1) ?? 0, episode.started);
        if (last === null || end > last) last = end;
      }
      return {
        id,
        current: view === this.#current,
        episodes: episodes.length,
        sessions: sessions.size,
        first,
        last,
      };
    }));
    const [current, ...others] = entries;
    others.sort((a, b) => (b.last ?? 0) - (a.last ?? 0) || a.id.localeCompare(b.id));
    return current ? [current, ...others] : others;
  }

  /**
   * The view of one run.
   *
   * @param id the run's name; the current run when absent or empty
   * @returns its view
   * @throws {HttpError} 404 for a run that is not listed
   */
  async view(id: string | undefined): Promise<RunView> {
    if (id === undefined || id === "" || id === this.#currentId) return this.#current;
    const runs = await this.#runs();
    const found = runs.find(([name]) => name === id);
    if (!found) {
      throw new HttpError(
        404,
        "not-found",
        `Unknown run "${id.slice(0, 100)}": expected one of ${
          runs.map(([name]) => `"${name}"`).join(", ")
        } (GET /dashboard/runs lists them)`,
      );
    }
    return found[1];
  }

  /** The runs as `[name, view]`, the current one first, names unique. */
  async #runs(): Promise<[string, RunView][]> {
    const current = this.#current.directory;
    this.#currentReal ??= current === undefined ? undefined : await realPath(current);
    const seen = new Set<string>(this.#currentReal ? [this.#currentReal] : []);
    const names = new Set<string>([this.#currentId]);
    const runs: [string, RunView][] = [[this.#currentId, this.#current]];
    for (const directory of await this.#found()) {
      const real = await realPath(directory);
      if (real === undefined || seen.has(real)) continue;
      seen.add(real);
      let view = this.#views.get(real);
      if (!view) this.#views.set(real, view = new RunView(NO_LIVE_SESSIONS, directory));
      let name = nameOf(directory);
      for (let n = 2; names.has(name); n++) name = `${nameOf(directory)}-${n}`;
      names.add(name);
      runs.push([name, view]);
    }
    return runs;
  }

  /** The run directories under the roots, in the order found. */
  async #found(): Promise<string[]> {
    const found: string[] = [];
    for (const root of this.#roots) {
      try {
        if (await isRun(root)) {
          found.push(root);
          continue;
        }
        const children: string[] = [];
        for await (const entry of Deno.readDir(root)) {
          if (entry.isDirectory && !entry.name.startsWith(".")) {
            children.push(join(root, entry.name));
          }
        }
        children.sort();
        for (const child of children) if (await isRun(child)) found.push(child);
      } catch (error) {
        if (!(error instanceof Deno.errors.NotFound)) {
          logFailure(`list the runs in "${root}"`, error);
        }
      }
    }
    return found;
  }
}

/**
 * Whether a directory holds a run: trajectory files, or the screenshots
 * folder a run directory is made with.
 *
 * @param directory the directory
 * @returns whether it is a run directory
 */
export async function isRun(directory: string): Promise<boolean> {
  try {
    for await (const entry of Deno.readDir(directory)) {
      if (entry.isFile && entry.name.endsWith(".jsonl")) return true;
      if (entry.isDirectory && entry.name === "screenshots") return true;
    }
  } catch (error) {
    if (error instanceof Deno.errors.NotFound || error instanceof Deno.errors.NotADirectory) {
      return false;
    }
    throw error;
  }
  return false;
}

/** A run's name: its directory's, as a plain name (what `plainName` accepts). */
function nameOf(directory: string): string {
  const name = basename(directory).replace(/[^A-Za-z0-9_.-]/g, "_").replace(/\.\.+/g, "_")
    .replace(/^[.]/, "_").slice(0, 100);
  return name === "" ? "run" : name;
}

async function realPath(path: string): Promise<string | undefined> {
  try {
    return await Deno.realPath(path);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return undefined;
    throw error;
  }
}

/**
 * Where a server records and which other runs its dashboard lists, from
 * `--run-dir`:
 * - absent: a new run `runs/<time>`, and every run under `runs/`;
 * - `a,b,c`: records into `a`; `b` and `c` (runs, or parents of runs) are listed too;
 * - a parent of runs (a directory holding run directories and no
 *   trajectory of its own): a new run inside it named for the time, and
 *   every run there;
 * - anything else: records there, and lists it alone.
 *
 * @param value the option's value
 * @param now the time, for a new run's name
 * @returns the run recorded into, and the roots of the others
 */
export async function runDirectories(
  value: string | undefined,
  now: Date,
): Promise<{ current: string; runs: string[] }> {
  const stamp = now.toISOString().replace(/[:.]/g, "-");
  if (value === undefined) return { current: join("runs", stamp), runs: ["runs"] };
  const listed = value.split(",").map((part) => part.trim()).filter((part) => part !== "");
  const [first, ...others] = listed;
  if (first === undefined) throw new TypeError(`Invalid run directory "${value}": it names none`);
  if (others.length > 0) return { current: first, runs: others };
  if (!(await isRun(first)) && (await childRuns(first)) > 0) {
    return { current: join(first, stamp), runs: [first] };
  }
  return { current: first, runs: [] };
}

/** How many run directories a directory holds one level down (0 when it does not exist). */
async function childRuns(directory: string): Promise<number> {
  let count = 0;
  try {
    for await (const entry of Deno.readDir(directory)) {
      if (entry.isDirectory && await isRun(join(directory, entry.name))) count++;
    }
  } catch (error) {
    if (error instanceof Deno.errors.NotFound || error instanceof Deno.errors.NotADirectory) {
      return 0;
    }
    throw error;
  }
  return count;
}
