/**
 * `deno task bench:server`: the rollout server's throughput and latency
 * with 1, 8, 32 and 64 concurrent sessions on the fixture backend, session
 * create and reset latency, and browser memory per session; side by side in
 * the same run, the same workload driven in-process through `Env`, so the
 * server's own overhead shows.
 *
 * Workload: each session runs a closed loop of `hover` steps on the demo
 * site's "Add" button (a real input event, a settle and an observation per
 * step, no navigation). The client runs in a worker thread of its own, as a
 * trainer's client runs in the trainer's process. Every run is a fresh process with its own browser,
 * and the two modes alternate (in-process first on odd rounds, server first
 * on even ones), so neither inherits the other's heap, processes or order.
 * Environment: BENCH_STEPS (steps per session, default 30), BENCH_SESSIONS
 * (comma-separated, default "1,8,32,64"), BENCH_ROUNDS (runs of each mode
 * per size, default 5). Loopback only.
 *
 * `BENCH_SERVER_APP=wordpress` measures a real application on the incus
 * backend instead (`bench/_server_apps.ts`; sizes in BENCH_SESSIONS, default
 * "16"; BENCH_STEPS default 10; BENCH_SPARES default 4) and merges its rows
 * into the same result files, leaving the fixture rows as they are.
 *
 * `BENCH_SERVER_FORK=1` measures `POST /v1/sessions/{id}/fork` for n = 1, 4,
 * 16 beside a create and a reset instead (`bench/_server_fork.ts`, results
 * in `bench/results/server_fork.{md,json}`); `BENCH_SERVER_FORK=shared` on the
 * shared runtime, with WordPress.
 *
 * @module
 */
import process from "node:process";
import { groupProcesses } from "./_proc.ts";
import { Browser, Env } from "../mod.ts";
import { FixtureSandbox, Gateway } from "../sandboxes/mod.ts";
import demoSite from "../fixtures/sites/demo/mod.ts";
import { startServer } from "../adapters/http/server.ts";
import { WebServClient } from "../adapters/client/mod.ts";
import type { ClientJob, ClientResult } from "./_server_client.ts";
import { benchServerFork } from "./_server_fork.ts";
import {
  type AppRow,
  mergeAppRows,
  runAppSize,
  savedAppRows,
  withAppSection,
} from "./_server_apps.ts";
import { browserInternals } from "../engine/browser/browser.ts";

const APP = Deno.env.get("BENCH_SERVER_APP");

const STEPS = Number(Deno.env.get("BENCH_STEPS") ?? (APP ? 10 : 30));
const COUNTS = (Deno.env.get("BENCH_SESSIONS") ?? (APP ? "16" : "1,8,32,64")).split(",")
  .map(Number);
const SPARES = Number(Deno.env.get("BENCH_SPARES") ?? 4);
const POOL = Deno.env.get("WEBSERV_INCUS_POOL") ?? "webserv-btrfs";
const ROUNDS = Number(Deno.env.get("BENCH_ROUNDS") ?? 5);

interface Row {
  mode: "server" | "in-process";
  sessions: number;
  steps: number;
  stepsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  createP50Ms: number;
  resetP50Ms: number;
  browserMiBPerSession: number;
  /** CPU of this process (the engine; in server mode also the server and the client) per step, ms. */
  denoCpuMsPerStep: number;
  /** CPU of the browser's processes per step, ms. */
  browserCpuMsPerStep: number;
  /** Server only: p50 of the time inside the session manager (`info.elapsed_ms`). */
  handlerP50Ms?: number;
  /** Server only: p50 size of a step's JSON response, in bytes. */
  responseBytesP50?: number;
}

/** Runs `make` n times, at most `width` at once (a trainer ramps up the same way). */
async function waves<T>(n: number, width: number, make: () => Promise<T>): Promise<T[]> {
  const out: T[] = [];
  for (let i = 0; i < n; i += width) {
    out.push(...await Promise.all(Array.from({ length: Math.min(width, n - i) }, make)));
  }
  return out;
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
}

/** The "Add" button's id in an observation's text; an error that shows the text when it is not there. */
function buttonId(text: string): number {
  const line = text.split("\n").find((l) => /button "?Add\b/.test(l));
  const id = Number(line?.match(/\[(\d+)\]/)?.[1]);
  if (!Number.isInteger(id)) {
    throw new Error(`No "Add" button in the first observation:\n${text.slice(0, 800)}`);
  }
  return id;
}

/** User and system CPU of the browser's process group so far, in ms (Linux, 100 ticks/s). */
async function browserCpuMs(browser: Browser): Promise<number> {
  const group = browserInternals(browser).process?.pid;
  if (!group) return NaN;
  let ticks = 0;
  for await (const { stat } of groupProcesses(group)) ticks += Number(stat[11]) + Number(stat[12]);
  return ticks * 10;
}

/** CPU spent by `browser` and by this process while `loop` runs, per step. */
async function cpuPerStep(
  browser: Browser,
  loop: () => Promise<number>,
): Promise<
  { steps: number; seconds: number; denoCpuMsPerStep: number; browserCpuMsPerStep: number }
> {
  const browserBefore = await browserCpuMs(browser);
  const own = process.cpuUsage();
  const started = performance.now();
  const steps = await loop();
  const seconds = (performance.now() - started) / 1000;
  const { user, system } = process.cpuUsage(own);
  const browserMs = (await browserCpuMs(browser)) - browserBefore;
  return {
    steps,
    seconds,
    denoCpuMsPerStep: (user + system) / 1000 / steps,
    browserCpuMsPerStep: browserMs / steps,
  };
}

/** Resident memory of the browser's process group, in MiB (Linux). */
async function browserMiB(browser: Browser): Promise<number> {
  const group = browserInternals(browser).process?.pid;
  if (!group) return NaN;
  let kib = 0;
  for await (const { pid } of groupProcesses(group)) {
    try {
      const status = await Deno.readTextFile(`/proc/${pid}/status`);
      kib += Number(status.match(/VmRSS:\s+(\d+)/)?.[1] ?? 0);
    } catch {
      // The process ended meanwhile.
    }
  }
  return kib / 1024;
}

async function runServer(n: number): Promise<Row> {
  await using server = await startServer({ port: 0, maxSessions: Math.max(64, n) });
  const client = new WebServClient(server.url);
  const baseline = await browserMiB(server.browser!);
  const creates: number[] = [];
  const sessions = await waves(n, 8, async () => {
    const started = performance.now();
    const created = await client.createSession({ site: "demo" });
    creates.push(performance.now() - started);
    return created;
  });
  const memory = (await browserMiB(server.browser!)) - baseline;
  const worker = new Worker(new URL("./_server_client.ts", import.meta.url), { type: "module" });
  let result: ClientResult | undefined;
  const cpu = await cpuPerStep(server.browser!, async () => {
    const done = new Promise<ClientResult>((resolve, reject) => {
      worker.onmessage = (event: MessageEvent<ClientResult>) => resolve(event.data);
      worker.onerror = (event) => reject(new Error(`The client worker failed: ${event.message}`));
    });
    const job: ClientJob = {
      url: server.url,
      sessions: sessions.map((s) => ({ id: s.id, button: buttonId(s.observation.text) })),
      steps: STEPS,
    };
    worker.postMessage(job);
    result = await done;
    return result.latencies.length;
  });
  worker.terminate();
  if (!result || result.error) throw new Error(result?.error ?? "The client worker sent nothing");
  const { latencies, handler, sizes } = result;
  const resets: number[] = [];
  for (const session of sessions.slice(0, 5)) {
    const t = performance.now();
    await client.reset(session.id);
    resets.push(performance.now() - t);
  }
  return {
    ...rowOf("server", n, { latencies, creates, resets, memory, cpu }),
    handlerP50Ms: percentile(handler, 50),
    responseBytesP50: percentile(sizes, 50),
  };
}

async function runInProcess(n: number): Promise<Row> {
  await using browser = await Browser.launch();
  await using gateway = new Gateway();
  await using sandbox = new FixtureSandbox(demoSite, { gateway });
  const baseline = await browserMiB(browser);
  const creates: number[] = [];
  const envs = await waves(n, 8, async () => {
    const started = performance.now();
    const instance = await sandbox.create({ seed: 0 });
    const env = await Env.create(browser, { site: instance });
    const observation = await env.observe();
    creates.push(performance.now() - started);
    return { env, id: buttonId(observation.text) };
  });
  const memory = (await browserMiB(browser)) - baseline;
  const latencies: number[] = [];
  const cpu = await cpuPerStep(browser, async () => {
    await Promise.all(envs.map(async ({ env, id }) => {
      for (let i = 0; i < STEPS; i++) {
        const t = performance.now();
        await env.step({ action: "hover", id });
        latencies.push(performance.now() - t);
      }
    }));
    return latencies.length;
  });
  const resets: number[] = [];
  for (const { env } of envs.slice(0, 5)) {
    const t = performance.now();
    await env.reset();
    await env.observe();
    resets.push(performance.now() - t);
  }
  for (const { env } of envs) await env.close();
  return rowOf("in-process", n, { latencies, creates, resets, memory, cpu });
}

/** A run's row from what it measured. */
function rowOf(
  mode: Row["mode"],
  n: number,
  measured: {
    latencies: number[];
    creates: number[];
    resets: number[];
    memory: number;
    cpu: Awaited<ReturnType<typeof cpuPerStep>>;
  },
): Row {
  const { latencies, creates, resets, memory, cpu } = measured;
  return {
    mode,
    sessions: n,
    steps: latencies.length,
    stepsPerSecond: cpu.steps / cpu.seconds,
    p50Ms: percentile(latencies, 50),
    p99Ms: percentile(latencies, 99),
    createP50Ms: percentile(creates, 50),
    resetP50Ms: percentile(resets, 50),
    browserMiBPerSession: memory / n,
    denoCpuMsPerStep: cpu.denoCpuMsPerStep,
    browserCpuMsPerStep: cpu.browserCpuMsPerStep,
  };
}

// A stray rejection inside the engine must not end the whole run.
globalThis.addEventListener("unhandledrejection", (event) => {
  event.preventDefault();
  console.error("Unhandled rejection:", event.reason);
});

/** Runs one mode at one size in a fresh process: the child prints its row as its last line. */
async function runChild(mode: Row["mode"], n: number): Promise<Row> {
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["run", "--allow-all", new URL(import.meta.url).pathname, "--one", mode, String(n)],
    stdout: "piped",
    stderr: "inherit",
  }).output();
  const last = new TextDecoder().decode(output.stdout).trim().split("\n").at(-1) ?? "";
  if (!output.success) throw new Error(`the run exited with ${output.code}: ${last}`);
  return JSON.parse(last) as Row;
}

if (Deno.env.get("BENCH_SERVER_FORK")) {
  console.log(
    await benchServerFork(Deno.env.get("BENCH_SERVER_FORK") === "shared" ? "shared" : "fixture"),
  );
  Deno.exit(0);
}

if (Deno.args[0] === "--one") {
  const [, mode, n] = Deno.args;
  const row = await (mode === "server" ? runServer : runInProcess)(Number(n));
  console.log(JSON.stringify(row));
  Deno.exit(0);
}

if (Deno.args[0] === "--one-app") {
  const row = await runAppSize({
    app: Deno.args[1]!,
    sessions: Number(Deno.args[2]),
    steps: STEPS,
    spares: SPARES,
    pool: POOL,
  });
  console.log(JSON.stringify(row));
  Deno.exit(0);
}

if (APP) {
  const appRows: AppRow[] = [];
  const appFailures: string[] = [];
  for (const n of COUNTS) {
    // A fresh process per size, as for the fixture rows.
    const output = await new Deno.Command(Deno.execPath(), {
      args: ["run", "--allow-all", new URL(import.meta.url).pathname, "--one-app", APP, String(n)],
      stdout: "piped",
      stderr: "inherit",
    }).output();
    const last = new TextDecoder().decode(output.stdout).trim().split("\n").at(-1) ?? "";
    if (output.success) {
      appRows.push(JSON.parse(last) as AppRow);
      console.log(last);
    } else {
      appFailures.push(`${APP}, ${n} sessions: exited with ${output.code}: ${last}`);
      console.error(appFailures.at(-1));
    }
  }
  await mergeAppRows(appRows, appFailures);
  Deno.exit(appFailures.length === 0 ? 0 : 1);
}

const rows: Row[] = [];
const failures: string[] = [];
for (const n of COUNTS) {
  for (let round = 1; round <= ROUNDS; round++) {
    const order: Row["mode"][] = round % 2 ? ["in-process", "server"] : ["server", "in-process"];
    for (const mode of order) {
      try {
        const row = await runChild(mode, n);
        rows.push(row);
        console.log(JSON.stringify(row));
      } catch (error) {
        failures.push(`${n} sessions, ${mode}: ${error instanceof Error ? error.message : error}`);
        console.error(failures.at(-1));
      }
    }
  }
}

const round = (x: number) => Math.round(x * 10) / 10;
const round2 = (x: number) => Math.round(x * 100) / 100;
const median = (values: number[]) => percentile(values, 50);
const of = (n: number, mode: Row["mode"]) =>
  rows.filter((r) => r.sessions === n && r.mode === mode);
/** Per size: the medians over rounds of each mode, and the median of the rounds' paired ratios. */
const summary = COUNTS.filter((n, i) => COUNTS.indexOf(n) === i).map((n) => {
  const local = of(n, "in-process");
  const served = of(n, "server");
  const pairs = Math.min(local.length, served.length);
  const ratios = Array.from({ length: pairs }, (_, i) => served[i]!.p50Ms / local[i]!.p50Ms - 1);
  const cpu = (r: Row) => r.denoCpuMsPerStep + r.browserCpuMsPerStep;
  const cpuRatios = Array.from({ length: pairs }, (_, i) => cpu(served[i]!) / cpu(local[i]!) - 1);
  return {
    sessions: n,
    rounds: pairs,
    inProcess: {
      stepsPerSecond: median(local.map((r) => r.stepsPerSecond)),
      p50Ms: median(local.map((r) => r.p50Ms)),
      cpuMsPerStep: median(local.map(cpu)),
    },
    server: {
      stepsPerSecond: median(served.map((r) => r.stepsPerSecond)),
      p50Ms: median(served.map((r) => r.p50Ms)),
      cpuMsPerStep: median(served.map(cpu)),
    },
    p50Overhead: median(ratios),
    p50Overheads: ratios,
    cpuOverhead: median(cpuRatios),
  };
});
const pct = (x: number) => `${round(x * 100)}%`;
/** The two targets at the largest size, read off the summary. */
function targets(): string[] {
  const top = summary.at(-1);
  if (!top) return [];
  const met = (ok: boolean) => (ok ? "met" : "**not met**");
  return [
    `Targets at ${top.sessions} sessions: ≥ 50 steps/s through the server: ${
      round(top.server.stepsPerSecond)
    }, ${met(top.server.stepsPerSecond >= 50)}; the server adds ≤ 10% to the in-process p50: ${
      pct(top.p50Overhead)
    }, ${met(top.p50Overhead <= 0.1)}.`,
    "Where both cores are saturated (32 and 64 sessions), CPU per step is latency: the server's",
    "own CPU (routing, validation, JSON, HTTP on both ends) shows up as the p50 overhead, and the",
    "two overhead columns agree. One run alone swings by ±15% (the browser's CPU per step varies",
    "from run to run), hence the rounds and the medians.",
  ];
}
const lines = [
  "# Rollout server benchmark",
  "",
  `Fixture backend, demo site, ${STEPS} hover steps per session in a closed loop, ` +
  `${navigator.hardwareConcurrency} cores (shared with other work), ${new Date().toISOString()}.`,
  "In-process drives `Env` directly in one process and one Chromium; server drives the same",
  "workload through `deno task serve`'s HTTP API (TypeScript client on a worker thread of its own,",
  "as a trainer's client runs in the trainer's process; loopback).",
  `Each run is a fresh process with its own browser; each size runs ${ROUNDS} rounds, the modes`,
  "alternating which goes first. All sessions are created eight at a time. Browser MiB/session is the",
  "growth of the summed RSS of the browser's processes over its idle start, divided by the sessions",
  "(a sum of RSS counts shared pages more than once). CPU/step is the user and system CPU of the",
  "benchmark's process (engine; in server mode also the server and the client) and of the browser's",
  "processes over the step loop, divided by the steps.",
  "",
  "Summary, medians over the rounds. The overhead is the median of each round's",
  "server / in-process − 1, on the p50 step latency and on the CPU per step:",
  "",
  "| sessions | in-process steps/s | server steps/s | in-process p50 ms | server p50 ms | p50 overhead | rounds' overheads | CPU/step in-process | CPU/step server | CPU overhead |",
  "| ---: | ---: | ---: | ---: | ---: | ---: | --- | ---: | ---: | ---: |",
  ...summary.map((s) =>
    `| ${s.sessions} | ${round(s.inProcess.stepsPerSecond)} | ${round(s.server.stepsPerSecond)} | ${
      round(s.inProcess.p50Ms)
    } | ${round(s.server.p50Ms)} | ${pct(s.p50Overhead)} | ${
      s.p50Overheads.map(pct).join(", ")
    } | ${round(s.inProcess.cpuMsPerStep)} | ${round(s.server.cpuMsPerStep)} | ${
      pct(s.cpuOverhead)
    } |`
  ),
  "",
  ...targets(),
  "",
  "Every run:",
  "",
  "| sessions | mode | steps/s | p50 step ms | p99 step ms | create p50 ms | reset p50 ms | browser MiB/session | process CPU ms/step | browser CPU ms/step |",
  "| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
  ...rows.map((r) =>
    `| ${r.sessions} | ${r.mode} | ${round(r.stepsPerSecond)} | ${round(r.p50Ms)} | ${
      round(r.p99Ms)
    } | ${round(r.createP50Ms)} | ${round(r.resetP50Ms)} | ${round(r.browserMiBPerSession)} | ${
      round2(r.denoCpuMsPerStep)
    } | ${round2(r.browserCpuMsPerStep)} |`
  ),
  "",
  "Where the server's time goes (p50 per step): in the session manager (`info.elapsed_ms`:",
  "the env's step, the instance check, metrics, history) and, the rest of the client's wait,",
  "HTTP, JSON and the wait for the event loop the server shares with the browser driver:",
  "",
  "| sessions | client p50 ms | in the manager p50 ms | rest ms | response bytes p50 |",
  "| ---: | ---: | ---: | ---: | ---: |",
  ...rows.filter((r) => r.mode === "server").map((r) =>
    `| ${r.sessions} | ${round(r.p50Ms)} | ${round(r.handlerP50Ms ?? NaN)} | ${
      round(r.p50Ms - (r.handlerP50Ms ?? NaN))
    } | ${r.responseBytesP50 ?? "n/a"} |`
  ),
  "",
  ...(failures.length ? ["Runs that failed:", "", ...failures.map((f) => `- ${f}`), ""] : []),
];
await Deno.mkdir(new URL("./results/", import.meta.url), { recursive: true });
// The real-application rows of an earlier BENCH_SERVER_APP run are kept.
const apps = await savedAppRows();
await Deno.writeTextFile(
  new URL("./results/server.json", import.meta.url),
  JSON.stringify({ steps: STEPS, rounds: ROUNDS, summary, rows, failures, apps }, null, 2) + "\n",
);
await Deno.writeTextFile(
  new URL("./results/server.md", import.meta.url),
  apps.rows.length > 0 || apps.failures.length > 0
    ? withAppSection(lines.join("\n"), apps.rows, apps.failures)
    : lines.join("\n"),
);
console.log(lines.join("\n"));
