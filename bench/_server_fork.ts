/**
 * Fork latency through the rollout server (`BENCH_SERVER_FORK=1 deno task
 * bench:server`, results in `bench/results/server_fork.{md,json}`): on the
 * fixture backend and the demo task, with a note typed but not submitted,
 * `POST /v1/sessions/{id}/fork` for n = 1, 4, 16 beside `POST /v1/sessions`
 * and `POST /v1/sessions/{id}/reset`, in one run, over loopback HTTP. Each
 * fork starts with the browser's warm pool of contexts refilled (as between
 * an agent's forks, a step or more apart); one row of n = 1 forks back to
 * back, the pool refilling while the next fork runs.
 *
 * `BENCH_SERVER_FORK=shared` measures the same requests on the shared
 * runtime instead (`--backend shared`, WordPress's approve-comment on seed 1,
 * the task's start page as it opened), and keeps the fixture rows of the
 * results as they are (`BENCH_SERVER_FORK=1` keeps the shared rows likewise):
 * a fork there branches the session's database (its `mariadbd` stopped while
 * its datadir is reflinked, a server started on the copy), takes a context
 * from the warm pool on a spare origin, and loads WordPress's page from the
 * copy.
 *
 * Environment: BENCH_FORK_RUNS (samples per row, default 10 on the fixture,
 * 5 on the shared runtime), WEBSERV_INCUS_POOL (default `webserv-btrfs`),
 * BENCH_SHARED_PREFIX (default `wsshared-`).
 *
 * @module
 */
import { startServer } from "../adapters/http/server.ts";
import { type SessionCreated, WebServClient } from "../adapters/client/mod.ts";
import type { ServerOptions } from "../adapters/http/_server_options.ts";
import { ContextPool } from "../engine/context_pool.ts";
import { machine, type TimedRow, timeRuns } from "./_sandbox_common.ts";

const RUNS = Deno.env.get("BENCH_FORK_RUNS");
const RESULTS = new URL("./results/server_fork.json", import.meta.url);

/** One section of the report: where it ran, and its rows. */
export interface ForkSection {
  /** When, where, under what load, how many samples, which task. */
  meta: {
    date: string;
    machine: string;
    load: string;
    runs: number;
    task: string;
  };
  /** The timed requests. */
  rows: TimedRow[];
}

/** The results file: the fixture's section at the top, the shared runtime's beside it. */
interface ForkResults extends ForkSection {
  shared?: ForkSection;
}

/** What one section measures on. */
interface ForkCase {
  /** The section's heading. */
  title: string;
  /** The server's options beyond its port and session cap. */
  server: Omit<ServerOptions, "port" | "maxSessions">;
  /** The task every session runs. */
  task: string;
  /** Samples per row. */
  runs: number;
  /** What the parent does before it is forked; returns the section's note on it. */
  prepare(client: WebServClient, parent: SessionCreated): Promise<void>;
  /** What the task column says of the parent's state. */
  parentState: string;
}

const FIXTURE: ForkCase = {
  title: "Fork latency through the server (fixture backend)",
  server: {},
  task: "demo/add-note/2",
  runs: Number(RUNS ?? 10),
  parentState: "a note typed, not sent",
  async prepare(client, parent) {
    const field = parent.observation.text.split("\n").find((l) => /textbox "?New note/.test(l));
    const id = Number(field?.match(/\[(\d+)\]/)?.[1]);
    await client.step(parent.id, { action: "type", id, text: "buy coffee 2" });
  },
};

const SHARED: ForkCase = {
  title: "Fork latency through the server (shared runtime, WordPress)",
  server: {
    backend: "shared",
    incusPool: Deno.env.get("WEBSERV_INCUS_POOL") ?? "webserv-btrfs",
    incusPrefix: Deno.env.get("BENCH_SHARED_PREFIX") ?? "wsshared-",
    // Sixteen forks, each a database server started and a WordPress page loaded, outlast the
    // default 30 s deadline of a request on two loaded cores.
    stepTimeoutMs: 180_000,
  },
  task: "wordpress/approve-comment/1",
  runs: Number(RUNS ?? 5),
  parentState: "its start page as it opened",
  prepare: () => Promise.resolve(),
};

/**
 * Measures one section: fork latency through the server beside create and
 * reset.
 *
 * @param fork what it runs on
 * @returns the section
 */
async function measure(fork: ForkCase): Promise<ForkSection> {
  const { task } = fork;
  const time = <T>(
    what: string,
    fn: () => Promise<T>,
    after: (value: T) => Promise<void>,
  ): Promise<TimedRow> => timeRuns(what, fork.runs, fn, after);
  await using server = await startServer({ ...fork.server, port: 0, maxSessions: 40 });
  const client = new WebServClient(server.url);
  const closeAll = async (ids: string[]) => {
    await Promise.all(ids.map((id) => client.close(id)));
  };
  // Warm: the seed's template or runtime, the browser.
  await client.close((await client.createSession({ task })).id);
  const rows: TimedRow[] = [];
  rows.push(
    await time(
      "POST /v1/sessions",
      () => client.createSession({ task }),
      (s) => closeAll([s.id]),
    ),
  );
  const resetting = await client.createSession({ task });
  rows.push(await time("POST …/reset", () => client.reset(resetting.id), () => Promise.resolve()));
  await client.close(resetting.id);
  const parent = await client.createSession({ task });
  await fork.prepare(client, parent);
  const pool = ContextPool.of(server.browser!);
  const refilled = async () => {
    const deadline = performance.now() + 30_000;
    while (pool.filling > 0 || pool.ready < pool.size) {
      if (performance.now() > deadline) throw new Error("The context pool did not refill");
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  };
  // The first fork warms the pool.
  await closeAll((await client.fork(parent.id, 1)).sessions.map((s) => s.id));
  await refilled();
  for (const n of [1, 4, 16]) {
    rows.push(
      await time(
        `POST …/fork {n: ${n}}`,
        () => client.fork(parent.id, n),
        async (made) => {
          await closeAll(made.sessions.map((s) => s.id));
          await refilled();
        },
      ),
    );
  }
  rows.push(
    await time(
      "POST …/fork {n: 1}, back to back",
      () => client.fork(parent.id, 1),
      (made) => closeAll(made.sessions.map((s) => s.id)),
    ),
  );
  await client.close(parent.id);
  return {
    meta: {
      date: new Date().toISOString(),
      machine: machine(),
      load: (await Deno.readTextFile("/proc/loadavg")).split(" ").slice(0, 3).join(", "),
      runs: fork.runs,
      task,
    },
    rows,
  };
}

function sectionLines(fork: ForkCase, section: ForkSection): string[] {
  const { meta, rows } = section;
  const reset = rows.find((r) => r.what === "POST …/reset")!.ms.p50;
  return [
    `# ${fork.title}`,
    "",
    `${meta.date} · ${meta.machine}, load average ${meta.load} · ${meta.runs} samples per row · ${meta.task}, ${fork.parentState}`,
    "",
    "| request | p50 ms | p95 ms | p50 ÷ reset |",
    "| --- | ---: | ---: | ---: |",
    ...rows.map((r) =>
      `| ${r.what} | ${r.ms.p50} | ${r.ms.p95} | ${(r.ms.p50 / reset).toFixed(2)} |`
    ),
    "",
  ];
}

async function earlier(): Promise<ForkResults | undefined> {
  try {
    return JSON.parse(await Deno.readTextFile(RESULTS)) as ForkResults;
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return undefined;
    throw error;
  }
}

/**
 * Measures fork latency through the server beside create and reset, on the
 * fixture backend or (`which: "shared"`) on the shared runtime, and writes
 * the report with the other section's last rows kept.
 *
 * @param which the section to measure
 * @returns the report's markdown
 */
export async function benchServerFork(which: "fixture" | "shared" = "fixture"): Promise<string> {
  const before = await earlier();
  const measured = await measure(which === "shared" ? SHARED : FIXTURE);
  const fixture = which === "fixture"
    ? measured
    : before && { meta: before.meta, rows: before.rows };
  const shared = which === "shared" ? measured : before?.shared;
  if (!fixture) {
    throw new Error(`No fixture rows in ${RESULTS.pathname}: run BENCH_SERVER_FORK=1 first`);
  }
  const results: ForkResults = { ...fixture, ...(shared ? { shared } : {}) };
  const markdown = [
    ...sectionLines(FIXTURE, fixture),
    ...(shared
      ? [
        ...sectionLines(SHARED, shared),
        "On the shared runtime a fork's site copy is its database branched (the session's",
        "`mariadbd` stopped while its datadir is reflinked, a new server started on the copy and",
        "recovered), placed on a spare origin whose context the warm pool made ahead; then",
        "WordPress's page is loaded from the copy and settled, and the first observation taken.",
        "",
      ]
      : []),
  ].join("\n");
  await Deno.mkdir(new URL("./results/", import.meta.url), { recursive: true });
  await Deno.writeTextFile(RESULTS, JSON.stringify(results, null, 2) + "\n");
  await Deno.writeTextFile(new URL("./results/server_fork.md", import.meta.url), markdown);
  return markdown;
}
