/**
 * `deno task bench:server`: the rollout server's throughput and latency
 * with 1, 8, 32 and 64 concurrent sessions on the fixture backend, session
 * create and reset latency, and browser memory per session; side by side in
 * the same run, the same workload driven in-process through `Env`, so the
 * server's own overhead shows.
 *
 * Workload: each session runs a closed loop of `hover` steps on the demo
 * site's "Add" button (a real input event, a settle and an observation per
 * step, no navigation). Environment: BENCH_STEPS (steps per session, default
 * 10), BENCH_SESSIONS (comma-separated, default "1,8,32,64"). Loopback only.
 *
 * @module
 */
import { groupProcesses } from "./_proc.ts";
import { Browser, Env } from "../mod.ts";
import { FixtureSandbox, Gateway } from "../sandboxes/mod.ts";
import demoSite from "../fixtures/sites/demo/mod.ts";
import { startServer } from "../adapters/http/server.ts";
import { WebServClient } from "../adapters/client/mod.ts";

const STEPS = Number(Deno.env.get("BENCH_STEPS") ?? 10);
const COUNTS = (Deno.env.get("BENCH_SESSIONS") ?? "1,8,32,64").split(",").map(Number);

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
  const line = text.split("\n").find((l) => l.includes('button "Add"'));
  const id = Number(line?.match(/\[(\d+)\]/)?.[1]);
  if (!Number.isInteger(id)) {
    throw new Error(`No "Add" button in the first observation:\n${text.slice(0, 800)}`);
  }
  return id;
}

/** Resident memory of the browser's process group, in MiB (Linux). */
async function browserMiB(browser: Browser): Promise<number> {
  const group = browser.process?.pid;
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
  const latencies: number[] = [];
  const handler: number[] = [];
  const sizes: number[] = [];
  const started = performance.now();
  await Promise.all(sessions.map(async (session) => {
    const id = buttonId(session.observation.text);
    for (let i = 0; i < STEPS; i++) {
      const t = performance.now();
      const result = await client.step(session.id, { action: "hover", id });
      if (result.status !== "ok") throw new Error(`Step failed: ${JSON.stringify(result.info)}`);
      latencies.push(performance.now() - t);
      handler.push(result.info.elapsed_ms);
      sizes.push(JSON.stringify(result).length);
    }
  }));
  const seconds = (performance.now() - started) / 1000;
  const resets: number[] = [];
  for (const session of sessions.slice(0, 5)) {
    const t = performance.now();
    await client.reset(session.id);
    resets.push(performance.now() - t);
  }
  return {
    mode: "server",
    sessions: n,
    steps: latencies.length,
    stepsPerSecond: latencies.length / seconds,
    p50Ms: percentile(latencies, 50),
    p99Ms: percentile(latencies, 99),
    createP50Ms: percentile(creates, 50),
    resetP50Ms: percentile(resets, 50),
    browserMiBPerSession: memory / n,
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
  const started = performance.now();
  await Promise.all(envs.map(async ({ env, id }) => {
    for (let i = 0; i < STEPS; i++) {
      const t = performance.now();
      await env.step({ action: "hover", id });
      latencies.push(performance.now() - t);
    }
  }));
  const seconds = (performance.now() - started) / 1000;
  const resets: number[] = [];
  for (const { env } of envs.slice(0, 5)) {
    const t = performance.now();
    await env.reset();
    await env.observe();
    resets.push(performance.now() - t);
  }
  for (const { env } of envs) await env.close();
  return {
    mode: "in-process",
    sessions: n,
    steps: latencies.length,
    stepsPerSecond: latencies.length / seconds,
    p50Ms: percentile(latencies, 50),
    p99Ms: percentile(latencies, 99),
    createP50Ms: percentile(creates, 50),
    resetP50Ms: percentile(resets, 50),
    browserMiBPerSession: memory / n,
  };
}

// A stray rejection inside the engine must not end the whole run.
globalThis.addEventListener("unhandledrejection", (event) => {
  event.preventDefault();
  console.error("Unhandled rejection:", event.reason);
});

const rows: Row[] = [];
const failures: string[] = [];
for (const n of COUNTS) {
  for (const run of [runInProcess, runServer]) {
    try {
      const row = await run(n);
      rows.push(row);
      console.log(JSON.stringify(row));
    } catch (error) {
      const mode = run === runServer ? "server" : "in-process";
      failures.push(`${n} sessions, ${mode}: ${error instanceof Error ? error.message : error}`);
      console.error(failures.at(-1));
    }
  }
}

const round = (x: number) => Math.round(x * 10) / 10;
const lines = [
  "# Rollout server benchmark",
  "",
  `Fixture backend, demo site, ${STEPS} hover steps per session in a closed loop, ` +
  `${navigator.hardwareConcurrency} cores (shared with other work), ${new Date().toISOString()}.`,
  "In-process drives `Env` directly in one process and one Chromium; server drives the same",
  "workload through `deno task serve`'s HTTP API (TypeScript client, loopback). All sessions are",
  "created eight at a time. Browser MiB/session is the growth of the summed RSS of the browser's processes",
  "over its idle start, divided by the sessions (a sum of RSS counts shared pages more than once).",
  "",
  "| sessions | mode | steps/s | p50 step ms | p99 step ms | create p50 ms | reset p50 ms | browser MiB/session |",
  "| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: |",
  ...rows.map((r) =>
    `| ${r.sessions} | ${r.mode} | ${round(r.stepsPerSecond)} | ${round(r.p50Ms)} | ${
      round(r.p99Ms)
    } | ${round(r.createP50Ms)} | ${round(r.resetP50Ms)} | ${round(r.browserMiBPerSession)} |`
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
  "Server overhead on the p50 step latency (server / in-process − 1):",
  "",
  ...COUNTS.map((n) => {
    const a = rows.find((r) => r.sessions === n && r.mode === "in-process");
    const b = rows.find((r) => r.sessions === n && r.mode === "server");
    return a && b
      ? `- ${n} sessions: ${round((b.p50Ms / a.p50Ms - 1) * 100)}%`
      : `- ${n} sessions: n/a`;
  }),
  "",
  ...(failures.length ? ["Runs that failed:", "", ...failures.map((f) => `- ${f}`), ""] : []),
];
await Deno.mkdir(new URL("./results/", import.meta.url), { recursive: true });
await Deno.writeTextFile(
  new URL("./results/server.json", import.meta.url),
  JSON.stringify({ steps: STEPS, rows, failures }, null, 2) + "\n",
);
await Deno.writeTextFile(new URL("./results/server.md", import.meta.url), lines.join("\n"));
console.log(lines.join("\n"));
