/**
 * What one run of `deno task bench:rollouts` is asked to do and what it
 * reports, in one place for both modes: the rollout server's Python driver
 * (`bench/_rollouts_driver.py`, handed the job as JSON) and the in-process
 * `Env` loop (`bench/_rollouts_in_process.ts`, handed it on stdin) read the
 * same {@linkcode RolloutJob}, built by {@linkcode jobFor} alone, and answer
 * with the same {@linkcode RunResult}.
 *
 * @module
 */

/** Where the sessions run: a recreated site in-process, or a real application on the shared runtime. */
export type BackendName = "fixture" | "shared";

/** A backend as the bench drives it: the task its rollouts play and how wide it warms up. */
export interface RolloutBackend {
  /** The server's `--backend` and the in-process sandbox. */
  name: BackendName;
  /** `site/template`; a seed of {@linkcode seeds} is appended per rollout. */
  taskPrefix: string;
  /** The seeds the rollouts cycle through. */
  seeds: number[];
  /** Rollouts at once before the measured loop (the JIT, the seeds' files or runtimes). */
  warmUp: number;
  /** How the report describes the task. */
  describe: string;
}

/**
 * The backends measured. The shared runtime plays WordPress's `post-author`
 * (log in, open Posts, search the title, answer the author: 7 steps) on one
 * seed, whose seeded base the runtime copies: each further seed is another
 * runtime (and base) of its own, which the 8 GiB pool holds few of.
 */
export const BACKENDS: Record<BackendName, RolloutBackend> = {
  fixture: {
    name: "fixture",
    taskPrefix: "demo/add-note",
    seeds: [0, 1, 2, 3, 4, 5, 6, 7],
    warmUp: 16,
    describe: "`demo/add-note/<seed>` over 8 seeds (type the note, click Add, stop: 3 steps)",
  },
  shared: {
    name: "shared",
    taskPrefix: "wordpress/post-author",
    seeds: [1],
    warmUp: 4,
    describe:
      "`wordpress/post-author/1` (type the username and password, click Log In, open Posts, search the title, answer the author: 7 steps)",
  },
};

/** What one measured run is asked to do, in either mode. */
export interface RolloutJob {
  /** The backend's name (the server's `--backend`). */
  backend: BackendName;
  /** Concurrent rollouts. */
  sessions: number;
  /** Measured rollouts per slot, after the warm-up. */
  rollouts: number;
  /** Rollouts at once before the measured loop, not measured. */
  warmUp: number;
  /** The model's simulated latency per turn, s. */
  latency: number;
  /** `site/template`; the seed is appended per rollout. */
  taskPrefix: string;
  /** The seeds the rollouts cycle through: rollout `index` of `slot` takes `seeds[(slot + index) % seeds.length]`. */
  seeds: number[];
  /** Sessions opened at most this many at a time (as `bench:server` opens them). */
  openWidth: number;
}

/** What one measured run did, as both modes report it. */
export interface RunResult {
  /** Rollouts finished in the measured loop. */
  rollouts: number;
  /** Of those, rollouts the verifier gave 1. */
  solved: number;
  /** Infrastructure failures in the measured loop (never a reward). */
  errorCount: number;
  /** Up to five of their messages. */
  errors: string[];
  /** Steps taken in the measured loop. */
  steps: number;
  /** Wall time of the measured loop, s. */
  seconds: number;
  /** CPU of the server's process (server mode) or of this process (in-process) over the loop, ms. */
  cpuMs: number;
  /** Each step's latency, ms. */
  latencies: number[];
}

/** Sessions opened at most this many at a time, in both modes. */
const OPEN_WIDTH = 8;

/**
 * The job of one run: the backend's task, seeds and warm-up; `rollouts`
 * measured per slot (default: enough for about `total` rollouts a run).
 *
 * @param backend the backend
 * @param sessions concurrent rollouts
 * @param latencyMs the model's latency per turn, ms
 * @param rollouts measured rollouts per slot, or undefined for about `total` a run
 * @param total measured rollouts a run when `rollouts` is not given
 * @returns the job
 */
export function jobFor(
  backend: RolloutBackend,
  sessions: number,
  latencyMs: number,
  rollouts: number | undefined,
  total: number,
): RolloutJob {
  return {
    backend: backend.name,
    sessions,
    rollouts: rollouts ?? Math.max(1, Math.ceil(total / sessions)),
    warmUp: Math.min(backend.warmUp, sessions),
    latency: latencyMs / 1000,
    taskPrefix: backend.taskPrefix,
    seeds: backend.seeds,
    openWidth: OPEN_WIDTH,
  };
}

/**
 * The task of a slot's rollout.
 *
 * @param job the run's job
 * @param slot the slot
 * @param index the rollout's index in the slot (0 is the warm-up's)
 * @returns `site/template/seed`
 */
export function taskOf(job: RolloutJob, slot: number, index: number): string {
  return `${job.taskPrefix}/${job.seeds[(slot + index) % job.seeds.length]}`;
}
