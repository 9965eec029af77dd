/**
 * The timing figures the tests used to assert or print, measured here instead
 * (a test asserts behaviour; how fast is a figure for a quiet machine):
 *
 * - how long the engine's pending CDP commands take to fail once Chromium is
 *   killed (the browser and transport tests assert that they fail);
 * - how long a fixture sandbox reset takes on the small demo site (the
 *   fixture sandbox test asserts that it restores);
 * - how long the state API takes to hash, mark and diff a 20,000-row table
 *   (the state app test asserts the diff).
 *
 * Run with `deno task bench:timings`; writes `bench/results/timings.json`
 * and `bench/results/timings.md`. Takes well under a minute.
 *
 * @module
 */
import { DatabaseSync } from "node:sqlite";
import { Browser, browserInternals, newContext } from "../engine/browser/browser.ts";
import { ConnectionClosedError } from "../engine/cdp/errors.ts";
import { FixtureSandbox } from "../sandboxes/fixture/fixture_sandbox.ts";
import { Gateway } from "../sandboxes/gateway.ts";
import demoSite from "../fixtures/sites/demo/mod.ts";
import { stateApp } from "../fixtures/sites/kit/state_app.ts";
import { StateSdk } from "../fixtures/sites/kit/state_client.ts";

const KILLS = Number(Deno.env.get("BENCH_KILLS") ?? 5);
const RESETS = Number(Deno.env.get("BENCH_RESETS") ?? 100);
const STATE_RUNS = Number(Deno.env.get("BENCH_STATE_RUNS") ?? 5);

/** Median, 95th percentile and maximum of some samples, in milliseconds. */
interface Stats {
  n: number;
  p50: number;
  p95: number;
  max: number;
}

function stats(samples: number[]): Stats {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
  const round = (ms: number) => Math.round(ms * 10) / 10;
  return { n: sorted.length, p50: round(at(0.5)), p95: round(at(0.95)), max: round(at(1)) };
}

/** Kill to the last pending command rejected, over the default transport. */
async function pendingAfterKill(): Promise<Stats> {
  const samples: number[] = [];
  for (let i = 0; i < KILLS; i++) {
    const browser = await Browser.launch();
    try {
      const context = await newContext(browser);
      const pages = [await context.newPage(), await context.newPage()];
      const forever = { expression: "new Promise(() => {})", awaitPromise: true };
      const pending = pages.map((page) => page.session.send("Runtime.evaluate", forever));
      // The commands reach the browser before it dies.
      await browserInternals(browser).connection.send("Browser.getVersion");
      const killedAt = performance.now();
      Deno.kill(-browserInternals(browser).process!.pid, "SIGKILL"); // the browser's whole process group
      const results = await Promise.allSettled(pending);
      samples.push(performance.now() - killedAt);
      for (const result of results) {
        if (result.status !== "rejected" || !(result.reason instanceof ConnectionClosedError)) {
          throw new Error(`A pending command did not fail with ConnectionClosedError`);
        }
      }
    } finally {
      await browser.close();
    }
  }
  return stats(samples);
}

/** One reset of the small demo site's fixture sandbox, after the page view that writes. */
async function fixtureReset(): Promise<Stats> {
  await using gateway = new Gateway();
  await using sandbox = new FixtureSandbox(demoSite, { gateway });
  await using instance = await sandbox.create({ seed: 1 });
  const samples: number[] = [];
  for (let i = 0; i < RESETS; i++) {
    await (await gateway.request(instance.origin, "/")).text();
    const start = performance.now();
    await instance.reset();
    samples.push(performance.now() - start);
  }
  return stats(samples);
}

/** Hash, mark and diff of the state API over a 20,000-row table. */
async function stateApi(): Promise<Record<"hash" | "mark" | "diff", Stats>> {
  const times = { hash: [] as number[], mark: [] as number[], diff: [] as number[] };
  for (let run = 0; run < STATE_RUNS; run++) {
    const db = new DatabaseSync(":memory:");
    db.exec("CREATE TABLE posts (id INTEGER PRIMARY KEY, title TEXT, views INTEGER DEFAULT 0)");
    const insert = db.prepare("INSERT INTO posts (id, title) VALUES (?, ?)");
    db.exec("BEGIN");
    for (let i = 1; i <= 20_000; i++) insert.run(i, `post number ${i} with a title of some length`);
    db.exec("COMMIT");
    const handler = stateApp(db, { tables: { posts: ["id"] }, ignoreColumns: ["posts.views"] });
    const sdk = new StateSdk({
      fetch: async (path, init) => await handler(new Request(`http://state${path}`, init)),
    });
    const time = async (into: number[], work: () => Promise<unknown>) => {
      const start = performance.now();
      await work();
      into.push(performance.now() - start);
    };
    await time(times.hash, () => sdk.hash());
    await time(times.mark, () => sdk.mark());
    db.exec("UPDATE posts SET title = 'changed' WHERE id = 10000; DELETE FROM posts WHERE id = 5");
    await time(times.diff, () => sdk.diff());
    db.close();
  }
  return { hash: stats(times.hash), mark: stats(times.mark), diff: stats(times.diff) };
}

function loadAverage(): string {
  try {
    return Deno.readTextFileSync("/proc/loadavg").split(" ").slice(0, 3).join(" ");
  } catch {
    return "unknown";
  }
}

async function main(): Promise<void> {
  const startedAt = new Date().toISOString();
  const loadBefore = loadAverage();
  const kill = await pendingAfterKill();
  const reset = await fixtureReset();
  const state = await stateApi();
  const loadAfter = loadAverage();
  const machine = `${navigator.hardwareConcurrency} cores, Deno ${Deno.version.deno}`;
  const result = { date: startedAt, machine, loadBefore, loadAfter, kill, reset, state };
  const cell = (s: Stats) => `${s.n} | ${s.p50} | ${s.p95} | ${s.max}`;
  const markdown = [
    "# Timings moved out of the tests",
    "",
    `Run ${startedAt} with \`deno task bench:timings\` on ${machine}. Load average (1/5/15 min) ${loadBefore} at the start and ${loadAfter} at the end; the machine is shared, so the figures are noisy. The tests assert the behaviour (commands fail, resets restore, diffs are right); these are how fast.`,
    "",
    "| what | n | p50 (ms) | p95 (ms) | max (ms) |",
    "| --- | ---: | ---: | ---: | ---: |",
    `| Chromium killed → every pending CDP command rejected (default transport) | ${cell(kill)} |`,
    `| Fixture sandbox reset, small demo site, after a page view that writes | ${cell(reset)} |`,
    `| State API hash, 20,000 rows | ${cell(state.hash)} |`,
    `| State API mark, 20,000 rows | ${cell(state.mark)} |`,
    `| State API diff, 20,000 rows (one changed, one removed) | ${cell(state.diff)} |`,
    "",
  ].join("\n");
  // deno-lint-ignore no-console
  console.log(markdown);
  const dir = new URL("./results/", import.meta.url);
  await Deno.mkdir(dir, { recursive: true });
  await Deno.writeTextFile(new URL("timings.json", dir), `${JSON.stringify(result, null, 2)}\n`);
  await Deno.writeTextFile(new URL("timings.md", dir), markdown);
}

if (import.meta.main) await main();
