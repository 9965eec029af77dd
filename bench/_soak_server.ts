/**
 * The soak's server process: the rollout server as `deno task serve` starts
 * it, plus an event-loop drift monitor inside the same process, so the
 * stall the soak reports is the server's own loop and nothing of the
 * benchmark's. It prints one JSON line to stdout when it listens and then
 * every 500 ms: the browser's pid (a new one after a kill), live sessions,
 * browser contexts, and the stalls seen since the last line. SIGTERM closes
 * the server as `deno task serve` does and prints a last line.
 *
 * Arguments: `--backend B --run-dir DIR --max-sessions N [--incus-prefix P] [--incus-pool P]`.
 *
 * @module
 */
import { parseArgs } from "node:util";
import { type Backend, startServer } from "../adapters/http/server.ts";
import { browserInternals } from "../engine/browser/browser.ts";

/** How often the monitor's timer is due, ms. */
export const TICK_MS = 5;

/**
 * One stall: when the loop was late (epoch ms at its end), by how much, and
 * how much of that time the main thread was on a CPU (10 ms ticks): near
 * the stall, code of ours held the loop; near 0, the machine did not
 * schedule the process.
 */
export interface Stall {
  /** Epoch ms when the late tick ran. */
  at: number;
  /** How late it ran, ms. */
  ms: number;
  /** The main thread's CPU time over the tick's interval, ms. */
  cpuMs: number;
}

/** The main thread's user and system CPU time so far, ms (Linux, 100 ticks/s). */
function threadCpuMs(): number {
  try {
    const stat = Deno.readTextFileSync("/proc/thread-self/stat");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return NaN;
  }
}

/** A status line of the server process. */
export interface ServerStatus {
  type: "listening" | "status" | "closed";
  /** Epoch ms. */
  t: number;
  url?: string;
  pid: number;
  browserPid: number | null;
  live: number;
  contexts: number;
  /** The containers of the live sessions' instances (container backends). */
  instances: string[];
  /** Stalls of 20 ms or more since the previous line. */
  stalls: Stall[];
  /** The longest lateness of any tick since the previous line, ms. */
  maxLateMs: number;
  /** Ticks since the previous line. */
  ticks: number;
  /** Unhandled rejections since start. */
  rejections: number;
}

let rejections = 0;
globalThis.addEventListener("unhandledrejection", (event) => {
  event.preventDefault();
  rejections++;
  console.error("Unhandled rejection:", event.reason);
});

const { values } = parseArgs({
  args: Deno.args,
  options: {
    backend: { type: "string", default: "fixture" },
    "run-dir": { type: "string" },
    "max-sessions": { type: "string", default: "16" },
    "seed-grace": { type: "string", default: "60" },
    "incus-prefix": { type: "string" },
    // The pool .ci/daemons.sh makes, as `deno task serve` uses it.
    "incus-pool": {
      type: "string",
      default: Deno.env.get("WEBSERV_INCUS_POOL") ?? "webserv-btrfs",
    },
  },
});

let stalls: Stall[] = [];
let maxLateMs = 0;
let ticks = 0;
let last = performance.now();
let lastCpu = threadCpuMs();
const monitor = setInterval(() => {
  const now = performance.now();
  const cpu = threadCpuMs();
  const late = now - last - TICK_MS;
  last = now;
  ticks++;
  if (late > maxLateMs) maxLateMs = late;
  if (late >= 20) {
    stalls.push({ at: Date.now(), ms: Math.round(late * 10) / 10, cpuMs: cpu - lastCpu });
  }
  lastCpu = cpu;
}, TICK_MS);

const server = await startServer({
  port: 0,
  backend: values.backend as Backend,
  maxSessions: Number(values["max-sessions"]),
  seedGraceMs: Number(values["seed-grace"]) * 1000,
  browserHandlesSignals: false,
  ...(values["run-dir"] ? { runDir: values["run-dir"] } : {}),
  ...(values["incus-prefix"] ? { incusPrefix: values["incus-prefix"] } : {}),
  incusPool: values["incus-pool"],
});

function status(type: ServerStatus["type"]): void {
  const line: ServerStatus = {
    type,
    t: Date.now(),
    ...(type === "listening" ? { url: server.url } : {}),
    pid: Deno.pid,
    browserPid: (server.browser ? browserInternals(server.browser).process?.pid : undefined) ??
      null,
    live: server.sessions.live,
    contexts: (server.browser ? browserInternals(server.browser).contexts.length : undefined) ?? 0,
    instances: server.sessions.list().flatMap((state) => {
      try {
        const instance = server.sessions.instance(state.id) as { containerName?: string };
        return instance?.containerName ? [instance.containerName] : [];
      } catch {
        return []; // Closed meanwhile.
      }
    }),
    stalls,
    maxLateMs: Math.round(maxLateMs * 10) / 10,
    ticks,
    rejections,
  };
  stalls = [];
  maxLateMs = 0;
  ticks = 0;
  console.log(JSON.stringify(line));
}

status("listening");
const reporter = setInterval(() => status("status"), 500);
let stopping = false;
Deno.addSignalListener("SIGTERM", async () => {
  if (stopping) return;
  stopping = true;
  clearInterval(reporter);
  await server.close();
  status("closed");
  clearInterval(monitor);
  Deno.exit(0);
});
