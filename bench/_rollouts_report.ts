/**
 * The report of `deno task bench:rollouts`: a row per measured run, and per
 * backend, model latency and size the medians of each mode and the ratios
 * of the server to in-process, paired run by run; written to
 * `bench/results/rollouts.{md,json}`.
 *
 * @module
 */
import { type BackendName, BACKENDS, type RunResult } from "./_rollouts_job.ts";
import type { MemoryPeak } from "./_rollouts_memory.ts";

/** Which side of the comparison a run is. */
export type Mode = "server" | "server before" | "in-process";

/** One measured run: what it did (its {@linkcode RunResult} but the raw CPU and latencies) and the figures from them. */
export interface Row extends Omit<RunResult, "cpuMs" | "latencies"> {
  /** The mode. */
  mode: Mode;
  /** The backend. */
  backend: BackendName;
  /** The model's latency per turn, ms. */
  latencyMs: number;
  /** Concurrent rollouts. */
  sessions: number;
  /** Rollouts per hour, all slots together. */
  rolloutsPerHour: number;
  /** Steps per second, all slots together. */
  stepsPerSecond: number;
  /** The measured process's CPU per step, ms. */
  cpuMsPerStep: number;
  /** Median step latency, ms. */
  p50Ms: number;
  /** 95th percentile step latency, ms. */
  p95Ms: number;
  /** On the shared runtime: the memory the run took at its peak. */
  memory?: MemoryPeak;
}

/** What the report says about how the runs were made. */
export interface ReportContext {
  /** Runs of each mode per cell, as the report says it. */
  rounds: string;
  /** Measured rollouts a run, about (when not set per slot). */
  perRun: string;
  /** Whether a tree before a change ran as a third mode. */
  before: boolean;
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
}

/**
 * A run's row.
 *
 * @param mode the mode
 * @param backend the backend
 * @param sessions concurrent rollouts
 * @param latencyMs the model's latency per turn, ms
 * @param r what the run did
 * @param memory its memory peak, on the shared runtime
 * @returns the row
 */
export function rowOf(
  mode: Mode,
  backend: BackendName,
  sessions: number,
  latencyMs: number,
  r: RunResult,
  memory?: MemoryPeak,
): Row {
  return {
    mode,
    backend,
    latencyMs,
    sessions,
    rollouts: r.rollouts,
    solved: r.solved,
    errorCount: r.errorCount,
    errors: r.errors,
    steps: r.steps,
    seconds: r.seconds,
    rolloutsPerHour: r.rollouts / r.seconds * 3600,
    stepsPerSecond: r.steps / r.seconds,
    cpuMsPerStep: r.cpuMs / r.steps,
    p50Ms: percentile(r.latencies, 50),
    p95Ms: percentile(r.latencies, 95),
    ...(memory ? { memory } : {}),
  };
}

const median = (values: number[]) => percentile(values, 50);
const round1 = (x: number) => Math.round(x * 10) / 10;
const round2 = (x: number) => Math.round(x * 100) / 100;
const ratio = (x: number) => `×${round2(x)}`;

/** Per backend, latency and size: medians of each mode and the median of the rounds' paired ratios. */
function summarize(rows: Row[]) {
  const cells = [
    ...new Map(rows.map((r) => [`${r.backend} ${r.latencyMs} ${r.sessions}`, r])).values(),
  ];
  return cells.map(({ backend, latencyMs, sessions }) => {
    const of = (mode: Mode) =>
      rows.filter((r) =>
        r.backend === backend && r.latencyMs === latencyMs && r.sessions === sessions &&
        r.mode === mode
      );
    const local = of("in-process");
    const served = of("server");
    const before = of("server before");
    /** The median over rounds of `list`'s value / in-process's value, run by run. */
    const paired = (list: Row[], pick: (r: Row) => number) =>
      median(
        Array.from(
          { length: Math.min(local.length, list.length) },
          (_, i) => pick(list[i]!) / pick(local[i]!),
        ),
      );
    const medians = (list: Row[]) => ({
      rolloutsPerHour: median(list.map((r) => r.rolloutsPerHour)),
      stepsPerSecond: median(list.map((r) => r.stepsPerSecond)),
      cpuMsPerStep: median(list.map((r) => r.cpuMsPerStep)),
      p50Ms: median(list.map((r) => r.p50Ms)),
      p95Ms: median(list.map((r) => r.p95Ms)),
      errors: list.reduce((sum, r) => sum + r.errorCount, 0),
    });
    return {
      backend,
      latencyMs,
      sessions,
      rounds: Math.min(local.length, served.length),
      inProcess: medians(local),
      server: medians(served),
      cpuRatio: paired(served, (r) => r.cpuMsPerStep),
      p50Ratio: paired(served, (r) => r.p50Ms),
      throughputRatio: paired(served, (r) => r.stepsPerSecond),
      ...(before.length > 0
        ? {
          before: medians(before),
          beforeCpuRatio: paired(before, (r) => r.cpuMsPerStep),
          beforeP50Ratio: paired(before, (r) => r.p50Ms),
        }
        : {}),
    };
  }).filter((s) => s.rounds > 0).sort((a, b) =>
    a.backend.localeCompare(b.backend) || a.latencyMs - b.latencyMs || a.sessions - b.sessions
  );
}

/**
 * The report, as Markdown and as the JSON saved beside it.
 *
 * @param rows the runs so far
 * @param failures runs that failed outright (no row)
 * @param context how the runs were made
 * @returns the Markdown and the JSON object
 */
export async function renderReport(
  rows: Row[],
  failures: string[],
  context: ReportContext,
): Promise<{ markdown: string; json: unknown }> {
  const summary = summarize(rows);
  const at64 = summary.find((s) =>
    s.backend === "fixture" && s.latencyMs === 0 && s.sessions === 64
  );
  const met = (ok: boolean) => (ok ? "met" : "**not met**");
  const targets = at64
    ? [
      `Targets at 64 sessions, 0 ms, fixture backend: server CPU per step ≤ 1.2× in-process: ${
        ratio(at64.cpuRatio)
      }, ${met(at64.cpuRatio <= 1.2)}; p50 step overhead ≤ 10%: ${ratio(at64.p50Ratio)}, ${
        met(at64.p50Ratio <= 1.1)
      }.`,
      "",
    ]
    : [];
  const memoryRows = rows.filter((r) => r.memory);
  const load = await Deno.readTextFile("/proc/loadavg").catch(() => "n/a");
  const lines = [
    "# Rollout throughput",
    "",
    `Reference flow (\`webserv.harness.rollout\`, Python; each slot runs rollouts back to back, ${context.perRun}`,
    "measured a run, after a warm-up of rollouts at once that is not measured: 16 on the fixture backend, 4 on the",
    "shared runtime), scripted model server (`webserv.scripted_model`, playing the template's solver) at each latency per turn.",
    `Fixture backend (a recreated site in-process): ${BACKENDS.fixture.describe}.`,
    `Shared runtime (a real application on Incus: one Apache/PHP for the seed, a \`mariadbd\` per env, 2 spares): ${BACKENDS.shared.describe}.`,
    "Server mode: `adapters/http/serve.ts --backend <backend>` in its own process (trajectories recorded), the harness",
    "as asyncio tasks in one Python process (CI venv) beside the model server. In-process: the same episodes through",
    "`Env` in one Deno process on the same sandbox backend, the agent loop in TypeScript asking the same model server",
    "with the same messages.",
    `${navigator.hardwareConcurrency} cores shared with other work (load average at the end: ${load.trim()}),`,
    `${new Date().toISOString()}, rounds: ${context.rounds}, modes alternating which goes first.`,
    "",
    "CPU/step is the user + system CPU of the server's process alone (not its browser, not the",
    "Python client, not the application's containers) over the measured loop, divided by the steps; in-process,",
    "that of the process running `Env` and its agent loop. Ratios are server / in-process, paired run by run, medians.",
    "Infrastructure errors (a step past its deadline, a session that could not open) are counted, never scored;",
    "CPU per step divides all the loop's CPU by the steps of the rollouts that finished, so a run with errors shows",
    "a higher figure.",
    "",
    "| backend | model latency | sessions | in-process rollouts/h | server rollouts/h | in-process steps/s | server steps/s | CPU ms/step in-process | CPU ms/step server | CPU ratio | p50 ms in-process | p50 ms server | p50 ratio | p95 ms in-process | p95 ms server | infra errors in-process / server |",
    "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ...summary.map((s) =>
      `| ${s.backend} | ${s.latencyMs} ms | ${s.sessions} | ${
        Math.round(s.inProcess.rolloutsPerHour)
      } | ${Math.round(s.server.rolloutsPerHour)} | ${round1(s.inProcess.stepsPerSecond)} | ${
        round1(s.server.stepsPerSecond)
      } | ${round2(s.inProcess.cpuMsPerStep)} | ${round2(s.server.cpuMsPerStep)} | ${
        ratio(s.cpuRatio)
      } | ${round1(s.inProcess.p50Ms)} | ${round1(s.server.p50Ms)} | ${ratio(s.p50Ratio)} | ${
        round1(s.inProcess.p95Ms)
      } | ${round1(s.server.p95Ms)} | ${s.inProcess.errors} / ${s.server.errors} |`
    ),
    "",
    ...targets,
    ...(memoryRows.length
      ? [
        "Memory on the shared runtime, at the run's peak: the runtime's container (Apache/PHP and every env's",
        "`mariadbd`, as Incus counts it) and the fall of the host's available memory (that, the browser's renderers,",
        "the server, the clients; other work on the host moves it too), each also per session:",
        "",
        "| model latency | sessions | mode | runtime MiB | runtime MiB/session | host MiB | host MiB/session |",
        "| ---: | ---: | --- | ---: | ---: | ---: | ---: |",
        ...memoryRows.map((r) =>
          `| ${r.latencyMs} ms | ${r.sessions} | ${r.mode} | ${r.memory!.runtimeMiB} | ${
            round1(r.memory!.runtimeMiB / r.sessions)
          } | ${r.memory!.hostMiB} | ${round1(r.memory!.hostMiB / r.sessions)} |`
        ),
        "",
      ]
      : []),
    ...(context.before
      ? [
        "The server before the change under test (`BENCH_BEFORE_DIR`, with its own Python client), in the same run, against the",
        "same in-process runs:",
        "",
        "| backend | model latency | sessions | CPU ms/step before | CPU ratio before | CPU ms/step now | CPU ratio now | p50 ms before | p50 ratio before | p50 ms now | p50 ratio now |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
        ...summary.map((s) =>
          `| ${s.backend} | ${s.latencyMs} ms | ${s.sessions} | ${
            round2(s.before?.cpuMsPerStep ?? NaN)
          } | ${ratio(s.beforeCpuRatio ?? NaN)} | ${round2(s.server.cpuMsPerStep)} | ${
            ratio(s.cpuRatio)
          } | ${round1(s.before?.p50Ms ?? NaN)} | ${ratio(s.beforeP50Ratio ?? NaN)} | ${
            round1(s.server.p50Ms)
          } | ${ratio(s.p50Ratio)} |`
        ),
        "",
      ]
      : []),
    "Every run:",
    "",
    "| backend | model latency | sessions | mode | rollouts | solved | infra errors | steps | s | rollouts/h | steps/s | CPU ms/step | p50 ms | p95 ms |",
    "| --- | ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ...rows.map((r) =>
      `| ${r.backend} | ${r.latencyMs} ms | ${r.sessions} | ${r.mode} | ${r.rollouts} | ${r.solved} | ${r.errorCount} | ${r.steps} | ${
        round1(r.seconds)
      } | ${Math.round(r.rolloutsPerHour)} | ${round1(r.stepsPerSecond)} | ${
        round2(r.cpuMsPerStep)
      } | ${round1(r.p50Ms)} | ${round1(r.p95Ms)} |`
    ),
    "",
    ...(failures.length ? ["Runs that failed:", "", ...failures.map((f) => `- ${f}`), ""] : []),
    ...rows.filter((r) => r.errors.length > 0).flatMap((r) => [
      `Errors, ${r.backend}, ${r.latencyMs} ms, ${r.sessions} sessions, ${r.mode}: ${
        r.errors.join(" | ")
      }`,
      "",
    ]),
  ];
  return {
    markdown: lines.join("\n"),
    json: { rounds: context.rounds, summary, rows, failures },
  };
}
