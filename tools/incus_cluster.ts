/**
 * A real two-member Incus cluster on this one machine, for the cluster test
 * and for trying placement by hand:
 *
 * ```sh
 * deno run --allow-all tools/incus_cluster.ts up     # two incusd, one cluster, the demo image
 * deno run --allow-all tools/incus_cluster.ts kill cl-m2
 * deno run --allow-all tools/incus_cluster.ts down   # removes everything "up" made
 * ```
 *
 * Each member is its own `incusd` with its own `INCUS_DIR`
 * (`/var/lib/<prefix>-incus/mN`: database, unix socket, certificates, logs)
 * and its own btrfs pool on a loop file, run in a network namespace of its
 * own (`<prefix>-mN`) joined to the other by a veth pair with addresses of
 * one /30 in 10.0.0.0/8 (`10.231.7.1` and `.2` by default). The namespaces
 * have no default route, so cluster traffic stays on the veth; every client
 * command that may dial a member runs inside a namespace too (dialled from
 * the host's namespace, such an address would leave by the host's route).
 * The daemons share the host's mount namespace, so the host folders the
 * sandboxes bind-mount into containers are the same for both. The host's own
 * incusd, its pools and its images are only read (the image is exported from
 * it) and never changed.
 *
 * Killing a member stands for losing its host: its incusd gets SIGKILL and
 * every process of its containers is killed through their cgroups, so its
 * sites stop answering, as they would with the machine gone.
 *
 * @module
 */
import { IncusClient } from "../sandboxes/incus/mod.ts";

/** Options of {@linkcode IncusCluster.start}. */
export interface IncusClusterOptions {
  /**
   * The prefix of every name made: namespaces, veth ends, folders, members.
   *
   * @default {"cl"}
   */
  prefix?: string;
  /**
   * The first three octets of the /30 the members' addresses are in (`.1`, `.2`).
   *
   * @default {"10.231.7"}
   */
  subnet?: string;
  /**
   * The host Incus image copied into the cluster (under the same alias).
   *
   * @default {"webserv-demo"}
   */
  image?: string;
  /**
   * The size of each member's btrfs loop file.
   *
   * @default {"3GiB"}
   */
  poolSize?: string;
  /**
   * The host daemon's socket, the image is exported from.
   *
   * @default {"/var/lib/incus/unix.socket"}
   */
  hostSocket?: string;
  /** Progress lines go here; none when absent. */
  log?: (line: string) => void;
}

/** One member of the cluster. */
export interface ClusterMember {
  /** The member's name in the cluster, such as `"cl-m1"` (the placement `target`). */
  name: string;
  /** Its network namespace, `ip netns` name. */
  netns: string;
  /** Its `INCUS_DIR`. */
  dir: string;
  /** Its unix socket. */
  socket: string;
  /** Its cluster address, `10.x.y.z:8443`. */
  address: string;
}

const INCUSD = "/usr/libexec/incus/incusd";
const MEMBERS = 2;

/** A cluster of two `incusd` on this machine; `close()` removes all of it. */
export class IncusCluster implements AsyncDisposable {
  /** The members, the bootstrap member first. */
  readonly members: readonly ClusterMember[];
  /** The storage pool every member has (btrfs, a loop file each). */
  readonly pool: string;
  /** The image alias in the cluster. */
  readonly image: string;
  #prefix: string;
  #root: string;
  #log: (line: string) => void;

  private constructor(prefix: string, subnet: string, image: string, log: (line: string) => void) {
    this.#prefix = prefix;
    this.#root = `/var/lib/${prefix}-incus`;
    this.pool = `${prefix}-pool`;
    this.image = image;
    this.#log = log;
    this.members = Array.from({ length: MEMBERS }, (_, i) => ({
      name: `${prefix}-m${i + 1}`,
      netns: `${prefix}-m${i + 1}`,
      dir: `${this.#root}/m${i + 1}`,
      socket: `${this.#root}/m${i + 1}/unix.socket`,
      address: `${subnet}.${i + 1}:8443`,
    }));
  }

  /**
   * Makes the namespaces and the veth pair, starts both daemons, bootstraps
   * the cluster on the first, joins the second with a join token, and copies
   * the image in. Leftovers of a crashed run with the same prefix are removed
   * first. Every wait is bounded.
   *
   * @param options names, addresses, image and pool size
   * @returns the running cluster
   * @throws {Error} when a step fails, with the command's output
   */
  static async start(options: IncusClusterOptions = {}): Promise<IncusCluster> {
    const prefix = options.prefix ?? "cl";
    if (!/^[a-z][a-z0-9]{0,5}$/.test(prefix)) {
      throw new TypeError(`Prefix "${prefix}" must be 1 to 6 lowercase letters or digits`);
    }
    const subnet = options.subnet ?? "10.231.7";
    if (!/^10\.\d{1,3}\.\d{1,3}$/.test(subnet)) {
      throw new TypeError(
        `Subnet "${subnet}" must be three octets in 10.0.0.0/8, such as "10.231.7"`,
      );
    }
    const cluster = new IncusCluster(
      prefix,
      subnet,
      options.image ?? "webserv-demo",
      options.log ?? (() => {}),
    );
    await cluster.#removeLeftovers();
    try {
      await cluster.#network();
      for (const member of cluster.members) await cluster.#startDaemon(member);
      await cluster.#bootstrap(options.poolSize ?? "3GiB");
      await cluster.#copyImage(options.hostSocket ?? "/var/lib/incus/unix.socket");
      return cluster;
    } catch (error) {
      await cluster.close();
      throw error;
    }
  }

  /**
   * The cluster a running `up` made, to kill a member of or remove: nothing
   * is started or checked.
   *
   * @param options the prefix and subnet `up` was given
   * @returns the cluster's handle
   */
  static attach(options: IncusClusterOptions = {}): IncusCluster {
    return new IncusCluster(
      options.prefix ?? "cl",
      options.subnet ?? "10.231.7",
      options.image ?? "webserv-demo",
      options.log ?? (() => {}),
    );
  }

  /**
   * A client of one member's unix socket (placing on `target` when given).
   *
   * @param member the member whose socket to use
   * @param target the member new instances go to
   * @returns the client; close it
   */
  client(member: ClusterMember, target?: string): IncusClient {
    return new IncusClient({
      socket: member.socket,
      ...(target === undefined ? {} : { target }),
    });
  }

  /**
   * Loses a member as if its machine went away: SIGKILL to its incusd and to
   * every process of its containers.
   *
   * @param name the member's name
   */
  async kill(name: string): Promise<void> {
    const member = this.#member(name);
    await killDaemon(member.dir);
    await killContainers(member.dir);
  }

  /**
   * Removes everything `start` made: containers, daemons, mounts, loop
   * devices, folders, namespaces and veth. Safe to call twice.
   */
  async close(): Promise<void> {
    for (const member of this.members) {
      await killDaemon(member.dir);
      await killContainers(member.dir);
    }
    await this.#unmountAndRemove();
    for (const member of this.members) {
      if (await exists(`/run/netns/${member.netns}`)) {
        await run(["ip", "netns", "delete", member.netns]);
      }
    }
  }

  /** Calls {@linkcode IncusCluster.close}. */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  #member(name: string): ClusterMember {
    const member = this.members.find((m) => m.name === name);
    if (!member) {
      throw new TypeError(
        `No member "${name}": the members are ${this.members.map((m) => `"${m.name}"`).join(", ")}`,
      );
    }
    return member;
  }

  async #removeLeftovers(): Promise<void> {
    if (await exists(this.#root)) {
      this.#log(`removing the leftovers of an earlier run in ${this.#root}`);
    }
    await this.close();
  }

  async #network(): Promise<void> {
    const [a, b] = this.members as [ClusterMember, ClusterMember];
    const veth = [`${this.#prefix}-v1`, `${this.#prefix}-v2`] as const;
    this.#log(
      `namespaces ${a.netns}, ${b.netns}; veth ${veth[0]} ${host(a)} <-> ${veth[1]} ${host(b)}`,
    );
    for (const member of this.members) await run(["ip", "netns", "add", member.netns]);
    await run(["ip", "link", "add", veth[0], "type", "veth", "peer", "name", veth[1]]);
    for (const [i, member] of [a, b].entries()) {
      const end = veth[i]!;
      await run(["ip", "link", "set", end, "netns", member.netns]);
      await run(["ip", "-n", member.netns, "addr", "add", `${host(member)}/30`, "dev", end]);
      await run(["ip", "-n", member.netns, "link", "set", "lo", "up"]);
      await run(["ip", "-n", member.netns, "link", "set", end, "up"]);
    }
  }

  async #startDaemon(member: ClusterMember): Promise<void> {
    await Deno.mkdir(member.dir, { recursive: true });
    // In a session of its own with its output in a file, so the daemon
    // outlives the process that started it (`up` exits). No proxy variables:
    // the namespace has no route out, and a proxy on the host's loopback
    // would be the namespace's own loopback, where cluster calls would go.
    const daemon = new Deno.Command("setsid", {
      args: [
        "sh",
        "-c",
        'exec nsenter --net="/run/netns/$NETNS" "$INCUSD" --group root >>"$LOG" 2>&1 </dev/null',
      ],
      env: {
        INCUS_DIR: member.dir,
        NETNS: member.netns,
        INCUSD,
        LOG: `${this.#root}/${member.name}.log`,
        PATH: Deno.env.get("PATH") ?? "/usr/sbin:/usr/bin:/sbin:/bin",
      },
      clearEnv: true,
      stdin: "null",
      stdout: "null",
      stderr: "null",
    }).spawn();
    daemon.unref();
    await this.#incus(member, ["admin", "waitready", "--timeout", "30"], 40_000);
    this.#log(`incusd of ${member.name} ready on ${member.socket}`);
  }

  async #bootstrap(poolSize: string): Promise<void> {
    const [first, second] = this.members as [ClusterMember, ClusterMember];
    await this.#incus(
      first,
      ["admin", "init", "--preseed"],
      120_000,
      [
        "config:",
        `  core.https_address: ${first.address}`,
        '  images.auto_update_interval: "0"',
        "storage_pools:",
        `- name: ${this.pool}`,
        "  driver: btrfs",
        "  config:",
        `    size: ${poolSize}`,
        "cluster:",
        `  server_name: ${first.name}`,
        "  enabled: true",
      ].join("\n"),
    );
    const token = (await this.#incus(first, ["cluster", "add", second.name, "--quiet"], 30_000))
      .trim();
    await this.#incus(
      second,
      ["admin", "init", "--preseed"],
      180_000,
      [
        "cluster:",
        "  enabled: true",
        `  server_name: ${second.name}`,
        `  server_address: ${second.address}`,
        `  cluster_address: ${first.address}`,
        `  cluster_token: ${token}`,
        "  member_config:",
        "  - entity: storage-pool",
        `    name: ${this.pool}`,
        "    key: size",
        `    value: ${poolSize}`,
      ].join("\n"),
    );
    // A member without heartbeat for 11 s (the least Incus takes; the
    // default is 20 s) is offline, and new instances go elsewhere. Set once
    // the cluster exists: the daemon drops the connection when a preseed
    // sets it before clustering is on.
    await this.#incus(first, ["config", "set", "cluster.offline_threshold", "11"], 30_000);
    this.#log(`cluster formed: ${this.members.map((m) => `${m.name} ${m.address}`).join(", ")}`);
  }

  async #copyImage(hostSocket: string): Promise<void> {
    using hostIncus = new IncusClient({ socket: hostSocket });
    const fingerprint = await hostIncus.imageFingerprint(this.image);
    const file = `${this.#root}/${this.image}.tar`;
    // Read from the host daemon (GET only), written to a file: a unified
    // tarball, as `deno task image` imports it.
    const exported = await new Deno.Command("curl", {
      args: [
        "-sf",
        "--max-time",
        "120",
        "--unix-socket",
        hostSocket,
        "-o",
        file,
        `http://localhost/1.0/images/${fingerprint}/export`,
      ],
    }).output();
    if (!exported.success) {
      throw new Error(`Exporting image "${this.image}" from the host's Incus failed`);
    }
    using incus = this.client(this.members[0]!);
    using tarball = await Deno.open(file);
    await incus.importImage(tarball.readable, this.image);
    await Deno.remove(file);
    this.#log(`image "${this.image}" (${fingerprint.slice(0, 12)}) imported into the cluster`);
  }

  /** Runs the incus client for a member, in its namespace. */
  async #incus(
    member: ClusterMember,
    args: string[],
    timeoutMs: number,
    stdin?: string,
  ): Promise<string> {
    return await run(["nsenter", `--net=/run/netns/${member.netns}`, "incus", ...args], {
      env: { INCUS_DIR: member.dir },
      timeoutMs,
      ...(stdin === undefined ? {} : { stdin }),
    });
  }

  async #unmountAndRemove(): Promise<void> {
    if (!(await exists(this.#root))) return;
    const mounts = (await Deno.readTextFile("/proc/self/mountinfo")).split("\n")
      .map((line) => line.split(" ")[4] ?? "")
      .filter((point) => point === this.#root || point.startsWith(`${this.#root}/`))
      // The deepest first.
      .sort((x, y) => y.length - x.length);
    for (const point of mounts) await run(["umount", "-l", point]);
    const loops = await run(["losetup", "-a"]);
    for (const line of loops.split("\n")) {
      const match = line.match(/^(\/dev\/loop\d+):.*\((.*)\)$/);
      if (match && match[2]!.startsWith(`${this.#root}/`)) await run(["losetup", "-d", match[1]!]);
    }
    await Deno.remove(this.#root, { recursive: true });
  }
}

function host(member: ClusterMember): string {
  return member.address.split(":")[0]!;
}

/** The pids of the incusd processes whose `INCUS_DIR` is `dir`. */
function daemonPids(dir: string): number[] {
  const pids: number[] = [];
  for (const entry of Deno.readDirSync("/proc")) {
    if (!/^\d+$/.test(entry.name)) continue;
    try {
      const exe = Deno.readLinkSync(`/proc/${entry.name}/exe`);
      if (!exe.startsWith(INCUSD)) continue;
      const environ = Deno.readTextFileSync(`/proc/${entry.name}/environ`).split("\0");
      if (environ.includes(`INCUS_DIR=${dir}`)) pids.push(Number(entry.name));
    } catch {
      // A process that ended while listed, or one we may not read: not ours.
    }
  }
  return pids;
}

/** SIGKILL to the daemon at `dir`, waiting (10 s at most) until it is gone. */
async function killDaemon(dir: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  for (let pids = daemonPids(dir); pids.length > 0; pids = daemonPids(dir)) {
    if (Date.now() > deadline) throw new Error(`incusd of ${dir} (pids ${pids}) outlived SIGKILL`);
    for (const pid of pids) killPid(pid);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

function killPid(pid: number): void {
  try {
    Deno.kill(pid, "SIGKILL");
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
  }
}

/**
 * Kills every process of the containers of the daemon at `dir`, and their
 * `[lxc monitor]`s, and removes their cgroups. The containers are the names
 * under `dir/containers`; cgroup v1 controllers and the v2 hierarchy are
 * both searched for `lxc.payload.NAME` and `lxc.monitor.NAME`.
 */
async function killContainers(dir: string): Promise<void> {
  const names: string[] = [];
  try {
    for (const entry of Deno.readDirSync(`${dir}/containers`)) names.push(entry.name);
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
  }
  for (const pid of procsWithCmdline(`[lxc monitor] ${dir}/containers`)) killPid(pid);
  if (names.length === 0) return;
  const cgroupDirs = cgroupHierarchies().flatMap((root) =>
    names.flatMap((name) => [`${root}/lxc.payload.${name}`, `${root}/lxc.monitor.${name}`])
  );
  const deadline = Date.now() + 20_000;
  for (;;) {
    let left = 0;
    for (const cgroup of cgroupDirs) {
      for (const pid of cgroupPids(cgroup)) {
        killPid(pid);
        left++;
      }
    }
    if (left === 0) break;
    if (Date.now() > deadline) {
      throw new Error(
        `The containers of ${dir} still have ${left} processes after 20 s of SIGKILL`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  // Child cgroups first (the deepest paths), then each container's own.
  for (const cgroup of cgroupDirs) await removeCgroup(cgroup);
}

/** Where container cgroups may be: the top (cgroup v2) and each v1 controller's (or `unified`). */
function cgroupHierarchies(): string[] {
  const roots = ["/sys/fs/cgroup"];
  for (const entry of Deno.readDirSync("/sys/fs/cgroup")) {
    if (entry.isDirectory && !entry.name.startsWith("lxc.")) {
      roots.push(`/sys/fs/cgroup/${entry.name}`);
    }
  }
  return roots;
}

function cgroupPids(cgroup: string): number[] {
  const pids: number[] = [];
  const walk = (path: string) => {
    try {
      for (const line of Deno.readTextFileSync(`${path}/cgroup.procs`).split("\n")) {
        if (line) pids.push(Number(line));
      }
      for (const entry of Deno.readDirSync(path)) {
        if (entry.isDirectory) walk(`${path}/${entry.name}`);
      }
    } catch (error) {
      if (!(error instanceof Deno.errors.NotFound)) throw error;
    }
  };
  walk(cgroup);
  return pids;
}

async function removeCgroup(path: string): Promise<void> {
  try {
    for (const entry of Deno.readDirSync(path)) {
      if (entry.isDirectory) await removeCgroup(`${path}/${entry.name}`);
    }
    await Deno.remove(path);
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
  }
}

function procsWithCmdline(start: string): number[] {
  const pids: number[] = [];
  for (const entry of Deno.readDirSync("/proc")) {
    if (!/^\d+$/.test(entry.name)) continue;
    try {
      const cmdline = Deno.readTextFileSync(`/proc/${entry.name}/cmdline`).replaceAll("\0", " ");
      if (cmdline.startsWith(start)) pids.push(Number(entry.name));
    } catch {
      // Ended while listed.
    }
  }
  return pids;
}

async function exists(path: string): Promise<boolean> {
  try {
    await Deno.lstat(path);
    return true;
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return false;
    throw error;
  }
}

/** Runs a command with a deadline; returns its stdout, throws with its output on failure. */
async function run(
  argv: string[],
  options: { env?: Record<string, string>; timeoutMs?: number; stdin?: string } = {},
): Promise<string> {
  const [command, ...args] = argv as [string, ...string[]];
  const child = new Deno.Command(command, {
    args,
    ...(options.env ? { env: options.env } : {}),
    stdin: options.stdin === undefined ? "null" : "piped",
    stdout: "piped",
    stderr: "piped",
    signal: AbortSignal.timeout(options.timeoutMs ?? 30_000),
  }).spawn();
  if (options.stdin !== undefined) {
    const writer = child.stdin.getWriter();
    await writer.write(new TextEncoder().encode(options.stdin));
    await writer.close();
  }
  const output = await child.output();
  const text = (bytes: Uint8Array) => new TextDecoder().decode(bytes);
  if (!output.success) {
    throw new Error(
      `"${argv.join(" ")}" failed (${output.signal ?? `exit ${output.code}`}): ${
        text(output.stderr).trim() || text(output.stdout).trim()
      }`,
    );
  }
  return text(output.stdout);
}

if (import.meta.main) {
  const [command, name] = Deno.args;
  const log = (line: string) => console.log(`[incus-cluster] ${line}`);
  if (command === "up") {
    const cluster = await IncusCluster.start({ log });
    for (const member of cluster.members) {
      log(`${member.name}: INCUS_DIR=${member.dir} (socket ${member.socket}), ${member.address}`);
    }
    log(`pool "${cluster.pool}", image "${cluster.image}"; "down" removes it all`);
    Deno.exit(0);
  } else if (command === "down" || (command === "kill" && name)) {
    // A cluster object for the same names: its methods find the processes by INCUS_DIR.
    const cluster = IncusCluster.attach({ log });
    if (command === "kill") await cluster.kill(name!);
    else await cluster.close();
  } else {
    console.error("Usage: deno run --allow-all tools/incus_cluster.ts up | down | kill MEMBER");
    Deno.exit(2);
  }
}
