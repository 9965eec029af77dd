/**
 * `deno task bench:rollouts`: published rollout throughput. N concurrent
 * rollouts of the reference flow (`webserv.harness.rollout`, the Python
 * harness itself, as asyncio tasks in one Python process with the CI venv:
 * `bench/_rollouts_driver.py`) through a rollout server started with
 * `adapters/http/serve.ts --backend <backend>`, against the scripted model server
 * (`webserv.scripted_model`) answering at 0 ms and at a fixed simulated
 * latency per turn; beside it in the same run, the same episodes driven
 * in-process through `Env` (`bench/_rollouts_in_process.ts`) against the
 * same model. Each mode runs in a fresh process with its own browser, the
 * two alternating which goes first. Two backends: the fixture backend (a
 * recreated site, `demo/add-note`) and the shared runtime (a real
 * application, WordPress's `post-author`, one Apache/PHP for the seed and a
 * `mariadbd` per env), whose runs also sample their memory
 * (`bench/_rollouts_memory.ts`).
 *
 * Reported per size: rollouts per hour, steps per second, the server's CPU
 * per step (user + system CPU of the server's process alone, not its
 * browser, over the measured loop, divided by the steps; in-process, that of
 * the process running `Env` and the agent loop), p50/p95 step latency, and
 * each as a ratio to in-process.
 *
 * Environment: BENCH_BACKENDS (default "fixture,shared"), BENCH_SESSIONS
 * (the fixture backend's sizes, comma-separated, default "16,64,128"),
 * BENCH_SHARED_SESSIONS (the shared runtime's, default "16,64"),
 * BENCH_LATENCIES_MS (default "0,500"), BENCH_ROLLOUTS (measured rollouts per
 * slot; default: about 48 rollouts a run on the fixture backend, 16 on the
 * shared runtime), BENCH_ROUNDS (runs of each mode per cell, default 1),
 * BENCH_TARGET_ROUNDS (at the targets' cell, fixture 0 ms 64 sessions, default 3),
 * BENCH_UNTIL (an ISO time no round starts after; the most telling cells run first),
 * WEBSERV_VENV (default ~/.cache/webserv-venv). Loopback only. Writes
 * `bench/results/rollouts.{md,json}`.
 *
 * @module
 */
import { spawnForUrl } from "./_child_url.ts";
import { type InProcessJob, runInProcess } from "./_rollouts_in_process.ts";
import {
  type BackendName,
  BACKENDS,
  jobFor,
  type RolloutBackend,
  type RolloutJob,
  type RunResult,
} from "./_rollouts_job.ts";
import { type MemoryPeak, sampleMemory } from "./_rollouts_memory.ts";
import { type Mode, renderReport, type Row, rowOf } from "./_rollouts_report.ts";

const HOME = Deno.env.get("HOME") ?? "/root";
const VENV = Deno.env.get("WEBSERV_VENV") ?? `${HOME}/.cache/webserv-venv`;
const PYTHON = `${VENV}/bin/python`;
const REPO = new URL("../", import.meta.url).pathname;
const PYTHON_PATH = `${REPO}adapters/python`;
const list = (name: string, fallback: string) =>
  (Deno.env.get(name) ?? fallback).split(",").map((s) => s.trim()).filter(Boolean);
const BACKEND_NAMES = list("BENCH_BACKENDS", "fixture,shared") as BackendName[];
for (const name of BACKEND_NAMES) {
  if (!(name in BACKENDS)) {
    throw new Error(`BENCH_BACKENDS: no backend "${name}" (known: ${Object.keys(BACKENDS)})`);
  }
}
/** Sizes per backend: a real application's env costs more than a recreated site's. */
const SIZES: Record<BackendName, number[]> = {
  fixture: list("BENCH_SESSIONS", "16,64,128").map(Number),
  shared: list("BENCH_SHARED_SESSIONS", "16,64").map(Number),
};
/** Measured rollouts a run when BENCH_ROLLOUTS does not set them per slot. */
const PER_RUN: Record<BackendName, number> = { fixture: 48, shared: 16 };
const LATENCIES_MS = list("BENCH_LATENCIES_MS", "0,500").map(Number);
const FIXED_ROLLOUTS = Deno.env.get("BENCH_ROLLOUTS");
const ROUNDS = Number(Deno.env.get("BENCH_ROUNDS") ?? 1);
/** Rounds of the cell the targets are read at (fixture, 0 ms, 64 sessions): its ratios are the ones judged. */
const TARGET_ROUNDS = Number(Deno.env.get("BENCH_TARGET_ROUNDS") ?? 3);
/** Runs of each mode in a cell. */
function roundsOf(backend: BackendName, latencyMs: number, sessions: number): number {
  return backend === "fixture" && latencyMs === 0 && sessions === 64
    ? Math.max(ROUNDS, TARGET_ROUNDS)
    : ROUNDS;
}
/**
 * A copy of the tree before a change (`git archive REV | tar -x -C DIR`): its
 * server, driven by its own Python client, runs as a third mode, "server before", beside the others in the
 * same run, so a change's effect is measured side by side.
 */
const BEFORE = Deno.env.get("BENCH_BEFORE_DIR");
/** No round starts past this time (BENCH_UNTIL, an ISO date): the report lists the rounds left out. */
const UNTIL = Deno.env.get("BENCH_UNTIL") ? Date.parse(Deno.env.get("BENCH_UNTIL")!) : undefined;
if (UNTIL !== undefined && Number.isNaN(UNTIL)) {
  throw new Error(`BENCH_UNTIL: not a date: "${Deno.env.get("BENCH_UNTIL")}"`);
}

/** Starts `serve.ts` on port 0; resolves with its URL and the child once it prints the URL. */
async function startServe(
  tree: string,
  job: RolloutJob,
  runDir: string,
): Promise<{ url: string; child: Deno.ChildProcess }> {
  return await spawnForUrl(
    new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "--allow-all",
        `${tree}adapters/http/serve.ts`,
        "--port",
        "0",
        "--backend",
        job.backend,
        "--max-sessions",
        String(job.sessions * 2),
        "--run-dir",
        runDir,
      ],
      stdout: "piped",
      stderr: "inherit",
    }),
    /rollout server on (http:\/\/127\.0\.0\.1:\d+)/,
    "The server",
    120_000,
  );
}

/** One server-mode run: a fresh server from `tree`, the Python driver against it. */
async function runServer(tree: string, job: RolloutJob): Promise<RunResult> {
  const runDir = await Deno.makeTempDir({ prefix: "webserv-bench-rollouts-" });
  const { url, child } = await startServe(tree, job, runDir);
  try {
    const output = await new Deno.Command(PYTHON, {
      args: [
        `${REPO}bench/_rollouts_driver.py`,
        "--server",
        url,
        "--server-pid",
        String(child.pid),
        "--job",
        JSON.stringify(job),
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
    // Its backend closes on SIGTERM (envs, runtimes, browser): wait for it, so the next run starts clean.
    child.kill("SIGTERM");
    await child.status;
    await Deno.remove(runDir, { recursive: true }).catch(() => {});
  }
}

/** One in-process run, in a fresh Deno process (this file with `--in-process`). */
async function runInProcessChild(job: RolloutJob): Promise<RunResult> {
  const full: InProcessJob = { ...job, python: PYTHON, pythonPath: PYTHON_PATH };
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["run", "--allow-all", new URL(import.meta.url).pathname, "--in-process"],
    stdin: "piped",
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const writer = output.stdin.getWriter();
  await writer.write(new TextEncoder().encode(JSON.stringify(full)));
  await writer.close();
  const { stdout, success, code } = await output.output();
  const last = new TextDecoder().decode(stdout).trim().split("\n").at(-1) ?? "";
  if (!success) throw new Error(`The in-process run exited with ${code}: ${last}`);
  return JSON.parse(last) as RunResult;
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
  const perRun = FIXED_ROLLOUTS
    ? `${FIXED_ROLLOUTS} per slot`
    : `about ${PER_RUN.fixture} (fixture) or ${PER_RUN.shared} (shared runtime)`;
  const { markdown, json } = await renderReport(rows, failures, {
    rounds: `${ROUNDS} per cell (${
      Math.max(ROUNDS, TARGET_ROUNDS)
    } at the targets' cell: fixture, 0 ms, 64 sessions)`,
    perRun,
    before: BEFORE !== undefined,
  });
  await Deno.mkdir(new URL("./results/", import.meta.url), { recursive: true });
  await Deno.writeTextFile(
    new URL("./results/rollouts.json", import.meta.url),
    JSON.stringify(json, null, 2) + "\n",
  );
  await Deno.writeTextFile(new URL("./results/rollouts.md", import.meta.url), markdown);
  return markdown;
}

if (Deno.args[0] === "--from-json") {
  // Writes the report again from the saved rows (a report's wording changed, no run needed).
  const saved = JSON.parse(
    await Deno.readTextFile(new URL("./results/rollouts.json", import.meta.url)),
  ) as { rows: Row[]; failures: string[] };
  rows.push(...saved.rows.map((r) => ({ ...r, backend: r.backend ?? "fixture" })));
  failures.push(...saved.failures);
  console.log(await report());
  Deno.exit(0);
}

/** One run of one mode, its memory sampled on the shared runtime. */
async function measure(
  mode: Mode,
  backend: RolloutBackend,
  job: RolloutJob,
): Promise<{ result: RunResult; memory?: MemoryPeak }> {
  const stop = backend.name === "shared" ? await sampleMemory() : undefined;
  let result: RunResult;
  let memory: MemoryPeak | undefined;
  try {
    result = mode === "in-process"
      ? await runInProcessChild(job)
      : await runServer(mode === "server" ? REPO : `${BEFORE}/`, job);
  } finally {
    memory = await stop?.();
  }
  return { result, ...(memory ? { memory } : {}) };
}

/** One cell of the matrix. */
interface Cell {
  backend: RolloutBackend;
  sessions: number;
  latencyMs: number;
}
const isTarget = (c: Cell) =>
  c.backend.name === "fixture" && c.latencyMs === 0 && c.sessions === 64;
/** The largest sizes (a real application past 16 sessions, a recreated site past 64) cost the most. */
const isLarge = (c: Cell) => c.sessions > (c.backend.name === "shared" ? 16 : 64);
/**
 * The cells, the most telling first: the targets' cell, then the smaller sizes
 * (0 ms before 500 ms), then the largest; so a run cut short by
 * BENCH_UNTIL still has the targets and the real application.
 */
const cells: Cell[] = BACKEND_NAMES.flatMap((name) =>
  SIZES[name].flatMap((sessions) =>
    LATENCIES_MS.map((latencyMs) => ({ backend: BACKENDS[name], sessions, latencyMs }))
  )
).sort((a, b) =>
  Number(isTarget(b)) - Number(isTarget(a)) || Number(isLarge(a)) - Number(isLarge(b)) ||
  a.latencyMs - b.latencyMs || a.backend.name.localeCompare(b.backend.name) ||
  a.sessions - b.sessions
);

for (const { backend, sessions: n, latencyMs } of cells) {
  const name = backend.name;
  const job = jobFor(
    backend,
    n,
    latencyMs,
    FIXED_ROLLOUTS ? Number(FIXED_ROLLOUTS) : undefined,
    PER_RUN[name],
  );
  for (let round = 1; round <= roundsOf(name, latencyMs, n); round++) {
    const modes: Mode[] = ["in-process", "server", ...(BEFORE ? ["server before" as const] : [])];
    const order = round % 2 ? modes : [...modes].reverse();
    if (UNTIL !== undefined && Date.now() > UNTIL) {
      failures.push(
        `${name}, ${n} sessions, ${latencyMs} ms, round ${round}: not started, past BENCH_UNTIL`,
      );
      continue;
    }
    for (const mode of order) {
      try {
        const { result, memory } = await measure(mode, backend, job);
        const row = rowOf(mode, name, n, latencyMs, result, memory);
        rows.push(row);
        console.log(JSON.stringify(row));
        await report();
      } catch (error) {
        failures.push(
          `${name}, ${n} sessions, ${latencyMs} ms, ${mode}: ${
            error instanceof Error ? error.message : error
          }`,
        );
        console.error(failures.at(-1));
      }
    }
  }
}

console.log(await report());
