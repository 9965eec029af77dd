/**
 * What the dashboard costs on a large run and a busy server:
 *
 * - a finished run of `BENCH_EPISODES` episodes (default 10,000; 4 an
 *   episode file, 5 steps each, observations of about 1.5 KB), written
 *   here: the first `/dashboard/stats` (every file parsed), a later one (a
 *   closed session's file is not read again, the median of 5), `/dashboard/episodes`, and the
 *   main page's load in Chromium until its figures are drawn (median of 3); then the same run
 *   as a past run beside an empty current one: the first `/dashboard/runs` (every file parsed),
 *   a later one, and the picked run's `/dashboard/stats?run=…` (medians of 5);
 * - `BENCH_SESSIONS` live sessions (default 32) stepping on the demo site,
 *   with 0 and then `BENCH_VIEWERS` (default 3) dashboard pages open: the
 *   server process's CPU time per step, and the step latency, each way.
 *
 * Run with `deno task bench:dashboard`; writes `bench/results/dashboard.json`
 * and `bench/results/dashboard.md`.
 *
 * @module
 */
import { join } from "node:path";
import process from "node:process";
import { Env } from "../mod.ts";
import { startServer } from "../adapters/http/server.ts";
import { WebServClient } from "../adapters/client/mod.ts";

const EPISODES = Number(Deno.env.get("BENCH_EPISODES") ?? 10_000);
const SESSIONS = Number(Deno.env.get("BENCH_SESSIONS") ?? 32);
const VIEWERS = Number(Deno.env.get("BENCH_VIEWERS") ?? 3);
const ROUNDS = Number(Deno.env.get("BENCH_ROUNDS") ?? 5);

const OBSERVATION = "# Shop   http://env-1.localhost/\n" +
  Array.from({ length: 40 }, (_, i) => `  [${i}] link "Product number ${i}" · $${i}.99`).join("\n");

/** Writes a finished run: 4 episodes a session file, 5 steps each, groups of 8 sessions. */
async function writeRun(directory: string, episodes: number): Promise<void> {
  const t0 = Date.now() - 3_600_000;
  const sessions = Math.ceil(episodes / 4);
  for (let s = 0; s < sessions; s++) {
    const id = `s-${s.toString(16).padStart(16, "0")}`;
    const lines: string[] = [];
    let t = t0 + s * 300;
    const line = (event: Record<string, unknown>) =>
      lines.push(
        JSON.stringify({ v: 1, t: new Date(t += 50).toISOString(), session: id, ...event }),
      );
    for (let episode = 0; episode < 4 && s * 4 + episode < episodes; episode++) {
      const task = `shop/template-${s % 12}/${s % 50}`;
      line({
        type: "start",
        episode,
        group: `g-${Math.floor(s / 8)}`,
        task,
        instruction: "Find it",
        url: "http://env-1.localhost/",
        observation: OBSERVATION,
      });
      for (let step = 1; step <= 5; step++) {
        const done = step === 5;
        const reward = (s + episode) % 3 === 0 ? 1 : 0;
        line({
          type: "step",
          episode,
          step,
          action: { action: "click", id: step },
          status: step === 2 && s % 7 === 0 ? "action_error" : "ok",
          ...(step === 2 && s % 7 === 0
            ? { error: { code: "unknown-id", message: "No element has id 2" } }
            : {}),
          ...(done ? { reward, verdict: { reward, reason: "" } } : {}),
          done,
          truncated: false,
          observation: OBSERVATION,
          url: "http://env-1.localhost/",
          elapsed_ms: 40,
        });
      }
    }
    line({ type: "end", episode: 3, reason: "closed" });
    await Deno.writeTextFile(join(directory, `${id}.jsonl`), lines.join("\n") + "\n");
  }
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

/** The median of `n` timings, each after the view's 1 s reading has lapsed. */
async function medianOf(n: number, fn: () => Promise<unknown>): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < n; i++) {
    await new Promise((r) => setTimeout(r, 1100));
    times.push((await timed(fn))[1]);
  }
  return median(times);
}

async function pageLoad(
  url: string,
  browser: NonNullable<Awaited<ReturnType<typeof startServer>>["browser"]>,
): Promise<number> {
  const [, ms] = await timed(async () => {
    await using env = await Env.create(browser, { startUrl: url });
    for (let i = 0; i < 300; i++) {
      if (await env.evaluate("document.body.dataset.refreshed") !== undefined) return;
      await new Promise((r) => setTimeout(r, 20));
    }
    throw new Error("The page never drew its figures");
  });
  return ms;
}

async function timed<T>(fn: () => Promise<T>): Promise<[T, number]> {
  const start = performance.now();
  const value = await fn();
  return [value, Math.round((performance.now() - start) * 10) / 10];
}

function cpuMs(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}

async function largeRun() {
  const directory = await Deno.makeTempDir({ prefix: "dashboard-bench-" });
  try {
    const [, writeMs] = await timed(() => writeRun(directory, EPISODES));
    let bytes = 0;
    for await (const entry of Deno.readDir(directory)) {
      if (entry.isFile) bytes += (await Deno.stat(join(directory, entry.name))).size;
    }
    await using server = await startServer({ port: 0, runDir: directory, maxSessions: 1 });
    const get = async (path: string) => {
      const response = await fetch(`${server.url}${path}`);
      const body = await response.text();
      return body.length;
    };
    const [statsBytes, firstStatsMs] = await timed(() => get("/dashboard/stats"));
    const warmStatsMs = await medianOf(5, () => get("/dashboard/stats"));
    const episodesMs = await medianOf(5, () => get("/dashboard/episodes"));
    const filteredMs = await medianOf(5, () => get("/dashboard/stats?template=template-3"));
    const pageMs = median([
      await pageLoad(`${server.url}/`, server.browser!),
      await pageLoad(`${server.url}/`, server.browser!),
      await pageLoad(`${server.url}/`, server.browser!),
    ]);
    // The same run picked from beside an empty current run.
    const current = await Deno.makeTempDir({ prefix: "dashboard-bench-current-" });
    await using beside = await startServer({
      port: 0,
      runDir: current,
      runs: [directory],
      maxSessions: 1,
    });
    const run = encodeURIComponent(directory.split("/").at(-1)!);
    const getBeside = async (path: string) =>
      (await (await fetch(`${beside.url}${path}`)).text()).length;
    const [, firstRunsMs] = await timed(() => getBeside("/dashboard/runs"));
    const warmRunsMs = await medianOf(5, () => getBeside("/dashboard/runs"));
    const pickedStatsMs = await medianOf(5, () => getBeside(`/dashboard/stats?run=${run}`));
    const pickedPageMs = await pageLoad(`${beside.url}/?run=${run}`, beside.browser!);
    await Deno.remove(current, { recursive: true });
    return {
      episodes: EPISODES,
      files: Math.ceil(EPISODES / 4),
      runMiB: Math.round(bytes / 1048576 * 10) / 10,
      writeMs,
      firstStatsMs,
      warmStatsMs,
      statsBytes,
      episodesMs,
      filteredMs,
      pageLoadMs: pageMs,
      firstRunsMs,
      warmRunsMs,
      pickedStatsMs,
      pickedPageMs,
    };
  } finally {
    await Deno.remove(directory, { recursive: true });
  }
}

async function liveRun() {
  const directory = await Deno.makeTempDir({ prefix: "dashboard-bench-live-" });
  try {
    await using server = await startServer({
      port: 0,
      runDir: directory,
      maxSessions: SESSIONS + 1,
    });
    const client = new WebServClient(server.url);
    const ids: string[] = [];
    for (let i = 0; i < SESSIONS; i += 8) {
      const n = Math.min(8, SESSIONS - i);
      ids.push(
        ...(await client.createGroup({ task: "demo/add-note/1" }, n)).sessions.map((s) => s.id),
      );
    }
    const round = async () => {
      const before = cpuMs();
      const latencies: number[] = [];
      for (let r = 0; r < ROUNDS; r++) {
        await Promise.all(ids.map(async (id) => {
          const [, ms] = await timed(() =>
            client.step(id, { action: "scroll", direction: "down" })
          );
          latencies.push(ms);
        }));
      }
      latencies.sort((a, b) => a - b);
      return {
        cpuMsPerStep: Math.round((cpuMs() - before) / latencies.length * 100) / 100,
        p50Ms: latencies[Math.floor(latencies.length / 2)]!,
        p95Ms: latencies[Math.floor(latencies.length * 0.95)]!,
      };
    };
    await round(); // warm-up
    const without = await round();
    const viewers: Env[] = [];
    for (let i = 0; i < VIEWERS; i++) {
      viewers.push(await Env.create(server.browser!, { startUrl: `${server.url}/` }));
    }
    await new Promise((r) => setTimeout(r, 2000));
    const withViewers = await round();
    for (const viewer of viewers) await viewer.close();
    return { sessions: SESSIONS, viewers: VIEWERS, rounds: ROUNDS, without, withViewers };
  } finally {
    await Deno.remove(directory, { recursive: true });
  }
}

const results = { large: await largeRun(), live: await liveRun() };
console.log(JSON.stringify(results, null, 2));
const out = new URL("results/", import.meta.url);
await Deno.writeTextFile(new URL("dashboard.json", out), JSON.stringify(results, null, 2) + "\n");
const { large, live } = results;
await Deno.writeTextFile(
  new URL("dashboard.md", out),
  `# Dashboard cost

Measured by \`deno task bench:dashboard\` (\`bench/dashboard.ts\`) on ${
    new Date().toISOString().slice(0, 10)
  }.

## A finished run of ${large.episodes} episodes

${large.files} trajectory files, ${large.runMiB} MiB.

| what | ms |
| --- | --- |
| first \`/dashboard/stats\` (every file parsed) | ${large.firstStatsMs} |
| later \`/dashboard/stats\` (open sessions' files \`stat\`ed, closed ones final; median of 5) | ${large.warmStatsMs} |
| \`/dashboard/episodes\` (200 newest; median of 5) | ${large.episodesMs} |
| \`/dashboard/stats?template=…\` (median of 5) | ${large.filteredMs} |
| the main page in Chromium until its figures are drawn (median of 3) | ${large.pageLoadMs} |

The same run as a past run, listed beside an empty current run:

| what | ms |
| --- | --- |
| first \`/dashboard/runs\` (every file parsed) | ${large.firstRunsMs} |
| later \`/dashboard/runs\` (median of 5) | ${large.warmRunsMs} |
| \`/dashboard/stats?run=…\` (median of 5) | ${large.pickedStatsMs} |
| the main page with the run picked, until its figures are drawn | ${large.pickedPageMs} |

## ${live.sessions} live sessions stepping, ${live.viewers} dashboard pages open or not

| | server CPU ms per step | step p50 ms | step p95 ms |
| --- | --- | --- | --- |
| no dashboard | ${live.without.cpuMsPerStep} | ${live.without.p50Ms} | ${live.without.p95Ms} |
| ${live.viewers} dashboards | ${live.withViewers.cpuMsPerStep} | ${live.withViewers.p50Ms} | ${live.withViewers.p95Ms} |
`,
);
