/**
 * The soak's view of the machine: resource samples of the server and its
 * browser read from `/proc` (RSS, open file descriptors), directory sizes,
 * live containers; and the faults it injects from outside (kill the
 * browser, kill a renderer, kill a container or its database process).
 *
 * @module
 */
import { groupProcesses } from "./_proc.ts";

/** One resource sample. */
export interface Sample {
  /** Epoch ms. */
  t: number;
  /** Which point: `start` (idle, before load), `load`, `end` (idle, after every session closed). */
  phase: "start" | "load" | "end";
  serverRssMiB: number;
  browserRssMiB: number;
  serverFds: number;
  browserFds: number;
  browserProcesses: number;
  /** Sessions live, browser contexts open (the server's own count). */
  live: number;
  contexts: number;
  /** The server's session containers, bases aside (Incus only). */
  containers: number | null;
  runDirMiB: number;
  tmpDirMiB: number;
  /** 1-minute load average of the machine. */
  load1: number;
}

async function rssKiB(pid: number): Promise<number> {
  try {
    const status = await Deno.readTextFile(`/proc/${pid}/status`);
    return Number(status.match(/^VmRSS:\s+(\d+)/m)?.[1] ?? 0);
  } catch {
    return 0;
  }
}

async function fds(pid: number): Promise<number> {
  let n = 0;
  try {
    for await (const _ of Deno.readDir(`/proc/${pid}/fd`)) n++;
  } catch {
    return 0;
  }
  return n;
}

/**
 * The bytes under a directory (files only, symlinks not followed).
 *
 * @param dir the directory
 * @returns the sum of file sizes; 0 when it does not exist
 */
export async function dirBytes(dir: string): Promise<number> {
  let total = 0;
  try {
    for await (const entry of Deno.readDir(dir)) {
      const path = `${dir}/${entry.name}`;
      if (entry.isDirectory) total += await dirBytes(path);
      else if (entry.isFile) total += (await Deno.lstat(path).catch(() => ({ size: 0 }))).size;
    }
  } catch {
    // Gone meanwhile.
  }
  return total;
}

/**
 * The top-level entries of a directory with their sizes.
 *
 * @param dir the directory
 * @returns `[name, MiB]` pairs
 */
export async function entrySizes(dir: string): Promise<[string, number][]> {
  const out: [string, number][] = [];
  for await (const entry of Deno.readDir(dir)) {
    const path = `${dir}/${entry.name}`;
    const bytes = entry.isDirectory
      ? await dirBytes(path)
      : (await Deno.lstat(path).catch(() => ({ size: 0 }))).size;
    out.push([entry.name, Math.round(bytes / 1024 / 102.4) / 10]);
  }
  return out;
}

/** Runs a command; its stdout, or undefined when it could not run or failed. */
export async function run(cmd: string, args: string[]): Promise<string | undefined> {
  try {
    const out = await new Deno.Command(cmd, { args, stdout: "piped", stderr: "null" }).output();
    return out.success ? new TextDecoder().decode(out.stdout) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The Incus instances whose name starts with the soak server's own prefix
 * (other tests may run containers on the same daemon), the seeded bases
 * with them or not; undefined on the other backends (Docker's names carry
 * no prefix of the server's).
 */
export async function incusInstances(
  backend: string,
  prefix: string,
  bases: boolean,
): Promise<string[] | undefined> {
  if (backend !== "incus") return undefined;
  const out = await run("incus", ["list", "--format", "csv", "-c", "n"]);
  return out?.split("\n").map((l) => l.trim()).filter((name) =>
    name.startsWith(prefix) && (bases || !name.startsWith(`${prefix}base-`))
  );
}

/** What the sampler needs to know now. */
export interface Targets {
  serverPid: number;
  browserPid: number | null;
  live: number;
  contexts: number;
  backend: string;
  /** The Incus instances' name prefix of the soak's server. */
  prefix: string;
  runDir: string;
  tmpDir: string;
}

/**
 * Takes one resource sample.
 *
 * @param phase which point of the run
 * @param targets the processes and directories
 * @returns the sample
 */
export async function sample(phase: Sample["phase"], targets: Targets): Promise<Sample> {
  let browserKiB = 0;
  let browserFds = 0;
  let browserProcesses = 0;
  if (targets.browserPid) {
    for await (const { pid } of groupProcesses(targets.browserPid)) {
      browserKiB += await rssKiB(pid);
      browserFds += await fds(pid);
      browserProcesses++;
    }
  }
  const mib = (bytes: number) => Math.round(bytes / 1024 / 1024 * 10) / 10;
  const load = await Deno.readTextFile("/proc/loadavg").catch(() => "0");
  return {
    t: Date.now(),
    phase,
    serverRssMiB: Math.round(await rssKiB(targets.serverPid) / 1024),
    browserRssMiB: Math.round(browserKiB / 1024),
    serverFds: await fds(targets.serverPid),
    browserFds,
    browserProcesses,
    live: targets.live,
    contexts: targets.contexts,
    containers: (await incusInstances(targets.backend, targets.prefix, false))?.length ?? null,
    runDirMiB: mib(await dirBytes(targets.runDir)),
    tmpDirMiB: mib(await dirBytes(targets.tmpDir)),
    load1: Number(load.split(" ")[0]),
  };
}

/** A fault injected from outside. */
export interface Fault {
  /** Epoch ms. */
  at: number;
  kind: "kill-browser" | "kill-renderer" | "kill-container" | "kill-database";
  target: string;
  done: boolean;
}

/**
 * Injects one fault of the kind given.
 *
 * @param kind which fault
 * @param browserPid the server's browser now
 * @param backend the sandbox backend
 * @param instances the containers of the server's live sessions
 * @param pickIndex picks an index below n
 * @returns what was done
 */
export async function inject(
  kind: Fault["kind"],
  browserPid: number | null,
  backend: string,
  instances: string[],
  pickIndex: (n: number) => number,
): Promise<Fault> {
  const fault: Fault = { at: Date.now(), kind, target: "", done: false };
  const kill = (pid: number) => {
    try {
      Deno.kill(pid, "SIGKILL");
      return true;
    } catch {
      return false;
    }
  };
  // The launched pid may be a wrapper script (Debian's chromium-headless-shell
  // is one): the browser is the group's process without a `--type=`.
  const group: { pid: number; cmdline: string }[] = [];
  if (browserPid) {
    for await (const { pid } of groupProcesses(browserPid)) {
      const cmdline = await Deno.readTextFile(`/proc/${pid}/cmdline`).catch(() => "");
      group.push({ pid, cmdline: cmdline.replaceAll("\0", " ") });
    }
  }
  if (kind === "kill-browser") {
    const main = group.filter((p) =>
      /chrom|headless/.test(p.cmdline.split(" ")[0] ?? "") && !p.cmdline.includes("--type=") &&
      !p.cmdline.includes("crashpad")
    );
    const pids = main.map((p) => p.pid);
    fault.target = pids.length ? `browser pid ${pids.join(", ")}` : "no browser";
    fault.done = pids.length > 0 && pids.map(kill).every(Boolean);
  } else if (kind === "kill-renderer") {
    const renderers = group.filter((p) => p.cmdline.includes("--type=renderer")).map((p) => p.pid);
    const pid = renderers[pickIndex(renderers.length)];
    fault.target = pid ? `renderer pid ${pid} of ${renderers.length}` : "no renderer";
    fault.done = pid !== undefined && kill(pid);
  } else if (kind === "kill-container" || kind === "kill-database") {
    const names = instances;
    const name = names[pickIndex(names.length)];
    fault.target = name ?? "no container";
    if (name && kind === "kill-container") {
      const args = backend === "docker" ? ["kill", name] : ["stop", "--force", name];
      fault.done = (await run(backend, args)) !== undefined;
    } else if (name) {
      const exec = backend === "docker" ? ["exec", name] : ["exec", name, "--"];
      const script = "pkill -9 -x mariadbd || pkill -9 -x mysqld || pkill -9 -x postgres";
      fault.done = (await run(backend, [...exec, "sh", "-c", script])) !== undefined;
      if (!fault.done) fault.target += " (no database process in it)";
    }
  }
  return fault;
}
