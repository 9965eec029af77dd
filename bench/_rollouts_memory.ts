/**
 * Memory of a `bench:rollouts` run on the shared runtime, sampled while it
 * runs: the peak of the application runtimes the run started (Incus's
 * figure for each `wsshared-rt-*` container that was not there before: its
 * Apache/PHP and every env's `mariadbd`) and the fall of the host's
 * available memory (that and the browser's renderers, the server, the
 * clients), so a size that does not fit is named with a measured cost per
 * env.
 *
 * @module
 */

/** What a run took at its peak. */
export interface MemoryPeak {
  /** The runtimes' containers together at their highest sample, MiB. */
  runtimeMiB: number;
  /** The host's available memory before the run less its lowest sample during it, MiB. */
  hostMiB: number;
}

/** The shared runtimes' containers with their memory use, bytes, by name. */
async function runtimes(): Promise<Map<string, number>> {
  const output = await new Deno.Command("incus", {
    args: ["list", "wsshared-rt-", "--format", "json"],
    stdout: "piped",
    stderr: "null",
  }).output();
  const found = new Map<string, number>();
  if (!output.success) return found;
  const list = JSON.parse(new TextDecoder().decode(output.stdout)) as {
    name: string;
    state?: { memory?: { usage?: number } } | null;
  }[];
  for (const instance of list) found.set(instance.name, instance.state?.memory?.usage ?? 0);
  return found;
}

/** The host's available memory, bytes. */
async function available(): Promise<number> {
  const info = await Deno.readTextFile("/proc/meminfo");
  return Number(info.match(/MemAvailable:\s+(\d+) kB/)?.[1] ?? NaN) * 1024;
}

/**
 * Samples every two seconds until `stop()`; other runs' runtimes (there
 * before this one began) are left out.
 *
 * @returns a function that stops sampling and answers the peak
 */
export async function sampleMemory(): Promise<() => Promise<MemoryPeak>> {
  const before = new Set((await runtimes()).keys());
  const hostBefore = await available();
  let runtimePeak = 0;
  let hostLow = hostBefore;
  let running = true;
  const loop = (async () => {
    while (running) {
      const now = await runtimes();
      const ours = [...now].filter(([name]) => !before.has(name)).reduce((a, [, b]) => a + b, 0);
      runtimePeak = Math.max(runtimePeak, ours);
      hostLow = Math.min(hostLow, await available());
      await new Promise((resolve) => setTimeout(resolve, 2_000));
    }
  })();
  return async () => {
    running = false;
    await loop;
    const mib = (bytes: number) => Math.round(bytes / 2 ** 20);
    return { runtimeMiB: mib(runtimePeak), hostMiB: mib(hostBefore - hostLow) };
  };
}
