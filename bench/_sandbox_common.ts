/**
 * What the sandbox benchmarks share (`bench/sandbox.ts` and its
 * real-application rows in `bench/_sandbox_apps.ts`): latency statistics,
 * progress lines, disk and memory readings of this host.
 *
 * @module
 */
import type { Instance } from "../sandboxes/types.ts";

/** A mebibyte. */
export const MIB = 2 ** 20;

/** A latency sample summary, in the samples' unit. */
export interface Stats {
  /** How many samples. */
  n: number;
  /** The median. */
  p50: number;
  /** The 95th percentile (nearest rank). */
  p95: number;
  /** The mean. */
  mean: number;
}

/**
 * Summarizes samples.
 *
 * @param samples the samples
 * @returns count, median, 95th percentile and mean, rounded to 0.1
 */
export function stats(samples: number[]): Stats {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q: number) =>
    sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] ?? 0;
  return {
    n: sorted.length,
    p50: round(at(0.5)),
    p95: round(at(0.95)),
    mean: round(sorted.reduce((a, b) => a + b, 0) / (sorted.length || 1)),
  };
}

/**
 * Rounds to a number of decimal digits.
 *
 * @param x the number
 * @param digits decimal digits (default 1)
 * @returns the rounded number
 */
export function round(x: number, digits = 1): number {
  const f = 10 ** digits;
  return Math.round(x * f) / f;
}

/**
 * Prints a timestamped progress line on stderr.
 *
 * @param message the line
 */
export function progress(message: string): void {
  console.error(`[${new Date().toISOString().slice(11, 19)}] ${message}`);
}

/**
 * Runs a command and returns its stdout.
 *
 * @param cmd the program
 * @param args its arguments
 * @returns its stdout
 * @throws Error with its stderr when it exits with another code than 0
 */
export async function command(cmd: string, args: string[]): Promise<string> {
  const { stdout, code, stderr } = await new Deno.Command(cmd, {
    args,
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (code !== 0) {
    throw new Error(
      `"${cmd} ${args.join(" ")}" failed: ${new TextDecoder().decode(stderr)}`,
    );
  }
  return new TextDecoder().decode(stdout);
}

/**
 * The disk space the paths use, as `du -s` counts it.
 *
 * @param paths files or folders
 * @returns their bytes, summed
 */
export async function duBytes(paths: string[]): Promise<number> {
  if (paths.length === 0) return 0;
  const out = await command("du", ["-s", "-B1", "--", ...paths]);
  return out.trim().split("\n").reduce(
    (sum, line) => sum + Number(line.split(/\s+/)[0] ?? 0),
    0,
  );
}

/**
 * Bytes of a btrfs subvolume or folder that share no extent with anything
 * else (`btrfs filesystem du`'s "Exclusive", after a sync): what an env wrote
 * of its own on top of its copy-on-write base.
 *
 * @param path the folder
 * @returns the exclusive bytes (NaN when btrfs prints no such column)
 */
export async function btrfsExclusiveBytes(path: string): Promise<number> {
  await command("sync", []);
  const out = await command("btrfs", ["filesystem", "du", "-s", "--raw", path]);
  const fields = out.trim().split("\n").at(-1)?.trim().split(/\s+/) ?? [];
  return Number(fields[1] ?? NaN);
}

/**
 * The free disk space of the filesystem that holds a path.
 *
 * @param path the path
 * @returns bytes available to unprivileged users
 */
export async function freeDisk(path: string): Promise<number> {
  const out = await command("df", ["-B1", "--output=avail", path]);
  return Number(out.trim().split("\n").at(-1));
}

/**
 * How many of the envs still answer their health check: what a "ready at
 * once" count stands on (an env that stopped answering meanwhile does not count).
 *
 * @param envs the envs held
 * @returns how many answered
 */
export async function countAnswering(envs: readonly Instance[]): Promise<number> {
  let answering = 0;
  for (const env of envs) {
    try {
      await env.check();
      answering++;
    } catch {
      // counted as not ready
    }
  }
  return answering;
}

/**
 * The host's `MemAvailable`.
 *
 * @returns bytes
 */
export function memAvailable(): number {
  const line = Deno.readTextFileSync("/proc/meminfo").split("\n").find((l) =>
    l.startsWith("MemAvailable:")
  );
  return Number(line?.split(/\s+/)[1] ?? 0) * 1024;
}

/**
 * This machine, for a results header.
 *
 * @returns cores, memory and Deno version
 */
export function machine(): string {
  const total = Number(
    Deno.readTextFileSync("/proc/meminfo").match(/MemTotal:\s+(\d+)/)?.[1],
  );
  return `${navigator.hardwareConcurrency} cores, ${
    round(total / 2 ** 20)
  } GiB, Deno ${Deno.version.deno}`;
}

/**
 * The load averages from `/proc/loadavg`.
 *
 * @returns 1, 5 and 15 minute load averages
 */
export function loadAverage(): number[] {
  return Deno.readTextFileSync("/proc/loadavg").split(" ").slice(0, 3).map(Number);
}

/**
 * Sums PSS and RSS (`/proc/PID/smaps_rollup`) over every process in the pid
 * namespace of a container's init: the env's own memory, shared pages split
 * among their sharers.
 *
 * @param initPid the host pid of the container's init
 * @returns bytes, and how many processes
 */
export function namespaceMemory(initPid: number): { pss: number; rss: number; processes: number } {
  const namespace = Deno.readLinkSync(`/proc/${initPid}/ns/pid`);
  let pss = 0;
  let rss = 0;
  let processes = 0;
  for (const entry of Deno.readDirSync("/proc")) {
    if (!/^\d+$/.test(entry.name)) continue;
    try {
      if (Deno.readLinkSync(`/proc/${entry.name}/ns/pid`) !== namespace) continue;
      const rollup = Deno.readTextFileSync(`/proc/${entry.name}/smaps_rollup`);
      pss += Number(rollup.match(/^Pss:\s+(\d+) kB/m)?.[1] ?? 0) * 1024;
      rss += Number(rollup.match(/^Rss:\s+(\d+) kB/m)?.[1] ?? 0) * 1024;
      processes++;
    } catch {
      // The process ended meanwhile, or is a kernel thread without maps.
    }
  }
  return { pss, rss, processes };
}

/** One timed row of a report: what was timed and its latency. */
export interface TimedRow {
  /** What was timed. */
  what: string;
  /** Milliseconds. */
  ms: Stats;
}

/**
 * Times `fn` `runs` times, in milliseconds; `after` (untimed) cleans up each run.
 *
 * @param what what is timed, as the report names it
 * @param runs how many runs
 * @param fn the timed call
 * @param after the untimed clean-up of each run's value
 * @returns the row
 */
export async function timeRuns<T>(
  what: string,
  runs: number,
  fn: () => Promise<T>,
  after: (value: T) => Promise<void>,
): Promise<TimedRow> {
  const samples: number[] = [];
  for (let i = 0; i < runs; i++) {
    const started = performance.now();
    const value = await fn();
    samples.push(performance.now() - started);
    await after(value);
  }
  const ms = stats(samples);
  progress(`${what}: p50 ${ms.p50} ms, p95 ${ms.p95} ms`);
  return { what, ms };
}
