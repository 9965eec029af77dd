/**
 * `deno task serve`: starts the rollout server on 127.0.0.1 with one
 * Chromium and the fixture backend, on port 8800 or the next free one.
 *
 * Flags (and environment variables): `--port` (`WEBSERV_PORT`), `--host`
 * (`WEBSERV_HOST`), `--backend fixture|incus|docker|shared` (`WEBSERV_BACKEND`),
 * `--token` (`WEBSERV_TOKEN`, required off loopback), `--allowed-host NAME[,…]`
 * (`WEBSERV_ALLOWED_HOSTS`: names besides loopback ones the server answers
 * to, as `name` or `name:port`; a DNS-rebinding guard), `--max-sessions`
 * (`WEBSERV_MAX_SESSIONS`), `--max-seeds` (`WEBSERV_MAX_SEEDS`: seeds holding
 * state at once, default twice the session cap) and `--seed-grace` in seconds
 * (`WEBSERV_SEED_GRACE`: how long an idle seed keeps it, default 60),
 * `--browser ws://…` (`WEBSERV_BROWSER`), `--context-pool N`
 * (`WEBSERV_CONTEXT_POOL`: ready browser contexts kept for forks, default 2, 0 off),
 * `--run-dir` (`WEBSERV_RUN_DIR`, default `runs/<time>`; a parent of runs
 * records into a new run inside it, and `a,b` records into `a`: the
 * dashboard lists the other runs there too), `--idle-timeout`
 * and `--lifetime` in seconds; for the incus and shared backends
 * `--incus-pool` (`WEBSERV_INCUS_POOL`, default `webserv-btrfs`),
 * `--incus-socket` (`WEBSERV_INCUS_SOCKET`, a cluster member's socket) and
 * `--incus-prefix` (`WEBSERV_INCUS_PREFIX`, the instances' name prefix); for
 * the incus and docker backends `--spares N` (`WEBSERV_SPARES`: ready
 * containers per site and seed) and `--warm site/seed,…` (`WEBSERV_WARM`:
 * seeds whose spares fill at start). With a container backend the real
 * applications' tasks (`APPS` of the site registry, from their images) are
 * served beside the recreated sites'. The shared backend serves only the
 * applications with a shared runtime (`SHARED_RUNTIME_APPS`): one application runtime
 * per seed and a database server per session; there `--spares` is the database servers
 * started ahead per seed (default 2) and `--warm` starts a seed's runtime.
 * SIGINT and SIGTERM close every session, context, sandbox instance and the
 * browser before exiting; a signal that arrives while it closes is noted and
 * waits for the close (SIGKILL abandons it), one that arrives while it starts
 * closes it once started.
 *
 * @module
 */
import { parseArgs } from "node:util";
import { type Backend, BACKENDS, startServer } from "./server.ts";
import { BACKEND_REGISTRY } from "./backends.ts";
import { runDirectories } from "./_run_catalog.ts";
import { browserInternals } from "../../engine/mod.ts";

/** One line a registered backend, with what it serves. */
function backendLines(): string {
  return BACKEND_REGISTRY.names
    .map((name) => `  ${name} (${BACKEND_REGISTRY.get(name).summary})`)
    .join("\n");
}

const USAGE = `Usage: deno task serve [--port N] [--host ADDR] [--backend ${BACKENDS.join("|")}]
       [--token TOKEN] [--allowed-host NAME[:PORT]]... [--max-sessions N] [--max-seeds N]
       [--seed-grace SECONDS] [--browser ws://...] [--context-pool N] [--run-dir DIR[,DIR...]]
       [--idle-timeout SECONDS] [--lifetime SECONDS] [--incus-pool POOL]
       [--incus-socket PATH] [--incus-prefix PREFIX] [--spares N] [--warm SITE/SEED,...]

Backends:
${backendLines()}

Seeds: at most --max-seeds (default twice --max-sessions) hold state at once (a
template, spares, a runtime); a seed with no live session keeps it for
--seed-grace seconds (default 60), and past the cap the least recently used
idle seed is retired for a new one (429 seed-capacity when every seed is busy).`;

function fail(message: string): never {
  console.error(`${message}\n${USAGE}`);
  Deno.exit(2);
}

function integer(name: string, value: string | undefined): number | undefined {
  if (value === undefined || value === "") return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) {
    fail(`Option "${name}" must be a whole number, got "${value}"`);
  }
  return n;
}

// A long-running server must outlive a stray rejection in any part it runs:
// log it and go on (the sessions it hit report env_error on their next step).
globalThis.addEventListener("unhandledrejection", (event) => {
  event.preventDefault();
  console.error("Unhandled rejection:", event.reason);
});

async function main(): Promise<void> {
  let values;
  try {
    ({ values } = parseArgs({
      args: Deno.args,
      options: {
        port: { type: "string" },
        host: { type: "string" },
        backend: { type: "string" },
        token: { type: "string" },
        "allowed-host": { type: "string", multiple: true },
        "max-sessions": { type: "string" },
        "max-seeds": { type: "string" },
        "seed-grace": { type: "string" },
        browser: { type: "string" },
        "context-pool": { type: "string" },
        "run-dir": { type: "string" },
        "idle-timeout": { type: "string" },
        lifetime: { type: "string" },
        "incus-pool": { type: "string" },
        "incus-socket": { type: "string" },
        "incus-prefix": { type: "string" },
        spares: { type: "string" },
        warm: { type: "string" },
        help: { type: "boolean" },
      },
    }));
  } catch (error) {
    fail(error instanceof Error ? error.message : String(error));
  }
  if (values.help) {
    console.log(USAGE);
    return;
  }
  const env = (name: string) => Deno.env.get(name);
  const backend = values.backend ?? env("WEBSERV_BACKEND") ?? "fixture";
  if (!(BACKENDS as readonly string[]).includes(backend)) {
    fail(`Backend "${backend}" is not one of ${BACKENDS.map((b) => `"${b}"`).join(", ")}`);
  }
  const port = integer("port", values.port ?? env("WEBSERV_PORT"));
  const maxSessions = integer(
    "max-sessions",
    values["max-sessions"] ?? env("WEBSERV_MAX_SESSIONS"),
  );
  const contextPool = integer(
    "context-pool",
    values["context-pool"] ?? env("WEBSERV_CONTEXT_POOL"),
  );
  const maxSeeds = integer("max-seeds", values["max-seeds"] ?? env("WEBSERV_MAX_SEEDS"));
  if (maxSeeds === 0) fail('Option "max-seeds" must be at least 1');
  const seedGrace = integer("seed-grace", values["seed-grace"] ?? env("WEBSERV_SEED_GRACE"));
  const idle = integer("idle-timeout", values["idle-timeout"]);
  const lifetime = integer("lifetime", values.lifetime);
  const token = values.token ?? env("WEBSERV_TOKEN");
  const allowedHosts = (values["allowed-host"] ?? [env("WEBSERV_ALLOWED_HOSTS") ?? ""])
    .flatMap((hosts) => hosts.split(",")).map((host) => host.trim()).filter((host) => host !== "");
  const browserUrl = values.browser ?? env("WEBSERV_BROWSER");
  const spares = integer("spares", values.spares ?? env("WEBSERV_SPARES"));
  const warm = (values.warm ?? env("WEBSERV_WARM") ?? "").split(",").filter((w) => w !== "");
  // The shared backend starts 2 spare servers per seed unless told otherwise.
  if (warm.length > 0 && !spares && BACKEND_REGISTRY.get(backend).warmNeedsSpares !== false) {
    fail('Option "warm" needs "spares" above 0');
  }
  const incusSocket = values["incus-socket"] ?? env("WEBSERV_INCUS_SOCKET");
  const incusPrefix = values["incus-prefix"] ?? env("WEBSERV_INCUS_PREFIX");
  let runDir: string, runs: string[];
  try {
    ({ current: runDir, runs } = await runDirectories(
      values["run-dir"] ?? env("WEBSERV_RUN_DIR"),
      new Date(),
    ));
  } catch (error) {
    fail(error instanceof Error ? error.message : String(error));
  }
  // One orderly close, whatever signals follow the first: a second Ctrl-C
  // (or the copy `deno task` forwards of the terminal's) must not cut the
  // close short and leave sandboxes, shared runtimes or the browser running.
  // Handled from here on: a signal while the server starts closes it once
  // started (what it started is then known).
  let server: Awaited<ReturnType<typeof startServer>> | undefined;
  let closing = false;
  const close = async () => {
    try {
      await server?.close();
    } catch (error) {
      console.error(`Cannot close cleanly: ${error instanceof Error ? error.message : error}`);
      Deno.exit(1);
    }
    console.log("Closed");
    Deno.exit(0);
  };
  const stop = async (signal: string) => {
    if (closing) {
      console.log(`${signal}: already closing every session; waiting for it to finish`);
      return;
    }
    closing = true;
    if (!server) {
      console.log(`${signal}: closing as soon as the server has started…`);
      return; // main() closes it
    }
    console.log(`${signal}: closing every session…`);
    await close();
  };
  Deno.addSignalListener("SIGINT", () => stop("SIGINT"));
  Deno.addSignalListener("SIGTERM", () => stop("SIGTERM"));
  console.log(`Starting the rollout server (backend ${backend})…`);
  try {
    server = await startServer({
      hostname: values.host ?? env("WEBSERV_HOST") ?? "127.0.0.1",
      backend: backend as Backend,
      runDir,
      ...(runs.length > 0 ? { runs } : {}),
      browserHandlesSignals: false,
      ...(port !== undefined ? { port } : {}),
      ...(maxSessions !== undefined ? { maxSessions } : {}),
      ...(maxSeeds !== undefined ? { maxSeeds } : {}),
      ...(seedGrace !== undefined ? { seedGraceMs: seedGrace * 1000 } : {}),
      ...(idle !== undefined ? { idleTimeoutMs: idle * 1000 } : {}),
      ...(lifetime !== undefined ? { lifetimeMs: lifetime * 1000 } : {}),
      ...(token ? { token } : {}),
      ...(allowedHosts.length > 0 ? { allowedHosts } : {}),
      ...(browserUrl ? { browserUrl } : {}),
      ...(contextPool !== undefined ? { contextPool } : {}),
      // The pool .ci/daemons.sh makes (btrfs: copy-on-write copies).
      incusPool: values["incus-pool"] ?? env("WEBSERV_INCUS_POOL") ?? "webserv-btrfs",
      ...(incusSocket ? { incusSocket } : {}),
      ...(incusPrefix ? { incusPrefix } : {}),
      ...(spares !== undefined ? { spares } : {}),
      ...(warm.length > 0 ? { warm } : {}),
    });
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    if (error instanceof Error && error.name === "BrowserNotFoundError") {
      console.error(
        `${message}\nInstall Chromium with: sudo apt-get install -y chromium  (or set WEBSERV_CHROME)`,
      );
      Deno.exit(1);
    }
    console.error(`Cannot start the server: ${message}`);
    Deno.exit(1);
  }
  const suffix = token ? `?token=${encodeURIComponent(token)}` : "";
  console.log(`WebServ rollout server on ${server.url} (backend ${backend})`);
  console.log(`  dashboard  ${server.url}/${suffix}`);
  console.log(`  API docs   ${server.url}/docs${suffix}`);
  console.log(`  OpenAPI    ${server.url}/openapi.json`);
  const sandbox = server.browser ? browserInternals(server.browser).process?.sandbox : undefined;
  if (sandbox) {
    console.log(
      sandbox.sandboxed
        ? `  browser    sandboxed, as user ${sandbox.user}`
        : `  browser    without its sandbox: ${sandbox.reason}`,
    );
  }
  console.log(`  trajectories in ${runDir}`);
  if (closing) await close();
}

if (import.meta.main) await main();
