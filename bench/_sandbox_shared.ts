/**
 * The shared-runtime rows of the real-application bench (`bench/_sandbox_apps.ts`):
 * one Apache/PHP per seed for every env, each env a `mariadbd` on a reflinked
 * copy of the seeded datadir (`SharedRuntimeSandbox`). Two backends: with
 * spares (servers started ahead: creation and reset take one, "from a
 * spare") and without (every creation and reset starts a server, "cold").
 *
 * What an env costs here is its own server, plus its share of what every
 * env shares: the runtime container's other processes (init, Apache and its
 * PHP workers, the control with every env's relay and state API) and the
 * spare servers, divided among the envs alive when measured.
 *
 * @module
 */
import type { Instance, Sandbox } from "../sandboxes/types.ts";
import {
  type SharedRuntimeInstance,
  SharedRuntimeSandbox,
} from "../sandboxes/incus/shared_runtime_sandbox.ts";
import type { AppBackend } from "./_sandbox_app_specs.ts";
import { btrfsExclusiveBytes, namespaceMemory } from "./_sandbox_common.ts";

/** Database servers the runtime keeps started ahead on the "from a spare" row. */
const SPARES = 2;

function shared(env: Instance): SharedRuntimeInstance {
  if (!("slot" in env) || !("runtimeName" in env)) {
    throw new Error("not an env of the shared runtime");
  }
  return env as SharedRuntimeInstance;
}

function rollup(pid: string): { pss: number; rss: number } {
  const text = Deno.readTextFileSync(`/proc/${pid}/smaps_rollup`);
  return {
    pss: Number(text.match(/^Pss:\s+(\d+) kB/m)?.[1] ?? 0) * 1024,
    rss: Number(text.match(/^Rss:\s+(\d+) kB/m)?.[1] ?? 0) * 1024,
  };
}

/**
 * The env's own server and the rest of the runtime, from the processes in the
 * runtime's pid namespace: the env's server is the `mariadbd` whose command
 * line names its slot's socket.
 */
function runtimeMemory(initPid: number, slot: number) {
  const namespace = Deno.readLinkSync(`/proc/${initPid}/ns/pid`);
  const own = { pss: 0, rss: 0, processes: 0 };
  const rest = { pss: 0, rss: 0, processes: 0 };
  for (const entry of Deno.readDirSync("/proc")) {
    if (!/^\d+$/.test(entry.name)) continue;
    try {
      if (Deno.readLinkSync(`/proc/${entry.name}/ns/pid`) !== namespace) continue;
      const line = Deno.readTextFileSync(`/proc/${entry.name}/cmdline`);
      const memory = rollup(entry.name);
      const into = line.includes(`--socket=/run/wsdb/slot-${slot}.sock\0`) ? own : rest;
      into.pss += memory.pss;
      into.rss += memory.rss;
      into.processes++;
    } catch {
      // The process ended meanwhile, or is a kernel thread without maps.
    }
  }
  if (own.processes !== 1) throw new Error(`found ${own.processes} servers of slot ${slot}`);
  return { own, rest };
}

/**
 * The two shared-runtime backends.
 *
 * @param pool the Incus storage pool
 * @param poolPath where the pool is mounted on the host
 * @returns the backends, with spares and cold
 */
export function sharedBackends(pool: string, poolPath: string): AppBackend[] {
  const backend = (cold: boolean): AppBackend => ({
    key: cold ? "shared-cold" : "shared",
    label: cold
      ? "shared runtime, cold (a mariadbd started per create and reset)"
      : "shared runtime, from a spare (mariadbd started ahead)",
    open: (gateway, app) =>
      SharedRuntimeSandbox.open({
        gateway,
        // A private build (`deno task image:apps --alias=NAME APP`), which
        // another checkout's build of the application does not replace.
        image: Deno.env.get(`BENCH_SHARED_IMAGE_${app.key.toUpperCase()}`) ?? app.image,
        pool,
        // Another prefix keeps a run's bases and runtimes apart from others'.
        prefix: Deno.env.get("BENCH_SHARED_PREFIX") ?? "wsshared-",
        spares: cold ? 0 : SPARES,
        readyTimeoutMs: app.readyMs * 3,
      }),
    async storage(_sandbox, env) {
      // The env's reflinked datadir and, where the application has them, its
      // reflinked files: the extents the env un-shared.
      const { runtimeName, slot } = shared(env);
      const rootfs = `${poolPath}/containers/${runtimeName}/rootfs`;
      const files = `${rootfs}/var/lib/wsfiles/slot-${slot}`;
      const hasFiles = await Deno.stat(files).then(() => true, (error) => {
        if (error instanceof Deno.errors.NotFound) return false;
        throw error;
      });
      return await btrfsExclusiveBytes(`${rootfs}/var/lib/wsdb/slot-${slot}`) +
        (hasFiles ? await btrfsExclusiveBytes(files) : 0);
    },
    // "From a spare" is measured from a spare: the runtime refills its
    // spares one at a time, slower than back-to-back launches come.
    ...(cold ? {} : {
      settle: async (sandbox: Sandbox) => {
        const runtime = sandbox as SharedRuntimeSandbox;
        const deadline = performance.now() + 120_000;
        while ((await runtime.health(1)).spares < SPARES) {
          if (performance.now() > deadline) throw new Error("the runtime's spares did not refill");
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
      },
    }),
    async initPid(sandbox, env) {
      return (await (sandbox as SharedRuntimeSandbox).client.instanceState(
        shared(env).runtimeName,
      )).pid;
    },
    async cgroupMemory(sandbox, env, envs) {
      // The runtime container's memory, page cache included, per env alive.
      return (await (sandbox as SharedRuntimeSandbox).client.instanceState(
        shared(env).runtimeName,
      )).memoryUsage / Math.max(envs, 1);
    },
    async memory(sandbox, env, envs) {
      const { runtimeName, slot } = shared(env);
      const pid = (await (sandbox as SharedRuntimeSandbox).client.instanceState(runtimeName)).pid;
      const { own, rest } = runtimeMemory(pid, slot);
      const share = Math.max(envs, 1);
      return {
        pss: own.pss + rest.pss / share,
        rss: own.rss + rest.rss / share,
        processes: 1,
        ownPss: own.pss,
      };
    },
    async pssPerEnv(sandbox, envs) {
      const first = envs[0];
      if (!first) return 0;
      const pid = (await (sandbox as SharedRuntimeSandbox).client.instanceState(
        shared(first).runtimeName,
      )).pid;
      return namespaceMemory(pid).pss / envs.length;
    },
    async free(sandbox) {
      const space = await (sandbox as SharedRuntimeSandbox).client.poolSpace(pool);
      return space.total - space.used;
    },
  });
  return [backend(false), backend(true)];
}
