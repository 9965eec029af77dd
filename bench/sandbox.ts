/**
 * `deno task bench:sandbox`: the WebServ paper's Table 2 (launch latency,
 * storage and memory per environment) measured side by side on this machine
 * for Incus copy-on-write (btrfs), Incus full copy (dir pool), Docker
 * (overlay2) and the in-process fixture backend, plus reset latency and how
 * many environments the machine holds ready at once.
 *
 * The site is the demo site with a 512 MiB SQLite database whose first page
 * view writes to it (`fixtures/sites/demo/large.ts`), so overlay2's copy-up
 * and a full copy show in the numbers; its images are built first when they
 * are missing or stale. All traffic is to loopback and unix sockets.
 *
 * Environment: BENCH_LAUNCHES (default 10), BENCH_RESETS (default 10),
 * BENCH_CAP (envs per capacity run, default 100), BENCH_MIN_FREE_GIB (stop a
 * capacity run before free disk falls under this, default 20), BENCH_ONLY
 * (comma-separated backend keys).
 *
 * Real applications instead (`bench/_sandbox_apps.ts`, results in
 * `bench/results/sandbox_apps.{md,json}`): BENCH_APPS=mediawiki,wordpress
 * runs only their rows, on Incus btrfs and Docker, from the images `deno task
 * image:apps NAME` built. There BENCH_LAUNCHES and BENCH_RESETS default to 5,
 * BENCH_CAP to 20; BENCH_MIN_FREE_GIB (host disk, default 20),
 * BENCH_MIN_FREE_POOL_GIB (the Incus pool, default 0.5) and
 * BENCH_MIN_FREE_MEMORY_GIB (MemAvailable, default 4) bound the capacity run.
 * BENCH_APP_BACKENDS=shared,shared-cold measures only those backends (keeping
 * the report's other rows); BENCH_SHARED_IMAGE_APP and BENCH_SHARED_PREFIX
 * name the shared runtime's image and instance prefix.
 *
 * Fork latency instead (`bench/_sandbox_fork.ts`, results in
 * `bench/results/sandbox_fork.{md,json}`): BENCH_FORK=1 times `env.fork(k)`
 * for k = 1, 4, 16 on the fixture backend beside a fresh env and a reset,
 * then the container backends and the shared runtime; BENCH_FORK=backends
 * measures those alone, keeping the fixture section of the results.
 *
 * @module
 */
import { FixtureSandbox } from "../sandboxes/fixture/fixture_sandbox.ts";
import { Gateway } from "../sandboxes/gateway.ts";
import { IncusSandbox } from "../sandboxes/incus/incus_sandbox.ts";
import { DockerSandbox } from "../sandboxes/docker/docker_sandbox.ts";
import type { Instance, Sandbox } from "../sandboxes/types.ts";
import { buildImages } from "../sandboxes/image/build_images.ts";
import { IncusClient } from "../sandboxes/incus/client.ts";
import { DockerClient } from "../sandboxes/docker/client.ts";
import largeSite from "../fixtures/sites/demo/large.ts";
import smallSite from "../fixtures/sites/demo/mod.ts";
import { benchApps } from "./_sandbox_apps.ts";
import { benchFork } from "./_sandbox_fork.ts";
import {
  command,
  countAnswering,
  duBytes,
  freeDisk,
  machine,
  memAvailable,
  MIB,
  progress,
  round,
  type Stats,
  stats,
} from "./_sandbox_common.ts";

const LAUNCHES = Number(Deno.env.get("BENCH_LAUNCHES") ?? 10);
const RESETS = Number(Deno.env.get("BENCH_RESETS") ?? 10);
const CAP = Number(Deno.env.get("BENCH_CAP") ?? 100);
const MIN_FREE = Number(Deno.env.get("BENCH_MIN_FREE_GIB") ?? 20) * 2 ** 30;
const ONLY = Deno.env.get("BENCH_ONLY")?.split(",");
const APPS = Deno.env.get("BENCH_APPS")?.split(",").filter((key) => key !== "");

interface Backend {
  key: string;
  label: string;
  open(gateway: Gateway, mode?: ResetMode): Promise<Sandbox>;
  /** Bytes one env added on disk after its first write. */
  storage?(sandbox: Sandbox, envs: Instance[]): Promise<number>;
  /** Bytes of memory one env uses, as its backend accounts it. */
  memory?(sandbox: Sandbox, env: Instance): Promise<number>;
  /** The host pid of the env's site process. */
  pid?(sandbox: Sandbox, env: Instance): Promise<number>;
  resetModes?: ResetMode[];
}

/** recopy: a fresh container; restore: a snapshot restore; spare: recopy
 * taking one of the warm spares the sandbox keeps. */
type ResetMode = "recopy" | "restore" | "spare";

function modeOptions(
  mode: ResetMode | undefined,
): { reset?: "restore"; spares?: number } {
  if (mode === "restore") return { reset: "restore" };
  if (mode === "spare") return { spares: 1 };
  return {};
}

interface Result {
  key: string;
  label: string;
  baseSeconds: number;
  launchReadyMs: Stats;
  launchFirstWriteMs: Stats;
  storagePerEnvMiB: number;
  memoryPerEnvMiB: number;
  rssPerEnvMiB: number;
  hostMemoryPerEnvMiB: number;
  resetMs: Record<string, Stats>;
  capacity: { ready: number; stoppedBecause: string; seconds: number };
}

/** Waits (untimed) until the sandbox has a spare ready, as it would between
 * episodes. */
async function spareReady(sandbox: Sandbox): Promise<void> {
  const deadline = Date.now() + 120_000;
  while (Date.now() < deadline) {
    const ready = "readySpares" in sandbox ? Number(sandbox.readySpares) : 1;
    if (ready >= 1) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

function processRss(pid: number): number {
  try {
    const status = Deno.readTextFileSync(`/proc/${pid}/status`);
    return Number(status.match(/VmRSS:\s+(\d+)/)?.[1] ?? 0) * 1024;
  } catch {
    return 0;
  }
}

async function firstWrite(gateway: Gateway, env: Instance): Promise<void> {
  const response = await gateway.request(env.origin, "/");
  await response.text();
  if (response.status !== 200) {
    throw new Error(`The first page view answered ${response.status}`);
  }
}

function containerName(env: Instance): string {
  return "containerName" in env && typeof env.containerName === "string" ? env.containerName : "";
}

const fixtureDirectory = await Deno.makeTempDir({ prefix: "webserv-bench-" });

const BACKENDS: Backend[] = [
  {
    key: "incus-btrfs",
    label: "Incus, copy-on-write (btrfs pool)",
    open: (gateway, mode) =>
      IncusSandbox.open({
        gateway,
        image: "webserv-demolarge",
        pool: "webserv-btrfs",
        prefix: "wsb-",
        ...modeOptions(mode),
      }),
    async storage(sandbox, envs) {
      // The pool is a loop file of its own: its growth is the envs' storage.
      const incus = (sandbox as IncusSandbox).client;
      await command("sync", []);
      const after = (await incus.poolSpace("webserv-btrfs")).used;
      return (after - poolBefore) / envs.length;
    },
    async memory(sandbox, env) {
      const incus = (sandbox as IncusSandbox).client;
      return (await incus.instanceState(containerName(env))).memoryUsage;
    },
    async pid(sandbox, env) {
      const incus = (sandbox as IncusSandbox).client;
      return (await incus.instanceState(containerName(env))).pid;
    },
    resetModes: ["recopy", "restore", "spare"],
  },
  {
    key: "incus-dir",
    label: "Incus, full copy (dir pool)",
    open: (gateway, mode) =>
      IncusSandbox.open({
        gateway,
        image: "webserv-demolarge",
        pool: "webserv-dir",
        prefix: "wsd-",
        ...modeOptions(mode),
      }),
    async storage(_sandbox, envs) {
      await command("sync", []);
      const paths = envs.map((env) =>
        `/var/lib/incus/storage-pools/webserv-dir/containers/${containerName(env)}`
      );
      return await duBytes(paths) / envs.length;
    },
    async memory(sandbox, env) {
      const incus = (sandbox as IncusSandbox).client;
      return (await incus.instanceState(containerName(env))).memoryUsage;
    },
    async pid(sandbox, env) {
      const incus = (sandbox as IncusSandbox).client;
      return (await incus.instanceState(containerName(env))).pid;
    },
    resetModes: ["recopy", "restore"],
  },
  {
    key: "docker",
    label: "Docker (overlay2)",
    open: (gateway, mode) =>
      DockerSandbox.open({
        gateway,
        image: "webserv-demolarge",
        prefix: "wsk-",
        ...(mode === "spare" ? { spares: 1 } : {}),
      }),
    async storage(sandbox, envs) {
      const docker = (sandbox as DockerSandbox).client;
      const names = new Set(envs.map(containerName));
      const containers = await docker.listContainers({
        label: "webserv.owner",
        size: true,
      });
      const sizes = containers.filter((c) => c.names.some((n) => names.has(n))).map((c) =>
        c.sizeRw
      );
      return sizes.reduce((a, b) => a + b, 0) / envs.length;
    },
    async memory(sandbox, env) {
      const docker = (sandbox as DockerSandbox).client;
      return await docker.memoryUsage(containerName(env));
    },
    async pid(sandbox, env) {
      const docker = (sandbox as DockerSandbox).client;
      return (await docker.inspectContainer(containerName(env))).pid;
    },
    resetModes: ["recopy", "spare"],
  },
  {
    key: "fixture",
    label: "Fixture (in-process)",
    open: (gateway) =>
      Promise.resolve(
        new FixtureSandbox(largeSite, { gateway, directory: fixtureDirectory }),
      ),
    async storage(_sandbox, envs) {
      const paths: string[] = [];
      for await (const entry of Deno.readDir(fixtureDirectory)) {
        if (entry.name.startsWith("env-")) {
          paths.push(`${fixtureDirectory}/${entry.name}`);
        }
      }
      return await duBytes(paths) / envs.length;
    },
    resetModes: ["recopy"],
  },
];

let poolBefore = 0;

async function benchBackend(backend: Backend): Promise<Result> {
  await using gateway = new Gateway();
  progress(`${backend.label}: opening, seeding the base (512 MiB database)`);
  const baseStart = performance.now();
  let sandbox = await backend.open(gateway);
  // The first create builds the per-seed base; it is not a launch sample.
  await (await sandbox.create({ seed: 1 })).destroy();
  const baseSeconds = round((performance.now() - baseStart) / 1000);
  progress(`${backend.label}: base ready in ${baseSeconds} s`);

  if (backend.key === "incus-btrfs") {
    await command("sync", []);
    poolBefore = (await (sandbox as IncusSandbox).client.poolSpace(
      "webserv-btrfs",
    )).used;
  }
  const memBefore = memAvailable();
  const ready: number[] = [];
  const written: number[] = [];
  const envs: Instance[] = [];
  for (let i = 0; i < LAUNCHES; i++) {
    const start = performance.now();
    const env = await sandbox.create({ seed: 1 });
    ready.push(performance.now() - start);
    await firstWrite(gateway, env);
    written.push(performance.now() - start);
    envs.push(env);
    progress(
      `${backend.label}: launch ${i + 1}/${LAUNCHES} ready ${
        round(ready.at(-1) ?? 0)
      } ms, first write done ${round(written.at(-1) ?? 0)} ms`,
    );
  }
  await new Promise((resolve) => setTimeout(resolve, 1000));
  const hostMemoryPerEnv = (memBefore - memAvailable()) / envs.length;
  const storage = backend.storage ? await backend.storage(sandbox, envs) : 0;
  const memories: number[] = [];
  if (backend.memory) {
    for (const env of envs) memories.push(await backend.memory(sandbox, env));
  }
  const memory = memories.length ? stats(memories).p50 : hostMemoryPerEnv;
  const rss: number[] = [];
  if (backend.pid) {
    for (const env of envs) rss.push(processRss(await backend.pid(sandbox, env)));
  }
  const rssPerEnv = rss.length ? stats(rss).p50 : hostMemoryPerEnv;
  progress(
    `${backend.label}: storage per env ${round(storage / MIB, 2)} MiB, memory per env: site RSS ${
      round(rssPerEnv / MIB)
    } MiB, cgroup ${round(memory / MIB)} MiB, host view ${round(hostMemoryPerEnv / MIB)} MiB`,
  );

  const resetMs: Record<string, Stats> = {};
  for (const mode of backend.resetModes ?? []) {
    let target = sandbox;
    if (mode !== "recopy") target = await backend.open(gateway, mode);
    const env = mode === "recopy" ? envs[0] : await target.create({ seed: 1 });
    if (!env) continue;
    const samples: number[] = [];
    for (let i = 0; i < RESETS; i++) {
      await firstWrite(gateway, env);
      if (mode === "spare") await spareReady(target);
      const start = performance.now();
      await env.reset();
      samples.push(performance.now() - start);
    }
    resetMs[mode] = stats(samples);
    progress(
      `${backend.label}: reset (${mode}) p50 ${resetMs[mode]?.p50} ms, p95 ${
        resetMs[mode]?.p95
      } ms`,
    );
    if (target !== sandbox) await target.close();
  }
  progress(`${backend.label}: destroying the launch samples`);
  await sandbox.close();

  // Capacity: envs ready at once, each after its first write.
  sandbox = await backend.open(gateway);
  const held: Instance[] = [];
  let stoppedBecause = `reached the cap of ${CAP}`;
  const capStart = performance.now();
  while (held.length < CAP) {
    const free = await freeDisk("/var/lib");
    if (free < MIN_FREE + 2 * 600 * MIB) {
      stoppedBecause = `free disk would fall under ${MIN_FREE / 2 ** 30} GiB`;
      break;
    }
    if (memAvailable() < 2 * 2 ** 30) {
      stoppedBecause = "available memory fell under 2 GiB";
      break;
    }
    try {
      const env = await sandbox.create({ seed: 1 });
      held.push(env);
      await firstWrite(gateway, env);
    } catch (error) {
      stoppedBecause = `create failed: ${String(error).slice(0, 200)}`;
      break;
    }
    if (held.length % 10 === 0) {
      progress(
        `${backend.label}: ${held.length} envs ready, ${round(free / 2 ** 30)} GiB disk free, ${
          round(memAvailable() / 2 ** 30)
        } GiB memory free`,
      );
    }
  }
  // Every env must still answer for the count to stand.
  const answering = await countAnswering(held);
  const capSeconds = round((performance.now() - capStart) / 1000);
  progress(
    `${backend.label}: ${answering} envs ready at once (${stoppedBecause}); destroying`,
  );
  await sandbox.close();

  return {
    key: backend.key,
    label: backend.label,
    baseSeconds,
    launchReadyMs: stats(ready),
    launchFirstWriteMs: stats(written),
    storagePerEnvMiB: round(storage / MIB, 2),
    memoryPerEnvMiB: round(memory / MIB),
    rssPerEnvMiB: round(rssPerEnv / MIB),
    hostMemoryPerEnvMiB: round(hostMemoryPerEnv / MIB),
    resetMs,
    capacity: {
      ready: answering,
      stoppedBecause,
      seconds: capSeconds,
    },
  };
}

async function smallFixtureReset(): Promise<Stats> {
  await using gateway = new Gateway();
  await using sandbox = new FixtureSandbox(smallSite, { gateway });
  await using env = await sandbox.create({ seed: 1 });
  const samples: number[] = [];
  for (let i = 0; i < 100; i++) {
    await firstWrite(gateway, env);
    const start = performance.now();
    await env.reset();
    samples.push(performance.now() - start);
  }
  return stats(samples);
}

function markdown(results: Result[], meta: Record<string, unknown>): string {
  const row = (cells: (string | number)[]) => `| ${cells.join(" | ")} |`;
  const lines = [
    "# Sandbox benchmark",
    "",
    `Run ${meta["date"]} on ${meta["machine"]}. Site: the demo site with a ${
      meta["databaseMiB"]
    } MiB SQLite database; the first page view writes to it. ${LAUNCHES} launches and ${RESETS} resets per backend; capacity capped at ${CAP} envs and stopped before free disk falls under ${
      MIN_FREE / 2 ** 30
    } GiB. The machine is shared with other work, so latencies are noisy.`,
    "",
    row([
      "backend",
      "launch→ready p50 / p95 (ms)",
      "launch→first write p50 / p95 (ms)",
      "storage per env (MiB)",
      "memory per env: site RSS / cgroup / host (MiB)",
      "reset p50 / p95 (ms)",
      "envs ready at once",
    ]),
    row(["---", "---", "---", "---", "---", "---", "---"]),
  ];
  for (const r of results) {
    lines.push(row([
      r.label,
      `${r.launchReadyMs.p50} / ${r.launchReadyMs.p95}`,
      `${r.launchFirstWriteMs.p50} / ${r.launchFirstWriteMs.p95}`,
      r.storagePerEnvMiB,
      `${r.rssPerEnvMiB} / ${r.memoryPerEnvMiB} / ${r.hostMemoryPerEnvMiB}`,
      Object.entries(r.resetMs).map(([mode, s]) => `${mode}: ${s.p50} / ${s.p95}`).join("; "),
      `${r.capacity.ready} (${r.capacity.stoppedBecause}, ${r.capacity.seconds} s)`,
    ]));
  }
  const by = (key: string) => results.find((r) => r.key === key);
  const cow = by("incus-btrfs");
  const docker = by("docker");
  lines.push("");
  if (cow && docker) {
    lines.push(
      `Incus copy-on-write vs Docker: launch→ready p50 ${
        round(docker.launchReadyMs.p50 / cow.launchReadyMs.p50, 2)
      }x faster, launch→first write p50 ${
        round(docker.launchFirstWriteMs.p50 / cow.launchFirstWriteMs.p50, 2)
      }x faster, storage per env ${
        round(docker.storagePerEnvMiB / Math.max(cow.storagePerEnvMiB, 0.01), 0)
      }x smaller.`,
    );
  }
  const small = meta["smallFixtureResetMs"] as Stats | undefined;
  if (small) {
    lines.push(
      `Fixture reset on the small demo site (no filler): p50 ${small.p50} ms, p95 ${small.p95} ms (${small.n} resets).`,
    );
  }
  lines.push(
    "",
    "Storage per env: Incus btrfs = growth of the pool (a loop file of its own) divided by the envs; Incus dir = `du` of each container's folder; Docker = the container's writable layer (`SizeRw`); fixture = the env's SQLite copy. Memory per env: site RSS = resident memory of the env's site process (for the fixture, which shares this process, the host view); cgroup = the container's memory use as Incus or Docker report it, page cache included (Docker's copy-up leaves the copied database in it); host = the fall in MemAvailable divided by the envs, noisy on a shared machine. Reset: recopy = a fresh copy or container behind the same origin (the old one removed in the background); restore = stop, `restore` of a snapshot taken at creation, start; spare = recopy taking a container the sandbox launched ahead (`spares: 1`), measured once a spare is ready, as it is between episodes.",
    "",
  );
  return lines.join("\n");
}

if (import.meta.main && Deno.env.get("BENCH_FORK")) {
  await Deno.remove(fixtureDirectory, { recursive: true });
  console.log(await benchFork(Deno.env.get("BENCH_FORK") === "backends" ? "backends" : "all"));
} else if (import.meta.main && APPS) {
  await Deno.remove(fixtureDirectory, { recursive: true });
  await benchApps(APPS, {
    launches: Number(Deno.env.get("BENCH_LAUNCHES") ?? 5),
    resets: Number(Deno.env.get("BENCH_RESETS") ?? 5),
    cap: Number(Deno.env.get("BENCH_CAP") ?? 20),
    minFreeDisk: MIN_FREE,
    minFreePool: Number(Deno.env.get("BENCH_MIN_FREE_POOL_GIB") ?? 0.5) * 2 ** 30,
    minFreeMemory: Number(Deno.env.get("BENCH_MIN_FREE_MEMORY_GIB") ?? 4) * 2 ** 30,
  });
} else if (import.meta.main) {
  progress("building the large demo site's images (skipped when up to date)");
  {
    using incus = new IncusClient();
    using docker = new DockerClient();
    await buildImages(
      new URL("../fixtures/sites/demo/large.ts", import.meta.url).pathname,
      { incus, docker, log: progress },
    );
  }
  const results: Result[] = [];
  for (const backend of BACKENDS) {
    if (ONLY && !ONLY.includes(backend.key)) continue;
    results.push(await benchBackend(backend));
  }
  const smallFixtureResetMs = await smallFixtureReset();
  progress(`fixture reset on the small site p50 ${smallFixtureResetMs.p50} ms`);
  await Deno.remove(fixtureDirectory, { recursive: true });
  const meta = {
    date: new Date().toISOString(),
    machine: machine(),
    databaseMiB: 512,
    launches: LAUNCHES,
    resets: RESETS,
    cap: CAP,
    smallFixtureResetMs,
  };
  await Deno.mkdir(new URL("./results/", import.meta.url), { recursive: true });
  await Deno.writeTextFile(
    new URL("./results/sandbox.json", import.meta.url),
    JSON.stringify({ meta, results }, null, 2) + "\n",
  );
  await Deno.writeTextFile(
    new URL("./results/sandbox.md", import.meta.url),
    markdown(results, meta),
  );
  console.log(markdown(results, meta));
}
