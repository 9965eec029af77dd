/**
 * Fork latency on the fixture backend (`BENCH_FORK=1 deno task
 * bench:sandbox`, results in `bench/results/sandbox_fork.{md,json}`): in one
 * run, on the shop (a recreated site of realistic size) mid-episode in its
 * add-to-cart task, a fresh env (instance + bound task + context, loaded), a
 * reset, and `env.fork(k)` for k = 1, 4, 16 (site copies, the task's mark
 * carried, the browser state restored in each fork, loaded and settled).
 * Beside them, the instance alone: `Instance.fork()` against
 * `Sandbox.create()` and `Instance.reset()`. Then the same on Incus, Docker
 * and the shared runtime, on WordPress (`_sandbox_fork_backends.ts`).
 *
 * `BENCH_FORK=backends` measures the backends alone and keeps the fixture
 * section of the results as it is.
 *
 * Environment: BENCH_FORK_RUNS (samples per row, default 10).
 *
 * @module
 */
import { Browser, Env } from "../mod.ts";
import { FixtureSandbox } from "../sandboxes/fixture/fixture_sandbox.ts";
import { Gateway } from "../sandboxes/gateway.ts";
import type { Instance } from "../sandboxes/types.ts";
import { bindTask, generateTask, siteByName } from "../fixtures/sites/mod.ts";
import { machine, MIB, round, type TimedRow, timeRuns } from "./_sandbox_common.ts";
import { groupPss } from "./_proc.ts";
import {
  type BackendForkResult,
  backendLines,
  type BackendsMeta,
  benchForkBackends,
} from "./_sandbox_fork_backends.ts";
import { browserInternals } from "../engine/browser/browser.ts";
import { forkPhases } from "./_fork_phases.ts";

const RUNS = Number(Deno.env.get("BENCH_FORK_RUNS") ?? 10);
const FORKS = [1, 4, 16] as const;
/** How many envs, then forks, are held open at once to weigh one. */
const HELD = 4;

const time = <T>(
  what: string,
  fn: () => Promise<T>,
  after: (value: T) => Promise<void>,
): Promise<TimedRow> => timeRuns(what, RUNS, fn, after);

/** The fixture section of the results. */
interface FixtureResults {
  /** When, where, under what load, how many samples. */
  meta: { date: string; machine: string; load: string; runs: number; site: string };
  /** The timed rows. */
  rows: TimedRow[];
  /** Chromium's PSS per new env and per fork, in MiB. */
  memoryMiB: { env: number; fork: number } | null;
}

const RESULTS = new URL("./results/sandbox_fork.json", import.meta.url);

/**
 * Measures fork latency beside create and reset, and writes the report;
 * with `which: "backends"`, the container backends and the shared runtime
 * alone, the fixture section kept from the results file.
 *
 * @param which what to measure
 * @returns the report's markdown
 */
export async function benchFork(which: "all" | "backends" = "all"): Promise<string> {
  let fixture: FixtureResults;
  if (which === "backends") {
    fixture = JSON.parse(await Deno.readTextFile(RESULTS)) as FixtureResults;
  } else {
    fixture = await measureFixture();
  }
  const lines = fixtureLines(fixture);
  // The container backends and the shared runtime, on WordPress (`BENCH_FORK_BACKENDS=` skips them).
  const started = { date: new Date().toISOString(), machine: machine(), load: await loadAverage() };
  const measured = Deno.env.get("BENCH_FORK_BACKENDS") === "" ? [] : await benchForkBackends();
  const backendsMeta = { ...started, loadAtEnd: await loadAverage() };
  // Backends this run did not measure keep their rows from the last run, with its date.
  const backends = which === "backends"
    ? [
      ...(fixture as { backends?: BackendForkResult[]; backendsMeta?: BackendsMeta }).backends
        ?.filter((kept) => !measured.some((result) => result.key === kept.key))
        .map((kept) => ({
          ...kept,
          measured: kept.measured ??
            (fixture as { backendsMeta?: BackendsMeta }).backendsMeta,
        })) ?? [],
      ...measured,
    ]
    : measured;
  if (backends.length > 0) lines.push(...backendLines(backends, backendsMeta));
  const markdown = lines.join("\n");
  await Deno.mkdir(new URL("./results/", import.meta.url), { recursive: true });
  await Deno.writeTextFile(
    RESULTS,
    JSON.stringify(
      {
        meta: fixture.meta,
        rows: fixture.rows,
        memoryMiB: fixture.memoryMiB,
        backendsMeta,
        backends,
      },
      null,
      2,
    ) + "\n",
  );
  await Deno.writeTextFile(new URL("./results/sandbox_fork.md", import.meta.url), markdown);
  return markdown;
}

/** The load average now: its 1, 5 and 15 minute figures. */
async function loadAverage(): Promise<string> {
  return (await Deno.readTextFile("/proc/loadavg")).split(" ").slice(0, 3).join(", ");
}

/** Measures the fixture backend's rows. */
async function measureFixture(): Promise<FixtureResults> {
  const shop = siteByName("shop");
  const task = generateTask(shop, "add-to-cart", 3);
  const template = shop.templates.find((t) => t.id === "add-to-cart")!;
  await using browser = await Browser.launch();
  await using gateway = new Gateway();
  await using sandbox = new FixtureSandbox(shop, { gateway });
  const bind = (instance: Instance) =>
    bindTask(task, shop, instance.state!, { origin: instance.origin });
  const open = async () => {
    const instance = await sandbox.create({ seed: 3 });
    const env = await Env.create(browser, { site: instance, task: bind(instance) });
    return { instance, env };
  };
  const drop = async ({ instance, env }: { instance: Instance; env: Env }) => {
    await env.close();
    await instance.destroy();
  };
  // Warm: the seed's template, the browser.
  await drop(await open());

  const rows: TimedRow[] = [];
  rows.push(
    await time("instance: Sandbox.create()", () => sandbox.create({ seed: 3 }), (i) => i.destroy()),
  );
  const parent = await open();
  // The parent mid-episode: the solver up to its `stop`.
  await template.solve(
    new Proxy(parent.env, {
      get(target, property) {
        if (property === "step") {
          return (action: { action: string }) =>
            action.action === "stop" ? Promise.resolve() : target.step(action);
        }
        const value: unknown = Reflect.get(target, property, target);
        return typeof value === "function" ? value.bind(target) : value;
      },
    }),
    task,
  );
  rows.push(
    await time("instance: Instance.fork()", () => parent.instance.fork!(), (i) => i.destroy()),
  );
  rows.push(await time("env: create (instance, task, context, start page)", open, drop));
  const resetting = await open();
  rows.push(await time("env: reset", () => resetting.env.reset(), () => Promise.resolve()));
  await drop(resetting);
  const bound = bind(parent.instance);
  await bound.sdk.mark();
  // k forks of the parent, each on its own copy of the instance (pushed to
  // `copies`), and their teardown: the forks closed, the copies destroyed.
  const forkParent = (k: number, copies: Instance[]) =>
    parent.env.fork(k, {
      branch: async (at) => {
        // On the spare origin whose context the pool made ahead.
        const copy = await parent.instance.fork!(at ?? {});
        const forked = bind(copy);
        await bound.sdk.copyMark(forked.sdk);
        copies.push(copy);
        return { site: copy, task: forked, release: () => copy.destroy() };
      },
    });
  const closeForks = async (forks: { close(): Promise<void> }[], copies: Instance[]) => {
    await Promise.all(forks.map((f) => f.close()));
    await Promise.all(copies.splice(0).map((c) => c.destroy()));
  };
  for (const k of FORKS) {
    const copies: Instance[] = [];
    rows.push(
      await time(
        `env: fork(${k})`,
        () => forkParent(k, copies),
        (forks) => closeForks(forks, copies),
      ),
    );
  }
  rows.push(...await forkPhases(browser, parent.env, parent.instance, RUNS));
  // Memory: the browser's PSS grown by HELD new envs, then by HELD forks of the parent.
  const group = browserInternals(browser).process?.pid;
  const weigh = async <T>(open: () => Promise<T[]>, close: (held: T[]) => Promise<void>) => {
    const before = await groupPss(group!);
    const held = await open();
    const after = await groupPss(group!);
    await close(held);
    return round((after - before) / HELD / MIB);
  };
  const memory = group === undefined ? undefined : {
    env: await weigh(() => Promise.all(Array.from({ length: HELD }, open)), async (held) => {
      for (const one of held) await drop(one);
    }),
    fork: await (async () => {
      const copies: Instance[] = [];
      return await weigh(() => forkParent(HELD, copies), (forks) => closeForks(forks, copies));
    })(),
  };
  await drop(parent);

  const meta = {
    date: new Date().toISOString(),
    machine: machine(),
    load: await loadAverage(),
    runs: RUNS,
    site: "shop",
  };
  return { meta, rows, memoryMiB: memory ?? null };
}

/** The report's fixture section. */
function fixtureLines({ meta, rows, memoryMiB: memory }: FixtureResults): string[] {
  const reset = rows.find((r) => r.what === "env: reset")!.ms.p50;
  return [
    "# Fork latency (every backend)",
    "",
    "## Fixture backend (the shop, in process)",
    "",
    `${meta.date} · ${meta.machine}, load average ${meta.load} · ${meta.runs} samples per row · the shop, mid-episode in add-to-cart`,
    "",
    "| what | p50 ms | p95 ms | p50 ÷ env reset |",
    "| --- | ---: | ---: | ---: |",
    ...rows.map((r) =>
      `| ${r.what} | ${r.ms.p50} | ${r.ms.p95} | ${
        r.what.startsWith("env:") ? (r.ms.p50 / reset).toFixed(2) : ""
      } |`
    ),
    "",
    "`env: fork(k)` is the whole fork of k: the parent's browser state read, k site copies",
    "(the live SQLite file, copied in one turn of the event loop), the task's mark carried to",
    "each, and k contexts restored (cookies, storage, the page loaded, typed fields and scroll",
    "put back, settled). Storage per fork is one database file, as for a new env; a fork",
    "takes its task's start mark from the parent by reference (same process), not as a copy.",
    "`fork phase:` rows take a fork of one apart, step by step on a fresh site copy each run",
    "(`bench/_fork_phases.ts`), the warm pool refilled between runs: a ready context taken from",
    "the pool, the site copied onto its spare origin, cookies and storage put in, the page loaded",
    "from the copy, and the settle after it (a quiet window of 40 ms from the page's last",
    "activity); the last row is what the pool saves, a context and its window made at fork time.",
    "",
    ...(memory
      ? [
        `Memory (Chromium's PSS, ${HELD} held open at once, per env): a new env ${memory.env} MiB,`,
        `a fork ${memory.fork} MiB.`,
        "",
      ]
      : []),
  ];
}
