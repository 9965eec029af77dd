/**
 * What one env container may take of its host, on Incus and Docker alike: a
 * foothold in an env (a page of the site run by the agent, a shell through a
 * bug of the application) must not take the memory, the process table or
 * the CPUs of every other env.
 *
 * The defaults fit the real applications with room: each application's
 * container (its web server, MariaDB, the state server, page cache
 * included) was measured at 130–390 MiB (README, "Real applications"), and
 * runs well under a hundred processes and threads; a Rails application's
 * boot is the one burst of CPU.
 *
 * @module
 */

/** Limits of one env container; `0` lifts one. */
export interface ContainerLimits {
  /**
   * Memory, page cache included, in MiB (Incus `limits.memory`, Docker
   * `Memory`, with no swap beyond it on Docker).
   *
   * @default {1024}
   */
  memoryMiB?: number;
  /**
   * Processes and threads together (Incus `limits.processes`, Docker
   * `PidsLimit`: the cgroup's `pids.max`).
   *
   * @default {1024}
   */
  processes?: number;
  /**
   * CPUs' worth of time, a hard quota (Incus `limits.cpu.allowance` as
   * `N00ms/100ms`, Docker `NanoCpus`); may be fractional.
   *
   * @default {2}
   */
  cpus?: number;
}

/** The limits every env container gets unless its backend's options say otherwise. */
export const DEFAULT_LIMITS: Readonly<Required<ContainerLimits>> = Object.freeze({
  memoryMiB: 1024,
  processes: 1024,
  cpus: 2,
});

/**
 * The limits of a shared runtime's one container (`SharedRuntimeSandbox`),
 * which serves every env of a seed, each with its own `mariadbd` (about
 * 35–95 MiB and a few dozen threads): processes and threads only, generous
 * enough for hundreds of envs, so that a fork bomb stops short of the host's
 * process table; memory and CPU grow with its envs and are left to the
 * options.
 */
export const SHARED_RUNTIME_LIMITS: Readonly<Required<ContainerLimits>> = Object.freeze({
  memoryMiB: 0,
  processes: 32_768,
  cpus: 0,
});

/**
 * The limits with the defaults filled in, checked.
 *
 * @param limits what the options gave
 * @param defaults what they did not give
 * @returns every limit
 * @throws {RangeError} when one is negative, not finite, or not whole
 *   (memory and processes)
 */
export function resolveLimits(
  limits: ContainerLimits = {},
  defaults: Readonly<Required<ContainerLimits>> = DEFAULT_LIMITS,
): Required<ContainerLimits> {
  const resolved = { ...defaults, ...limits };
  for (const [key, value] of Object.entries(resolved)) {
    const whole = key !== "cpus";
    if (!Number.isFinite(value) || value < 0 || (whole && !Number.isInteger(value))) {
      throw new RangeError(
        `The container limit "${key}" must be ${
          whole ? "a whole number" : "a number"
        } ≥ 0 (0 lifts it), not ${value}`,
      );
    }
  }
  return resolved;
}

/**
 * The limits as Incus instance config.
 *
 * @param limits what the options gave
 * @param defaults what they did not give
 * @returns `limits.memory`, `limits.processes`, `limits.cpu.allowance` (each left out when 0)
 */
export function incusLimits(
  limits: ContainerLimits = {},
  defaults: Readonly<Required<ContainerLimits>> = DEFAULT_LIMITS,
): Record<string, string> {
  const { memoryMiB, processes, cpus } = resolveLimits(limits, defaults);
  return {
    ...(memoryMiB > 0 ? { "limits.memory": `${memoryMiB}MiB` } : {}),
    ...(processes > 0 ? { "limits.processes": String(processes) } : {}),
    ...(cpus > 0
      ? { "limits.cpu.allowance": `${Math.max(1, Math.round(cpus * 100))}ms/100ms` }
      : {}),
  };
}

/** The limits as fields of a Docker container's `HostConfig`. */
export interface DockerLimits {
  /** Memory in bytes. */
  Memory?: number;
  /** Memory and swap together, in bytes: the same as `Memory`, so no swap. */
  MemorySwap?: number;
  /** Processes and threads. */
  PidsLimit?: number;
  /** CPU time in billionths of a CPU. */
  NanoCpus?: number;
}

/**
 * The limits as Docker `HostConfig` fields.
 *
 * @param limits what the options gave
 * @param hostCpus the CPUs of the daemon's host: Docker refuses a `NanoCpus`
 *   above them, so the CPU limit is at most these
 * @returns `Memory` and `MemorySwap`, `PidsLimit`, `NanoCpus` (each left out when 0)
 */
export function dockerLimits(limits: ContainerLimits = {}, hostCpus = Infinity): DockerLimits {
  const resolved = resolveLimits(limits);
  const { memoryMiB, processes } = resolved;
  const cpus = Math.min(resolved.cpus, hostCpus);
  const memory = memoryMiB * 1024 * 1024;
  return {
    ...(memoryMiB > 0 ? { Memory: memory, MemorySwap: memory } : {}),
    ...(processes > 0 ? { PidsLimit: processes } : {}),
    ...(cpus > 0 ? { NanoCpus: Math.round(cpus * 1e9) } : {}),
  };
}
