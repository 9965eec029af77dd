/**
 * `deno task bench:rollouts`: published rollout throughput. N concurrent
 * rollouts of the reference flow (`webserv.harness.rollout`, the Python
 * harness itself, as asyncio tasks in one Python process with the CI venv:
 * `bench/_rollouts_driver.py`) through a rollout server started with
 * `adapters/http/serve.ts`, against the scripted model server
 * (`webserv.scripted_model`) answering at 0 ms and at a fixed simulated
 * latency per turn; beside it in the same run, the same episodes driven
 * in-process through `Env` (`bench/_rollouts_in_process.ts`) against the
 * same model. Each mode runs in a fresh process with its own browser, the
 * two alternating which goes first.
 *
 * Reported per size: rollouts per hour, steps per second, the server's CPU
 * per step (user + system CPU of the server's process alone, not its
 * browser, over the measured loop, divided by the steps; in-process, that of
 * the process running `Env` and the agent loop), p50/p95 step latency, and
 * each as a ratio to in-process.
 *
 * Environment: BENCH_SESSIONS (comma-separated, default "16,32,64,128"),
 * BENCH_LATENCIES_MS (default "0,500"), BENCH_ROLLOUTS (measured rollouts per
 * slot, after up to 16 warm-up rollouts at once; default: about 48 rollouts a run), BENCH_ROUNDS (runs of each mode per
 * size, default 1), BENCH_TASK (`site/template`, default "demo/add-note"),
 * WEBSERV_VENV (default ~/.cache/webserv-venv). Loopback only. Writes
 * `bench/results/rollouts.{md,json}`.
 *
 * @module
 */
import { type InProcessJob, runInProcess, type RunResult } from "./_rollouts_in_process.ts";

const HOME = Deno.env.get("HOME") ?? "/root";
const VENV = Deno.env.get("WEBSERV_VENV") ?? `${HOME}/.cache/webserv-venv`;
const PYTHON = `${VENV}/bin/python`;
const REPO = new URL("../", import.meta.url).pathname;
const PYTHON_PATH = `${REPO}adapters/python`;
const SIZES = (Deno.env.get("BENCH_SESSIONS") ?? "16,32,64,128").split(",").map(Number);
const LATENCIES_MS = (Deno.env.get("BENCH_LATENCIES_MS") ?? "0,500").split(",").map(Number);
/** Measured rollouts per slot: BENCH_ROLLOUTS, or enough for about 48 rollouts per run. */
function rolloutsPerSlot(sessions: number): number {
  const fixed = Deno.env.get("BENCH_ROLLOUTS");
  return fixed ? Number(fixed) : Math.max(1, Math.ceil(48 / sessions));
}
const ROUNDS = Number(Deno.env.get("BENCH_ROUNDS") ?? 1);
const TASK = Deno.env.get("BENCH_TASK") ?? "demo/add-note";
const SEEDS = 8;
/** Sessions opened at most this many at a time, in both modes (as `bench:server` opens them). */
const OPEN_WIDTH = 8;
/**
 * A copy of the tree before a change (`git archive REV | tar -x -C DIR`): its
 * server, driven by its own Python client, runs as a third mode, "server before", beside the others in the
 * same run, so a change's effect is measured side by side.
 */
const BEFORE = Deno.env.get("BENCH_BEFORE_DIR");

type Mode = "server" | "server before" | "in-process";

/** One measured run. */
interface Row {
  mode: Mode;
  backend: string;
  latencyMs: number;
  sessions: number;
  rollouts: number;
  solved: number;
  errorCount: number;
  errors: string[];
  steps: number;
  seconds: number;
  rolloutsPerHour: number;
  stepsPerSecond: number;
  cpuMsPerStep: number;
  p50Ms: number;
  p95Ms: number;
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
}

/** Starts `serve.ts` on port 0; resolves with its URL and the child once it prints the URL. */
async function startServe(
  tree: string,
  sessions: number,
  runDir: string,
): Promise<{ url: string; child: Deno.ChildProcess }> {
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--allow-all",
      `${tree}adapters/http/serve.ts`,
      "--port",
      "0",
      "--max-sessions",
      String(sessions * 2),
      "--run-dir",
      runDir,
    ],
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let seen = "";
  const deadline = setTimeout(() => child.kill("SIGKILL"), 120_000);
  let url: string | undefined;
  while (!url) {
    const { value, done } = await reader.read();
    if (done) break;
    seen += value;
    url = seen.match(/rollout server on (http:\/\/127\.0\.0\.1:\d+)/)?.[1];
  }
  clearTimeout(deadline);
  if (!url) throw new Error(`The server printed no URL: ${seen.slice(-800)}`);
  // Keep draining its output so it never blocks on a full pipe.
  (async () => {
    try {
      while (!(await reader.read()).done) { /* drained */ }
    } catch { /* closed */ }
  })();
  return { url, child };
}

/** One server-mode run: a fresh server from `tree`, the Python driver against it. */
async function runServer(tree: string, sessions: number, latencyMs: number): Promise<RunResult> {
  const runDir = await Deno.makeTempDir({ prefix: "webserv-bench-rollouts-" });
  const { url, child } = await startServe(tree, sessions, runDir);
  try {
    const output = await new Deno.Command(PYTHON, {
      args: [
        `${REPO}bench/_rollouts_driver.py`,
        "--server",
        url,
        "--server-pid",
        String(child.pid),
        "--sessions",
        String(sessions),
        "--rollouts",
        String(rolloutsPerSlot(sessions)),
        "--latency",
        String(latencyMs / 1000),
        "--task-prefix",
        TASK,
        "--seeds",
        String(SEEDS),
        "--open-width",
        String(OPEN_WIDTH),
      ],
      // The tree's own client: a change to the Python client is part of what is measured.
      env: { PYTHONPATH: `${tree}adapters/python` },
      stdout: "piped",
      stderr: "inherit",
    }).output();
    const last = new TextDecoder().decode(output.stdout).trim().split("\n").at(-1) ?? "";
    if (!output.success) throw new Error(`The driver exited with ${output.code}: ${last}`);
    return JSON.parse(last) as RunResult;
  } finally {
    child.kill("SIGTERM");
    await child.status;
    await Deno.remove(runDir, { recursive: true }).catch(() => {});
  }
}

/** One in-process run, in a fresh Deno process (this file with `--in-process`). */
async function runInProcessChild(sessions: number, latencyMs: number): Promise<RunResult> {
  const job: InProcessJob = {
    sessions,
    rollouts: rolloutsPerSlot(sessions),
    latency: latencyMs / 1000,
    taskPrefix: TASK,
    seeds: SEEDS,
    python: PYTHON,
    pythonPath: PYTHON_PATH,
    openWidth: OPEN_WIDTH,
  };
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["run", "--allow-all", new URL(import.meta.url).pathname, "--in-process"],
    stdin: "piped",
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const writer = output.stdin.getWriter();
  await writer.write(new TextEncoder().encode(JSON.stringify(job)));
  await writer.close();
  const { stdout, success, code } = await output.output();
  const last = new TextDecoder().decode(stdout).trim().split("\n").at(-1) ?? "";
  if (!success) throw new Error(`The in-process run exited with ${code}: ${last}`);
  return JSON.parse(last) as RunResult;
}

function rowOf(mode: Mode, sessions: number, latencyMs: number, r: RunResult): Row {
  return {
    mode,
    backend: "fixture",
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
  };
}

if (Deno.args[0] === "--in-process") {
  // A stray rejection inside the engine must not end the whole run.
  globalThis.addEventListener("unhandledrejection", (event) => {
    event.preventDefault();
    console.error("Unhandled rejection:", event.reason);
  });
  const job = JSON.parse(await new Response(Deno.stdin.readable).text()) as InProcessJob;
  console.log(JSON.stringify(await runInProcess(job)));
  Deno.exit(0);
}

const rows: Row[] = [];
const failures: string[] = [];
/** Writes the results of the runs so far (after every run, so a cut-short run keeps its rows). */
async function report(): Promise<string> {
  const median = (values: number[]) => percentile(values, 50);
  const round1 = (x: number) => Math.round(x * 10) / 10;
  const round2 = (x: number) => Math.round(x * 100) / 100;
  const ratio = (x: number) => `×${round2(x)}`;

  /** Per latency and size: medians of each mode and the median of the rounds' paired ratios. */
  const summary = LATENCIES_MS.flatMap((latencyMs) =>
    SIZES.map((sessions) => {
      const of = (mode: Mode) =>
        rows.filter((r) => r.latencyMs === latencyMs && r.sessions === sessions && r.mode === mode);
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
      });
      return {
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
    })
  ).filter((s) => s.rounds > 0);
  const at64 = summary.find((s) => s.latencyMs === 0 && s.sessions === 64);
  const met = (ok: boolean) => (ok ? "met" : "**not met**");
  const targets = at64
    ? [
      `Targets at 64 sessions, 0 ms: server CPU per step ≤ 1.2× in-process: ${
        ratio(at64.cpuRatio)
      }, ${met(at64.cpuRatio <= 1.2)}; p50 step overhead ≤ 10%: ${ratio(at64.p50Ratio)}, ${
        met(at64.p50Ratio <= 1.1)
      }.`,
      "Infrastructure errors (a step past its 30 s deadline, a session that could not open) are",
      "counted, never scored; CPU per step divides all the loop's CPU by the steps of the rollouts",
      "that finished, so a run with errors shows a higher figure.",
      "",
    ]
    : [];

  const load = await Deno.readTextFile("/proc/loadavg").catch(() => "n/a");
  const lines = [
    "# Rollout throughput",
    "",
    "Reference flow (`webserv.harness.rollout`, Python; each slot runs rollouts back to back, about 48",
    `measured a run, after 16 warm-up rollouts), task \`${TASK}/<seed>\` over ${SEEDS} seeds (type the note, click Add, stop:`,
    "3 steps and 3 model turns a rollout), fixture backend, scripted model server",
    "(`webserv.scripted_model`) at each latency per turn. Server mode: `adapters/http/serve.ts`",
    "in its own process (trajectories recorded), the harness as asyncio tasks in one Python process",
    "(CI venv) beside the model server. In-process: the same episodes through `Env` in one Deno",
    "process, the agent loop in TypeScript asking the same model server with the same messages.",
    `${navigator.hardwareConcurrency} cores shared with other work (load average at the end: ${load.trim()}),`,
    `${new Date().toISOString()}, ${ROUNDS} round(s) per size, modes alternating which goes first.`,
    "",
    "CPU/step is the user + system CPU of the server's process alone (not its browser, not the",
    "Python client) over the measured loop, divided by the steps; in-process, that of the process",
    "running `Env` and its agent loop. Ratios are server / in-process, paired run by run, medians.",
    "",
    "| model latency | sessions | in-process rollouts/h | server rollouts/h | in-process steps/s | server steps/s | CPU ms/step in-process | CPU ms/step server | CPU ratio | p50 ms in-process | p50 ms server | p50 ratio | p95 ms in-process | p95 ms server |",
    "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ...summary.map((s) =>
      `| ${s.latencyMs} ms | ${s.sessions} | ${Math.round(s.inProcess.rolloutsPerHour)} | ${
        Math.round(s.server.rolloutsPerHour)
      } | ${round1(s.inProcess.stepsPerSecond)} | ${round1(s.server.stepsPerSecond)} | ${
        round2(s.inProcess.cpuMsPerStep)
      } | ${round2(s.server.cpuMsPerStep)} | ${ratio(s.cpuRatio)} | ${
        round1(s.inProcess.p50Ms)
      } | ${round1(s.server.p50Ms)} | ${ratio(s.p50Ratio)} | ${round1(s.inProcess.p95Ms)} | ${
        round1(s.server.p95Ms)
      } |`
    ),
    "",
    ...targets,
    ...(BEFORE
      ? [
        "The server before the change under test (`BENCH_BEFORE_DIR`, with its own Python client), in the same run, against the",
        "same in-process runs:",
        "",
        "| model latency | sessions | CPU ms/step before | CPU ratio before | CPU ms/step now | CPU ratio now | p50 ms before | p50 ratio before | p50 ms now | p50 ratio now |",
        "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
        ...summary.map((s) =>
          `| ${s.latencyMs} ms | ${s.sessions} | ${round2(s.before?.cpuMsPerStep ?? NaN)} | ${
            ratio(s.beforeCpuRatio ?? NaN)
          } | ${round2(s.server.cpuMsPerStep)} | ${ratio(s.cpuRatio)} | ${
            round1(s.before?.p50Ms ?? NaN)
          } | ${ratio(s.beforeP50Ratio ?? NaN)} | ${round1(s.server.p50Ms)} | ${
            ratio(s.p50Ratio)
          } |`
        ),
        "",
      ]
      : []),
    "Every run:",
    "",
    "| model latency | sessions | mode | rollouts | solved | infra errors | steps | s | rollouts/h | steps/s | CPU ms/step | p50 ms | p95 ms |",
    "| ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ...rows.map((r) =>
      `| ${r.latencyMs} ms | ${r.sessions} | ${r.mode} | ${r.rollouts} | ${r.solved} | ${r.errorCount} | ${r.steps} | ${
        round1(r.seconds)
      } | ${Math.round(r.rolloutsPerHour)} | ${round1(r.stepsPerSecond)} | ${
        round2(r.cpuMsPerStep)
      } | ${round1(r.p50Ms)} | ${round1(r.p95Ms)} |`
    ),
    "",
    ...(failures.length ? ["Runs that failed:", "", ...failures.map((f) => `- ${f}`), ""] : []),
    ...rows.filter((r) => r.errors.length > 0).flatMap((r) => [
      `Errors, ${r.latencyMs} ms, ${r.sessions} sessions, ${r.mode}: ${r.errors.join(" | ")}`,
      "",
    ]),
  ];
  await Deno.mkdir(new URL("./results/", import.meta.url), { recursive: true });
  await Deno.writeTextFile(
    new URL("./results/rollouts.json", import.meta.url),
    JSON.stringify(
      { rounds: ROUNDS, task: TASK, summary, rows, failures },
      null,
      2,
    ) +
      "\n",
  );
  await Deno.writeTextFile(new URL("./results/rollouts.md", import.meta.url), lines.join("\n"));
  return lines.join("\n");
}

if (Deno.args[0] === "--from-json") {
  // Writes the report again from the saved rows (a report's wording changed, no run needed).
  const saved = JSON.parse(
    await Deno.readTextFile(new URL("./results/rollouts.json", import.meta.url)),
  ) as { rows: Row[]; failures: string[] };
  rows.push(...saved.rows);
  failures.push(...saved.failures);
  console.log(await report());
  Deno.exit(0);
}

for (const latencyMs of LATENCIES_MS) {
  for (const n of SIZES) {
    for (let round = 1; round <= ROUNDS; round++) {
      const modes: Mode[] = ["in-process", "server", ...(BEFORE ? ["server before" as const] : [])];
      const order = round % 2 ? modes : [...modes].reverse();
      for (const mode of order) {
        try {
          const result = mode === "in-process"
            ? await runInProcessChild(n, latencyMs)
            : await runServer(mode === "server" ? REPO : `${BEFORE}/`, n, latencyMs);
          const row = rowOf(mode, n, latencyMs, result);
          rows.push(row);
          console.log(JSON.stringify(row));
          await report();
        } catch (error) {
          failures.push(
            `${n} sessions, ${latencyMs} ms, ${mode}: ${
              error instanceof Error ? error.message : error
            }`,
          );
          console.error(failures.at(-1));
        }
      }
    }
  }
}

console.log(await report());
