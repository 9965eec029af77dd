/**
 * The real-application rows of `deno task bench:server`
 * (`BENCH_SERVER_APP=wordpress`, sizes in `BENCH_SESSIONS`, default "16"):
 * `deno task serve --backend incus` as a trainer uses it on WordPress, with
 * warm spares. Each size is a fresh server process of its own with its own
 * browser; sessions open on one task and seed (`wordpress/approve-comment/5`)
 * eight at a time, then each runs a closed loop of `hover` steps on the
 * login form's "Log In" button (a real input event, a settle and an
 * observation per step) from a client on a worker thread; then five resets,
 * one at a time, each re-copying the seeded snapshot (a spare's container
 * when one is ready). The rows are merged into `bench/results/server.{md,json}`
 * beside the fixture rows, which they leave as they are.
 *
 * @module
 */
import { startServer } from "../adapters/http/server.ts";
import { WebServClient } from "../adapters/client/mod.ts";
import { type ContainerInstance, IncusClient } from "../sandboxes/incus/mod.ts";
import type { ClientJob, ClientResult } from "./_server_client.ts";
import { APPS } from "../fixtures/sites/registry.ts";
import type { AppServerBench } from "../fixtures/sites/kit/app_module.ts";

/** One size's measurements on a real application. */
export interface AppRow {
  /** The application, such as `"wordpress"`. */
  app: string;
  /** The task every session runs. */
  task: string;
  /** Sessions at once. */
  sessions: number;
  /** Spares kept per seed. */
  spares: number;
  /** Steps taken in all. */
  steps: number;
  /** Steps per second, all sessions together. */
  stepsPerSecond: number;
  /** Median step latency at the client, ms. */
  p50Ms: number;
  /** 99th percentile step latency, ms. */
  p99Ms: number;
  /** Median time to open a session (instance, context, first observation), ms. */
  createP50Ms: number;
  /** Slowest session open, ms. */
  createMaxMs: number;
  /** Median time of a reset with a ready spare (its container, the first observation), ms. */
  resetP50Ms: number;
  /** Resets that found no ready spare (a launch: copy, start, MariaDB, Apache), ms. */
  resetNoSpareMs: number[];
  /** Memory Incus reports for the sessions' containers, MiB per session. */
  containerMiBPerSession: number;
  /** The 1-minute load average when the run began (other work on the machine). */
  loadBefore: number;
}

/** Options of {@linkcode runAppSize}. */
export interface AppRunOptions {
  /** The application. */
  app: string;
  /** Sessions at once. */
  sessions: number;
  /** Steps per session. */
  steps: number;
  /** Spares kept per seed. */
  spares: number;
  /** The Incus pool. */
  pool: string;
}

const SEED = 5;
/**
 * What the bench runs on each application that declares it (`serverBench` on
 * its registry entry, in its folder): the template every session opens, and
 * the line of the first observation whose element each session hovers.
 */
const MEASURED: Readonly<Record<string, AppServerBench>> = Object.fromEntries(
  Object.values(APPS).flatMap((app) => app.serverBench ? [[app.name, app.serverBench]] : []),
);

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
}

function targetId(app: string, text: string): number {
  const target = MEASURED[app]!.target;
  const line = text.split("\n").find((l) => target.test(l));
  const id = Number(line?.match(/\[(\d+)\]/)?.[1]);
  if (!Number.isInteger(id)) {
    throw new Error(`No ${target} in the first observation:\n${text.slice(0, 800)}`);
  }
  return id;
}

/** Memory use of the named Incus containers, in MiB, from the host daemon. */
async function containerMiB(names: string[]): Promise<number> {
  using incus = new IncusClient();
  let bytes = 0;
  for (const name of names) bytes += (await incus.instanceState(name)).memoryUsage;
  return bytes / 2 ** 20;
}

/**
 * Runs one size in this process: a server with warm spares, the sessions,
 * the step loop and the resets.
 *
 * @param options the application, size, steps, spares and pool
 * @returns the row
 */
export async function runAppSize(options: AppRunOptions): Promise<AppRow> {
  const { app, sessions: n, steps, spares, pool } = options;
  if (!Object.hasOwn(MEASURED, app)) {
    throw new RangeError(
      `BENCH_SERVER_APP names no application "${app}"; known: ${Object.keys(MEASURED).join(", ")}`,
    );
  }
  const loadBefore = Number((await Deno.readTextFile("/proc/loadavg")).split(" ")[0]);
  const task = `${app}/${MEASURED[app]!.template}/${SEED}`;
  await using server = await startServer({
    port: 0,
    backend: "incus",
    incusPool: pool,
    maxSessions: n,
    spares,
    warm: [`${app}/${SEED}`],
    stepTimeoutMs: 180_000,
  });
  const client = new WebServClient(server.url, { timeoutMs: 1_800_000, retries: 0 });
  // The base is seeded and the spares ready before anything is timed.
  const deadline = Date.now() + 900_000;
  while (await server.readySpares() < spares) {
    if (Date.now() > deadline) throw new Error(`${spares} spares were not ready within 15 min`);
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  const creates: number[] = [];
  const opened = [];
  for (let i = 0; i < n; i += 8) {
    opened.push(
      ...await Promise.all(
        Array.from({ length: Math.min(8, n - i) }, async () => {
          const t = performance.now();
          const created = await client.createSession({ task });
          creates.push(performance.now() - t);
          return created;
        }),
      ),
    );
  }
  const names = opened.map((s) =>
    (server.sessions.instance(s.id) as ContainerInstance).containerName
  );
  const memory = await containerMiB(names);
  const worker = new Worker(new URL("./_server_client.ts", import.meta.url), { type: "module" });
  const done = new Promise<ClientResult>((resolve, reject) => {
    worker.onmessage = (event: MessageEvent<ClientResult>) => resolve(event.data);
    worker.onerror = (event) => reject(new Error(`The client worker failed: ${event.message}`));
  });
  const job: ClientJob = {
    url: server.url,
    sessions: opened.map((s) => ({ id: s.id, button: targetId(app, s.observation.text) })),
    steps,
  };
  const started = performance.now();
  worker.postMessage(job);
  const result = await done;
  const seconds = (performance.now() - started) / 1000;
  worker.terminate();
  if (result.error) throw new Error(result.error);
  const spareReady = async () => {
    const until = Date.now() + 300_000;
    while (await server.readySpares() < spares) {
      if (Date.now() > until) throw new Error(`${spares} spares were not ready again within 5 min`);
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  };
  // Five resets, each once the spares are full again: what a reset costs
  // while the spares keep up.
  const resets: number[] = [];
  for (const session of opened.slice(0, 5)) {
    await spareReady();
    const t = performance.now();
    await client.reset(session.id);
    resets.push(performance.now() - t);
  }
  // Then spares + 2 resets back to back: the last two find no ready spare
  // and wait for a launch (behind the refills already queued).
  await spareReady();
  const burst: number[] = [];
  for (const session of opened.slice(0, spares + 2)) {
    const t = performance.now();
    await client.reset(session.id);
    burst.push(performance.now() - t);
  }
  for (const session of opened) await client.close(session.id);
  return {
    app,
    task,
    sessions: n,
    spares,
    steps: result.latencies.length,
    stepsPerSecond: result.latencies.length / seconds,
    p50Ms: percentile(result.latencies, 50),
    p99Ms: percentile(result.latencies, 99),
    createP50Ms: percentile(creates, 50),
    createMaxMs: Math.max(...creates),
    resetP50Ms: percentile(resets, 50),
    resetNoSpareMs: burst.slice(spares),
    containerMiBPerSession: memory / n,
    loadBefore,
  };
}

/**
 * The Markdown section of the real-application rows.
 *
 * @param rows the rows
 * @param failures the sizes that failed, with why
 * @returns the section's lines
 */
export function appSection(rows: AppRow[], failures: string[]): string[] {
  const r1 = (x: number) => Math.round(x * 10) / 10;
  return [
    "## Real application: WordPress on Incus",
    "",
    "`BENCH_SERVER_APP=wordpress deno task bench:server`: `deno task serve --backend incus` on",
    "the WordPress image (MariaDB, Apache, PHP; one Incus container per session, a copy-on-write copy",
    "of the seeded snapshot), with warm spares (`spares` per seed, filled before timing). Each size",
    "is a fresh server process with its own Chromium; sessions open on one task eight at a time, then",
    "each runs a closed loop of `hover` steps on the login form's button (input event, settle,",
    "observation) from a client on a worker thread. Then five resets one at a time, each once the",
    "spares are full again (the reset takes a ready spare's container, a copy of the seeded snapshot",
    "launched ahead, and observes its first page), and `spares + 2` resets back to back, the last two",
    "of which find no spare and wait for a launch (copy, start, MariaDB, Apache, behind the refills",
    'already queued): "reset, no spare". Container MiB is',
    "what Incus reports per container (page cache included). Load is the 1-minute load average at the",
    "start (2 cores shared with other agents' builds and tests).",
    "",
    "| app | sessions | spares | steps/s | p50 step ms | p99 step ms | create p50 ms | create max ms | reset p50 ms | reset, no spare ms | container MiB/session | load at start |",
    "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | ---: | ---: |",
    ...rows.map((r) =>
      `| ${r.app} | ${r.sessions} | ${r.spares} | ${r1(r.stepsPerSecond)} | ${r1(r.p50Ms)} | ${
        r1(r.p99Ms)
      } | ${r1(r.createP50Ms)} | ${r1(r.createMaxMs)} | ${r1(r.resetP50Ms)} | ${
        (r.resetNoSpareMs ?? []).map(r1).join(", ")
      } | ${r1(r.containerMiBPerSession)} | ${r1(r.loadBefore)} |`
    ),
    "",
    ...(failures.length ? ["Sizes that failed:", "", ...failures.map((f) => `- ${f}`), ""] : []),
  ];
}

/** Where the results go. */
const RESULTS = new URL("./results/", import.meta.url);

/**
 * Writes the real-application rows into `server.json` (key `apps`) and
 * `server.md` (its last section), keeping the fixture rows as they are.
 *
 * @param rows the rows
 * @param failures the sizes that failed
 */
export async function mergeAppRows(rows: AppRow[], failures: string[]): Promise<void> {
  const jsonUrl = new URL("server.json", RESULTS);
  const mdUrl = new URL("server.md", RESULTS);
  const json = JSON.parse(await Deno.readTextFile(jsonUrl).catch(() => "{}")) as Record<
    string,
    unknown
  >;
  json["apps"] = { rows, failures };
  await Deno.writeTextFile(jsonUrl, JSON.stringify(json, null, 2) + "\n");
  const md = await Deno.readTextFile(mdUrl).catch(() => "# Rollout server benchmark\n");
  await Deno.writeTextFile(mdUrl, withAppSection(md, rows, failures));
}

/**
 * A `server.md` text with its real-application section replaced (or added).
 *
 * @param md the text
 * @param rows the rows
 * @param failures the sizes that failed
 * @returns the new text
 */
export function withAppSection(md: string, rows: AppRow[], failures: string[]): string {
  const at = md.indexOf("## Real application");
  const kept = (at === -1 ? md : md.slice(0, at)).trimEnd();
  return [kept, "", ...appSection(rows, failures)].join("\n");
}

/**
 * The real-application rows a `server.json` holds, to keep them when the
 * fixture rows are measured again.
 *
 * @returns the rows and failures, empty when none
 */
export async function savedAppRows(): Promise<{ rows: AppRow[]; failures: string[] }> {
  try {
    const json = JSON.parse(await Deno.readTextFile(new URL("server.json", RESULTS))) as {
      apps?: { rows: AppRow[]; failures: string[] };
    };
    return json.apps ?? { rows: [], failures: [] };
  } catch {
    return { rows: [], failures: [] };
  }
}
