/**
 * The real-application rows of `deno task bench:sandbox` (`BENCH_APPS=mediawiki,wordpress,redmine`):
 * the WebServ paper's Table 2 on MediaWiki 1.39 (a 1.5 GiB MariaDB database),
 * WordPress 6.1 and Redmine 5.0, each on Incus copy-on-write (btrfs) and Docker
 * (overlay2), measured side by side in one run. Launches and resets
 * alternate between the backends so that the load of a shared machine falls
 * on both alike; the capacity runs take turns.
 *
 * The images are the ones `deno task image:apps NAME` imports; this never
 * builds them. The seed's base (the Incus base instance, Docker's seed image)
 * is the one the application tests make (prefix `wsapp-`), made here if it
 * is missing and not counted as a launch.
 *
 * @module
 */
import { Gateway } from "../sandboxes/gateway.ts";
import type { Instance, Sandbox } from "../sandboxes/types.ts";
import {
  type AppBenchSettings,
  type AppResult,
  earlierRuns,
  writeResults,
} from "./_sandbox_apps_report.ts";
import { type AppBackend, APPS, type AppSpec } from "./_sandbox_app_specs.ts";
import { BACKEND_KEYS, backendsOf, POOL } from "./_sandbox_app_backends.ts";
import {
  countAnswering,
  freeDisk,
  loadAverage,
  memAvailable,
  MIB,
  namespaceMemory,
  progress,
  round,
  stats,
} from "./_sandbox_common.ts";

const GIB = 2 ** 30;

/**
 * The backends measured (`BENCH_APP_BACKENDS=shared,shared-cold`), every one
 * when unset; a run of some keeps the report's rows of the others.
 */
const ONLY_BACKENDS = Deno.env.get("BENCH_APP_BACKENDS")?.split(",").filter((key) => key !== "");

export type { AppBenchSettings } from "./_sandbox_apps_report.ts";

const open = new Set<Sandbox>();

/** Set by SIGINT or SIGTERM: the run stops before its next create, write or reset. */
let interrupted = false;

/** Ends the run at its next step once interrupted; its envs are then removed by the finally blocks. */
function stopIfInterrupted(): void {
  if (interrupted) throw new Error("Interrupted by a signal");
}

/** Closes every sandbox this module opened (on a signal, and at the end). */
async function closeAll(): Promise<void> {
  const sandboxes = [...open];
  open.clear();
  for (const sandbox of sandboxes) {
    try {
      await sandbox.close();
    } catch (error) {
      progress(`closing a sandbox failed: ${String(error).slice(0, 300)}`);
    }
  }
}

async function opened(sandbox: Promise<Sandbox>): Promise<Sandbox> {
  const s = await sandbox;
  open.add(s);
  return s;
}

async function closed(sandbox: Sandbox): Promise<void> {
  open.delete(sandbox);
  await sandbox.close();
}

interface Side {
  backend: AppBackend;
  sandbox: Sandbox;
  ready: number[];
  written: number[];
  writes: number[];
  resets: number[];
  envs: Instance[];
  /** What failed: a launch or a write that did not take, a reset that threw. */
  failures: string[];
}

function failed(side: Side, app: AppSpec, what: string, error: unknown): void {
  const message = `${what}: ${String(error).replace(/\s+/g, " ").slice(0, 240)}`;
  side.failures.push(message);
  progress(`${app.label} on ${side.backend.label}: FAILED ${message}`);
}

let writes = 0;

async function launch(side: Side, app: AppSpec, gateway: Gateway): Promise<void> {
  stopIfInterrupted();
  await side.backend.settle?.(side.sandbox);
  const start = performance.now();
  let env: Instance;
  try {
    env = await side.sandbox.create({ seed: 1 });
  } catch (error) {
    failed(side, app, "create", error);
    return;
  }
  const ready = performance.now();
  try {
    await app.write(gateway, env, ++writes);
  } catch (error) {
    // Not a sample: the env answered its readiness check but not the write.
    failed(side, app, `first write ${round(performance.now() - ready)} ms after ready`, error);
    return;
  }
  const done = performance.now();
  side.envs.push(env);
  side.ready.push(ready - start);
  side.written.push(done - start);
  side.writes.push(done - ready);
  progress(
    `${app.label} on ${side.backend.label}: launch ${side.ready.length} ready ${
      round(ready - start)
    } ms, first write ${round(done - ready)} ms${
      "source" in env ? ` (server: ${String(env.source)})` : ""
    }`,
  );
}

async function capacity(
  app: AppSpec,
  backend: AppBackend,
  gateway: Gateway,
  settings: AppBenchSettings,
  perEnv: { storage: number; memory: number },
): Promise<AppResult["capacity"]> {
  const sandbox = await opened(backend.open(gateway, app));
  const held: Instance[] = [];
  let stoppedBecause = `reached the cap of ${settings.cap}`;
  const start = performance.now();
  try {
    // The next env must fit with a margin: twice what one took in the launches.
    const floor = backend.key === "docker" ? settings.minFreeDisk : settings.minFreePool;
    while (held.length < settings.cap) {
      stopIfInterrupted();
      const free = await backend.free(sandbox);
      if (free - 2 * perEnv.storage < floor) {
        stoppedBecause = `the next env would leave under ${round(floor / GIB, 1)} GiB free ${
          backend.key === "docker" ? "on the host's disk" : `in the ${POOL} pool`
        } (${round(free / GIB, 2)} GiB free)`;
        break;
      }
      if (backend.key !== "docker" && await freeDisk("/var/lib") < settings.minFreeDisk) {
        stoppedBecause = `the host's free disk fell under ${settings.minFreeDisk / GIB} GiB`;
        break;
      }
      if (memAvailable() - 2 * perEnv.memory < settings.minFreeMemory) {
        stoppedBecause = `the next env would leave under ${
          settings.minFreeMemory / GIB
        } GiB of available memory`;
        break;
      }
      try {
        const env = await sandbox.create({ seed: 1 });
        held.push(env);
        await app.write(gateway, env, ++writes);
      } catch (error) {
        stoppedBecause = `a create or its first write failed: ${String(error).slice(0, 200)}`;
        break;
      }
      progress(
        `${app.label} on ${backend.label}: ${held.length} envs ready, ${
          round(free / GIB, 2)
        } GiB free for storage, ${round(memAvailable() / GIB, 1)} GiB memory available`,
      );
    }
    // Every env must still answer for the count to stand.
    const answering = await countAnswering(held);
    progress(
      `${app.label} on ${backend.label}: ${answering} envs ready at once (${stoppedBecause})`,
    );
    const pss = backend.pssPerEnv && held.length
      ? round(await backend.pssPerEnv(sandbox, held) / MIB)
      : undefined;
    return {
      ready: answering,
      stoppedBecause,
      seconds: round((performance.now() - start) / 1000),
      ...(pss === undefined ? {} : { pssPerEnvMiB: pss }),
    };
  } finally {
    await closed(sandbox);
  }
}

async function benchApp(app: AppSpec, settings: AppBenchSettings): Promise<AppResult[]> {
  await using gateway = new Gateway();
  const sides: Side[] = [];
  try {
    for (const backend of backendsOf(app, ONLY_BACKENDS)) {
      progress(`${app.label} on ${backend.label}: opening; a first env warms the seed's base`);
      const sandbox = await opened(backend.open(gateway, app));
      // Not a sample: makes the seed's base if missing and warms the caches.
      const warm = await sandbox.create({ seed: 1 });
      await app.write(gateway, warm, ++writes);
      await warm.destroy();
      sides.push({
        backend,
        sandbox,
        ready: [],
        written: [],
        writes: [],
        resets: [],
        envs: [],
        failures: [],
      });
    }
    // Alternating, each round in the other order, so that load hits both alike.
    for (let i = 0; i < settings.launches; i++) {
      for (const side of i % 2 === 0 ? sides : [...sides].reverse()) {
        await launch(side, app, gateway);
      }
    }
    const measured = new Map<string, Omit<AppResult, "capacity">>();
    for (const side of sides) {
      const storage: number[] = [];
      const pss: number[] = [];
      const ownPss: number[] = [];
      const rss: number[] = [];
      const cgroup: number[] = [];
      let processes = 0;
      for (const env of side.envs) {
        storage.push(await side.backend.storage(side.sandbox, env));
        let memory: { pss: number; rss: number; processes: number };
        if (side.backend.memory) {
          const measured = await side.backend.memory(side.sandbox, env, side.envs.length);
          ownPss.push(measured.ownPss);
          memory = measured;
        } else {
          memory = namespaceMemory(await side.backend.initPid(side.sandbox, env));
        }
        pss.push(memory.pss);
        rss.push(memory.rss);
        processes = memory.processes;
        cgroup.push(await side.backend.cgroupMemory(side.sandbox, env, side.envs.length));
      }
      const mib = (xs: number[]) => stats(xs.map((x) => x / MIB));
      measured.set(side.backend.key, {
        app: app.key,
        backend: side.backend.key,
        label: `${app.label} on ${side.backend.label}`,
        launchReadyMs: stats(side.ready),
        launchFirstWriteMs: stats(side.written),
        firstWriteMs: stats(side.writes),
        storagePerEnvMiB: mib(storage),
        pssPerEnvMiB: mib(pss),
        ...(ownPss.length ? { ownPssPerEnvMiB: mib(ownPss) } : {}),
        rssPerEnvMiB: mib(rss),
        cgroupPerEnvMiB: mib(cgroup),
        processesPerEnv: processes,
        resetMs: stats([]),
        failures: [],
      });
      progress(
        `${app.label} on ${side.backend.label}: storage per env p50 ${
          round(stats(storage).p50 / MIB)
        } MiB, PSS p50 ${round(stats(pss).p50 / MIB)} MiB, cgroup p50 ${
          round(stats(cgroup).p50 / MIB)
        } MiB, ${processes} processes`,
      );
    }
    // Resets of one env per backend, each after a write so there is something to undo.
    for (let i = 0; i < settings.resets; i++) {
      stopIfInterrupted();
      for (const side of i % 2 === 0 ? sides : [...sides].reverse()) {
        const env = side.envs[0];
        if (!env) continue;
        // The launch's write is still there before the first reset; later
        // ones follow a reset (WordPress refuses a second comment from one
        // address within 15 s, and the reset is what forgets the first).
        try {
          if (i > 0) await app.write(gateway, env, ++writes);
          await side.backend.settle?.(side.sandbox);
          const start = performance.now();
          await env.reset();
          side.resets.push(performance.now() - start);
        } catch (error) {
          failed(side, app, `reset round ${i + 1}`, error);
          continue;
        }
        progress(
          `${app.label} on ${side.backend.label}: reset ${side.resets.length} ${
            round(side.resets.at(-1) ?? 0)
          } ms`,
        );
      }
    }
    // The reset env takes a write again: reset gave a working env.
    for (const side of sides) {
      const env = side.envs[0];
      if (env) {
        await app.write(gateway, env, ++writes).catch((error) =>
          failed(side, app, "the write after the resets", error)
        );
      }
      const row = measured.get(side.backend.key);
      if (row) {
        row.resetMs = stats(side.resets);
        row.failures = side.failures;
      }
    }
    const results: AppResult[] = [];
    for (const side of sides) {
      progress(`${app.label} on ${side.backend.label}: destroying the launch samples`);
      await closed(side.sandbox);
    }
    sides.length = 0;
    for (const backend of backendsOf(app, ONLY_BACKENDS)) {
      const row = measured.get(backend.key);
      if (!row) continue;
      const capacityRun = await capacity(app, backend, gateway, settings, {
        storage: row.storagePerEnvMiB.p50 * MIB,
        memory: row.cgroupPerEnvMiB.p50 * MIB,
      });
      results.push({ ...row, capacity: capacityRun });
    }
    return results;
  } finally {
    await closeAll();
  }
}

/**
 * Runs the real-application rows and writes `bench/results/sandbox_apps.{md,json}`.
 *
 * @param keys the applications (`mediawiki`, `wordpress`, `redmine`)
 * @param settings counts and floors
 */
export async function benchApps(keys: string[], settings: AppBenchSettings): Promise<void> {
  const unknown = keys.filter((key) => !APPS.some((app) => app.key === key));
  if (unknown.length) {
    throw new Error(
      `BENCH_APPS names no application "${unknown.join(", ")}"; known: ${
        APPS.map((a) => a.key).join(", ")
      }`,
    );
  }
  const strange = (ONLY_BACKENDS ?? []).filter((key) => !BACKEND_KEYS.includes(key));
  if (strange.length) {
    throw new Error(
      `BENCH_APP_BACKENDS names no backend "${strange.join(", ")}"; known: ${
        BACKEND_KEYS.join(", ")
      }`,
    );
  }
  // A signal ends the run at its next step rather than closing the sandboxes
  // under it: a create in flight would then make an env that nothing removes.
  const stop = () => {
    progress("interrupted: stopping after the current step, then removing every env this run made");
    interrupted = true;
  };
  Deno.addSignalListener("SIGINT", stop);
  Deno.addSignalListener("SIGTERM", stop);
  const loadBefore = loadAverage();
  // The report keeps the rows of applications this run does not measure.
  const earlier = await earlierRuns(keys, ONLY_BACKENDS);
  const startedAt = new Date().toISOString();
  const meta = {
    startedAt,
    loadBefore,
    settings,
    apps: keys,
    ...(ONLY_BACKENDS ? { backends: ONLY_BACKENDS } : {}),
  };
  const results: AppResult[] = [];
  try {
    for (const app of APPS.filter((a) => keys.includes(a.key))) {
      results.push(...await benchApp(app, settings));
      await writeResults(results, meta, earlier);
    }
  } catch (error) {
    if (!interrupted) throw error;
  } finally {
    Deno.removeSignalListener("SIGINT", stop);
    Deno.removeSignalListener("SIGTERM", stop);
    await closeAll();
  }
  if (interrupted) {
    progress("interrupted: every env this run made is removed");
    Deno.exit(130);
  }
  console.log(
    await writeResults(results, meta, earlier),
  );
}
