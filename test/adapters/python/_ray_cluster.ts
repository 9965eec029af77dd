// A real two-node Ray cluster on this machine: the head in the root network
// namespace, a worker in a network namespace made here (`ip netns`, a veth
// pair on 10.231.N.0/30), each node a `ray start --block` in a process group
// of its own. Traffic stays on the pair's two addresses and loopback. Disposal
// kills only what was started here (by process group and by the namespace's
// pids) and removes the namespace, with every wait bounded.
import { VENV } from "./_venv.ts";

/** A running cluster. */
export interface RayCluster extends AsyncDisposable {
  /** The head's GCS address, for `ray.init(address=...)`. */
  address: string;
  /** The head's and the worker's node addresses. */
  nodes: [string, string];
  /** A file the tests append server process-group ids to, killed on disposal. */
  pidsFile: string;
  /** A scratch directory (trajectories, logs), removed on disposal. */
  dir: string;
  /** The nodes' logs' tails, for failure messages. */
  logs(): Promise<string>;
}

const RAY_ENV = { RAY_USAGE_STATS_ENABLED: "0" };
const STARTED = "Ray runtime started.";

async function run(command: string, args: string[]): Promise<string> {
  const out = await new Deno.Command(command, { args, stdout: "piped", stderr: "piped" }).output();
  const text = new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
  if (!out.success) throw new Error(`${command} ${args.join(" ")} failed: ${text}`);
  return text;
}

function killGroup(pgid: number, signal: Deno.Signal): void {
  try {
    Deno.kill(-pgid, signal);
  } catch {
    // already gone
  }
}

function groupAlive(pgid: number): boolean {
  try {
    Deno.kill(-pgid, "SIGCONT"); // signal 0 is not offered; SIGCONT is harmless
    return true;
  } catch {
    return false;
  }
}

async function waitFor(check: () => Promise<boolean> | boolean, ms: number): Promise<boolean> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    if (await check()) return true;
    await new Promise((r) => setTimeout(r, 250));
  }
  return false;
}

function freePort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  return port;
}

/** One `ray start --block` in a new session (its pid is its process group's id), logging to `log`. */
function startNode(dir: string, log: string, prefix: string[], args: string[]): Deno.ChildProcess {
  return new Deno.Command("setsid", {
    args: ["sh", "-c", 'log="$1"; shift; exec "$@" >"$log" 2>&1', "sh", log, ...prefix, ...args],
    // Servers the nodes start write trajectories here unless told otherwise.
    env: { ...RAY_ENV, WEBSERV_RUN_DIR: `${dir}/runs` },
    stdin: "null",
    stdout: "null",
    stderr: "null",
  }).spawn();
}

/**
 * Starts the cluster; throws (after cleaning up) when a node does not start
 * within `startMs`.
 *
 * @param startMs how long each node may take to start
 */
export async function startRayCluster(startMs = 180_000): Promise<RayCluster> {
  if (Deno.uid() !== 0) {
    throw new Error("The Ray cluster test makes a network namespace: run it as root");
  }
  const ray = `${VENV}/bin/ray`;
  const taken = await run("ip", ["-br", "addr"]);
  let n = 1 + (Deno.pid % 250);
  while (taken.includes(`10.231.${n}.`)) n = 1 + (n % 250);
  const ns = `webserv-ray-${n}`;
  const [hostIf, nsIf] = [`wsrh${n}`, `wsrw${n}`];
  const nodes: [string, string] = [`10.231.${n}.1`, `10.231.${n}.2`];
  const dir = await Deno.makeTempDir({ prefix: "webserv-ray-" });
  const pidsFile = `${dir}/server-pids`;
  await Deno.writeTextFile(pidsFile, "");
  const children: Deno.ChildProcess[] = [];
  const logs = async () => {
    let text = "";
    for (const name of ["head.log", "worker.log"]) {
      const body = await Deno.readTextFile(`${dir}/${name}`).catch(() => "");
      text += `--- ${name}\n${body.split("\n").slice(-25).join("\n")}\n`;
    }
    return text;
  };
  const dispose = async () => {
    const pids = (await Deno.readTextFile(pidsFile).catch(() => "")).split("\n").filter(Boolean);
    for (const pid of pids) killGroup(Number(pid), "SIGKILL"); // servers the pool could not stop
    for (const child of children) killGroup(child.pid, "SIGTERM");
    await waitFor(() => children.every((c) => !groupAlive(c.pid)), 20_000);
    for (const child of children) killGroup(child.pid, "SIGKILL");
    await Promise.all(children.map((c) => c.status));
    const left = await run("ip", ["netns", "pids", ns]).catch(() => "");
    for (const pid of left.split("\n").filter(Boolean)) {
      try {
        Deno.kill(Number(pid), "SIGKILL");
      } catch {
        // exited meanwhile
      }
    }
    await run("ip", ["netns", "del", ns]).catch(() => ""); // takes the veth pair with it
    await run("ip", ["link", "del", hostIf]).catch(() => "");
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  };
  const cluster: RayCluster = {
    address: "",
    nodes,
    pidsFile,
    dir,
    logs,
    [Symbol.asyncDispose]: dispose,
  };
  try {
    await run("ip", ["netns", "add", ns]);
    await run("ip", ["link", "add", hostIf, "type", "veth", "peer", "name", nsIf]);
    await run("ip", ["link", "set", nsIf, "netns", ns]);
    await run("ip", ["addr", "add", `${nodes[0]}/30`, "dev", hostIf]);
    await run("ip", ["link", "set", hostIf, "up"]);
    await run("ip", ["-n", ns, "addr", "add", `${nodes[1]}/30`, "dev", nsIf]);
    await run("ip", ["-n", ns, "link", "set", nsIf, "up"]);
    await run("ip", ["-n", ns, "link", "set", "lo", "up"]);
    const port = freePort();
    cluster.address = `${nodes[0]}:${port}`;
    const common = [
      "start",
      "--block",
      "--num-cpus=1",
      "--object-store-memory=100000000",
      "--disable-usage-stats",
    ];
    children.push(startNode(dir, `${dir}/head.log`, [], [
      ray,
      ...common,
      "--head",
      `--node-ip-address=${nodes[0]}`,
      `--port=${port}`,
      "--include-dashboard=false",
      `--temp-dir=${dir}/ray`,
    ]));
    const started = (log: string) => async () =>
      (await Deno.readTextFile(`${dir}/${log}`).catch(() => "")).includes(STARTED);
    if (!await waitFor(started("head.log"), startMs)) {
      throw new Error(`The Ray head did not start within ${startMs} ms:\n${await logs()}`);
    }
    children.push(startNode(dir, `${dir}/worker.log`, ["ip", "netns", "exec", ns], [
      ray,
      ...common,
      `--address=${cluster.address}`,
      `--node-ip-address=${nodes[1]}`,
    ]));
    if (!await waitFor(started("worker.log"), startMs)) {
      throw new Error(`The Ray worker did not start within ${startMs} ms:\n${await logs()}`);
    }
    return cluster;
  } catch (error) {
    await dispose();
    throw error;
  }
}
