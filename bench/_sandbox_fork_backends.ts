/**
 * Fork latency and footprint on the backends that run real applications
 * (part of `BENCH_FORK=1 deno task bench:sandbox`): on WordPress, for Incus
 * (the container frozen while a snapshot is cut, a copy-on-write copy of it
 * started), Docker (the container paused while committed, the image started)
 * and the shared runtime (the env's `mariadbd` stopped while its datadir is
 * reflinked, a server started on the copy), in one run per backend:
 * `Sandbox.create()`, `Instance.reset()`, and k = 1, 4, 16 concurrent
 * `Instance.fork()`s of an env that made one write; then the storage and
 * memory of a fork beside those of a new env, each after the same write.
 *
 * Environment: BENCH_FORK_BACKENDS (keys, default `incus-btrfs,docker,shared`),
 * BENCH_FORK_BACKEND_RUNS (samples per row, default 3), BENCH_FORK_IMAGE (the
 * image on every backend, default `webserv-wordpress`), and the
 * real-application bench's BENCH_SHARED_PREFIX.
 *
 * @module
 */
import { Gateway } from "../sandboxes/gateway.ts";
import type { Instance, Sandbox } from "../sandboxes/types.ts";
import { backendsOf } from "./_sandbox_app_backends.ts";
import { type AppBackend, APPS, type AppSpec } from "./_sandbox_app_specs.ts";
import { MIB, progress, round, type TimedRow, timeRuns } from "./_sandbox_common.ts";

const RUNS = Number(Deno.env.get("BENCH_FORK_BACKEND_RUNS") ?? 3);
const FORKS = [1, 4, 16] as const;
const KEYS = (Deno.env.get("BENCH_FORK_BACKENDS") ?? "incus-btrfs,docker,shared").split(",");

/** What one backend measured. */
export interface BackendForkResult {
  /** The backend's key. */
  key: string;
  /** Its label. */
  label: string;
  /** The timed rows: create, reset, fork(k). */
  rows: TimedRow[];
  /** Storage and memory of a new env and of a fork, or why there is none. */
  footprint: { env: Footprint; fork: Footprint } | { none: string };
  /** Rows that failed, with their error. */
  failures: string[];
  /**
   * How many forks of each row took each path, where the backend says
   * (the shared runtime: `import` into a spare, or `copy` of the datadir).
   */
  paths?: Record<string, Record<string, number>>;
  /** When it was measured, for rows kept from an earlier run. */
  measured?: BackendsMeta | undefined;
}

/** An env's storage and memory, after one write. */
export interface Footprint {
  /** Bytes it holds of its own on disk. */
  storage: number;
  /** Its container's (or, on the shared runtime, its share of the runtime's) memory in bytes. */
  memory: number;
}

async function footprint(
  backend: AppBackend,
  sandbox: Sandbox,
  env: Instance,
  envs: number,
): Promise<Footprint> {
  return {
    storage: await backend.storage(sandbox, env),
    memory: backend.memory
      ? (await backend.memory(sandbox, env, envs)).pss
      : await backend.cgroupMemory(sandbox, env, envs),
  };
}

async function benchBackend(app: AppSpec, backend: AppBackend): Promise<BackendForkResult> {
  await using gateway = new Gateway();
  const sandbox = await backend.open(gateway, app);
  await using _closed = { [Symbol.asyncDispose]: () => sandbox.close() };
  const settle = () => backend.settle?.(sandbox) ?? Promise.resolve();
  // Warm: the seed's base, and a first env.
  await (await sandbox.create({ seed: 1 })).destroy();
  await settle();

  const time = <T>(what: string, fn: () => Promise<T>, after: (value: T) => Promise<void>) =>
    timeRuns(`${backend.key}: ${what}`, RUNS, fn, after).then((row) => ({ ...row, what }));
  const rows: TimedRow[] = [];
  rows.push(
    await time("Sandbox.create()", () => sandbox.create({ seed: 1 }), async (env) => {
      await env.destroy();
      await settle();
    }),
  );
  const parent = await sandbox.create({ seed: 1 });
  await app.write(gateway, parent, 1);
  rows.push(
    await time("Instance.reset()", () => parent.reset(), async () => {
      await settle();
      await app.write(gateway, parent, 1);
    }),
  );
  if (!parent.fork) {
    await parent.destroy();
    const none = "its image's runtime cannot copy a live env (built before it could)";
    progress(`${backend.key}: no fork: ${none}`);
    return { key: backend.key, label: backend.label, rows, footprint: { none }, failures: [] };
  }
  const failures: string[] = [];
  const paths: Record<string, Record<string, number>> = {};
  const count = (what: string, fork: Instance) => {
    const path = (fork as { forked?: { path?: string } }).forked?.path;
    if (path === undefined) return;
    const row = paths[what] ??= {};
    row[path] = (row[path] ?? 0) + 1;
  };
  for (const k of FORKS) {
    const made: Instance[] = [];
    try {
      rows.push(
        await time(
          `${k} × Instance.fork()`,
          () =>
            Promise.all(Array.from({ length: k }, async () => {
              const fork = await parent.fork!();
              made.push(fork);
              count(`${k} × Instance.fork()`, fork);
              return fork;
            })),
          async () => {
            await Promise.all(made.splice(0).map((f) => f.destroy()));
            // The next sample starts with the spares refilled, as create and reset do.
            await settle();
          },
        ),
      );
    } catch (error) {
      // A row that fails (a start past its deadline on a loaded host) is reported, not hidden.
      failures.push(`${k} × Instance.fork(): ${String(error).split("\n")[0]}`);
      progress(`${backend.key}: ${failures.at(-1)}`);
      await Promise.allSettled(made.splice(0).map((f) => f.destroy()));
    }
  }
  // Storage and memory: a new env and a fork, each after one more write.
  const env = await sandbox.create({ seed: 1 });
  const fork = await parent.fork();
  await app.write(gateway, env, 2);
  await app.write(gateway, fork, 2);
  const result = {
    env: await footprint(backend, sandbox, env, 3),
    fork: await footprint(backend, sandbox, fork, 3),
  };
  await Promise.all([env.destroy(), fork.destroy(), parent.destroy()]);
  return { key: backend.key, label: backend.label, rows, footprint: result, failures, paths };
}

/**
 * Measures every chosen backend on WordPress.
 *
 * @returns what each measured
 */
export async function benchForkBackends(): Promise<BackendForkResult[]> {
  const found = APPS.find((a) => a.key === "wordpress");
  if (!found) throw new Error("WordPress declares no sandbox bench");
  // A private build (`deno task image:apps --alias=NAME wordpress`) on every backend.
  const app = { ...found, image: Deno.env.get("BENCH_FORK_IMAGE") ?? found.image };
  const results: BackendForkResult[] = [];
  for (const backend of backendsOf(app, KEYS)) {
    if (backend.key === "shared-cold") continue;
    results.push(await benchBackend(app, backend));
  }
  return results;
}

/** When and under what load the backends were measured. */
export interface BackendsMeta {
  /** When the run began. */
  date: string;
  /** The machine. */
  machine: string;
  /** The load average when it began. */
  load: string;
  /** The load average when it ended. */
  loadAtEnd: string;
}

/**
 * The report's section of the backends.
 *
 * @param results what {@linkcode benchForkBackends} measured
 * @param meta when, where and under what load
 * @returns markdown lines
 */
export function backendLines(results: BackendForkResult[], meta: BackendsMeta): string[] {
  const lines = [
    "## Incus, Docker and the shared runtime (WordPress)",
    "",
    `${meta.date} · ${meta.machine}, load average ${meta.load} at the start, ${meta.loadAtEnd} at the end`,
    "",
    `${RUNS} samples per row. \`k × Instance.fork()\` is k forks asked at once of an env that made`,
    "one write (each fork serving and answering when it resolves); its ratio is to the",
    "same backend's `Instance.reset()`.",
    "",
    "| backend | what | p50 ms | p95 ms | p50 ÷ reset |",
    "| --- | --- | ---: | ---: | ---: |",
  ];
  for (const result of results) {
    const reset = result.rows.find((r) => r.what === "Instance.reset()")!.ms.p50;
    for (const row of result.rows) {
      lines.push(
        `| ${result.label} | ${row.what} | ${row.ms.p50} | ${row.ms.p95} | ${
          (row.ms.p50 / reset).toFixed(2)
        } |`,
      );
    }
  }
  for (const result of results) {
    for (const failure of result.failures) {
      lines.push(`| ${result.label} | failed: ${failure} | | | |`);
    }
  }
  for (const result of results) {
    const rows = Object.entries(result.paths ?? {});
    if (rows.length === 0) continue;
    lines.push(
      "",
      `Paths the forks of ${result.label} took, over the samples: ${
        rows.map(([what, paths]) =>
          `${what} ${Object.entries(paths).map(([path, n]) => `${n} ${path}`).join(", ")}`
        ).join("; ")
      }.`,
    );
  }
  for (const result of results) {
    if (!result.measured) continue;
    const at = result.measured;
    lines.push(
      "",
      `${result.label}: rows kept from the run of ${at.date}, load average ${at.load} at its start.`,
    );
  }
  lines.push(
    "",
    "Storage (bytes of its own on disk) and memory (PSS; on the shared runtime, the env's",
    "`mariadbd` plus its share of the runtime) of a new env and of a fork, each after one write:",
    "",
    "| backend | new env: storage MiB | fork: storage MiB | new env: memory MiB | fork: memory MiB |",
    "| --- | ---: | ---: | ---: | ---: |",
  );
  for (const result of results) {
    if ("none" in result.footprint) {
      lines.push(`| ${result.label} | ${result.footprint.none} | | | |`);
      continue;
    }
    const { env, fork } = result.footprint;
    lines.push(
      `| ${result.label} | ${round(env.storage / MIB)} | ${round(fork.storage / MIB)} | ${
        round(env.memory / MIB)
      } | ${round(fork.memory / MIB)} |`,
    );
  }
  lines.push("");
  return lines;
}
