/**
 * The rollout server put together: one Chromium (launched, or reached at a
 * `ws://` endpoint, and started again when it dies), the gateway and the
 * sandbox backend, the sessions, the app, the WebSocket and the dashboard,
 * on one Hono server on loopback.
 *
 * @module
 */
import type { Browser } from "../../mod.ts";
import { logFailure } from "../../engine/log.ts";
import { Gateway } from "../../sandboxes/mod.ts";
import { KitWorkers, MAX_PROPOSALS, proposalStore } from "../../fixtures/sites/kit/mod.ts";
import { createApp } from "./app.ts";
import { type Backend, BACKEND_REGISTRY } from "./backends.ts";
import { Metrics } from "./metrics.ts";
import { SessionManager, type SessionManagerOptions } from "./sessions.ts";
import { TrajectoryLog } from "./trajectory.ts";
import { BrowserHolder } from "./_browser_holder.ts";
import { listen, type Listening } from "./_listen.ts";
import { SandboxPool, type SandboxPoolOptions } from "./_sandbox_pool.ts";
import type { ServerOptions } from "./_server_options.ts";

export type { Backend } from "./backends.ts";
export type { ListenOptions, ServerOptions } from "./_server_options.ts";

/** Every {@linkcode Backend} registered, in the order `--help` lists them. */
export const BACKENDS: readonly Backend[] = Object.freeze(
  BACKEND_REGISTRY.names as readonly Backend[],
);

/** A running rollout server. */
export interface RolloutServer extends AsyncDisposable {
  /** The base URL, such as `http://127.0.0.1:8800`. */
  readonly url: string;
  /** The port it listens on. */
  readonly port: number;
  /** @internal The sessions, for tests and tools. */
  readonly sessions: SessionManager;
  /** @internal The current browser (changes when a dead one is replaced), for tests. */
  readonly browser: Browser | undefined;
  /** @internal How many spare containers are ready now, every site together. */
  readySpares(): Promise<number>;
  /** @internal Where trajectories go, when a run directory was given. */
  readonly trajectories: TrajectoryLog | undefined;
  /** Closes every session, context, sandbox instance, the browser and the listener. */
  close(): Promise<void>;
}

const LOOPBACK = /^(127\.\d+\.\d+\.\d+|::1|localhost)$/;

/**
 * Starts the rollout server.
 *
 * @param options where to listen, the backend, the limits
 * @returns the running server
 * @throws {RangeError} when binding off loopback without a token, when the
 *   backend is unknown, or when `warm` names a site the backend does not serve
 *
 * @example Start on a free port and stop
 * ```ts ignore
 * import { startServer } from "@webserv/webserv/server";
 * await using server = await startServer({ port: 0 });
 * console.log(server.url);
 * ```
 */
export async function startServer(options: ServerOptions = {}): Promise<RolloutServer> {
  const hostname = guardedHostname(options);
  const backend = BACKEND_REGISTRY.prepare(options.backend ?? "fixture", options);
  const metrics = new Metrics();
  // Seeding, task generation and judging run here, off the event loop; a
  // worker starts when first needed, so a server that never seeds starts none.
  const workers = new KitWorkers();
  const catalog = options.catalog ?? backend.definition.catalog(workers);
  const browsers = new BrowserHolder(options);
  const gateway = new Gateway();
  const pool = sandboxPool(options, { backend, gateway, workers });
  const trajectories = options.runDir ? await TrajectoryLog.open(options.runDir) : undefined;
  let selfOrigins: string[] = [];
  const sessions = new SessionManager({
    browser: () => browsers.get(),
    sandbox: (site, target) => pool.forSession(site, target),
    placementTargets: backend.definition.placementTargets ?? false,
    catalog,
    metrics,
    ...(trajectories ? { trajectories } : {}),
    ...sessionLimits(options),
    blockedOrigins: () => selfOrigins,
  });
  try {
    await browsers.get();
  } catch (error) {
    await gateway.close();
    pool.closeClients();
    throw error;
  }
  // The port the listener got, once it listens (the host guard checks it).
  const bound: { port?: number } = {};
  pool.measure(metrics);
  proposalStore.max = options.maxProposals ?? MAX_PROPOSALS;
  metrics.gauge("webserv_proposals", "Task proposals kept.", () => proposalStore.size);
  const app = createApp({
    sessions,
    catalog,
    metrics,
    browserConnected: () => browsers.connected,
    ...(options.token ? { token: options.token } : {}),
    ...(options.proposalsPerMinute !== undefined
      ? { proposalsPerMinute: options.proposalsPerMinute }
      : {}),
    ...(trajectories ? { trajectories } : {}),
    ...(options.runs ? { runs: options.runs } : {}),
    ...(options.wsMaxQueued !== undefined ? { wsMaxQueued: options.wsMaxQueued } : {}),
    // DNS rebinding and cross-site requests: on loopback, only loopback names on our port.
    hosts: {
      loopback: LOOPBACK.test(hostname),
      port: () => bound.port,
      allowedHosts: options.allowedHosts ?? [],
    },
  });
  const server = await listen((request) => app.fetch(request), hostname, options.port, options);
  measureConnections(metrics, server);
  const port = server.port;
  bound.port = port;
  const host = hostname.includes(":") ? `[${hostname}]` : hostname;
  selfOrigins = [`http://${host}:${port}`, `http://localhost:${port}`, `http://127.0.0.1:${port}`];
  const close = closer({ sessions, pool, workers, server, gateway, browsers });
  try {
    for (const entry of options.warm ?? []) await pool.warm(entry, catalog);
  } catch (error) {
    await close();
    throw error;
  }
  return {
    url: `http://${host}:${port}`,
    port,
    sessions,
    get browser() {
      return browsers.current;
    },
    trajectories,
    readySpares: () => pool.readySpares(),
    close,
    [Symbol.asyncDispose]: close,
  };
}

/** The sandbox pool of a server: its seed cap and grace, its target cap. */
function sandboxPool(
  options: ServerOptions,
  parts: Pick<SandboxPoolOptions, "backend" | "gateway" | "workers">,
): SandboxPool {
  return new SandboxPool({
    ...parts,
    seeds: {
      max: options.maxSeeds ?? 2 * (options.maxSessions ?? 16) + (options.warm?.length ?? 0),
      graceMs: options.seedGraceMs ?? 60_000,
    },
    ...(options.maxTargets !== undefined ? { maxTargets: options.maxTargets } : {}),
    ...(options.incusSocket ? { incusSocket: options.incusSocket } : {}),
  });
}

/** The session limits an embedder set; the manager's defaults for the rest. */
function sessionLimits(
  options: ServerOptions,
): Pick<SessionManagerOptions, "maxSessions" | "idleTimeoutMs" | "lifetimeMs" | "stepTimeoutMs"> {
  return {
    ...(options.maxSessions !== undefined ? { maxSessions: options.maxSessions } : {}),
    ...(options.idleTimeoutMs !== undefined ? { idleTimeoutMs: options.idleTimeoutMs } : {}),
    ...(options.lifetimeMs !== undefined ? { lifetimeMs: options.lifetimeMs } : {}),
    ...(options.stepTimeoutMs !== undefined ? { stepTimeoutMs: options.stepTimeoutMs } : {}),
  };
}

/** Reports the listener's connections on the metrics. */
function measureConnections(metrics: Metrics, server: Listening): void {
  metrics.gauge("webserv_connections", "Client connections open now.", () => server.connections);
  metrics.gauge(
    "webserv_connections_accepted_total",
    "Client connections accepted: a kept-alive client opens one for many requests.",
    () => server.accepted,
    "counter",
  );
  metrics.gauge(
    "webserv_connections_cut_total",
    "Connections closed for a bound: a late request head, idle, past the cap.",
    () => server.cut,
    "counter",
  );
}

/** Where to listen; off loopback only with a token. */
function guardedHostname(options: ServerOptions): string {
  const hostname = options.hostname ?? "127.0.0.1";
  if (!LOOPBACK.test(hostname) && !options.token) {
    throw new RangeError(
      `Cannot listen on "${hostname}" without a bearer token: pass --token or WEBSERV_TOKEN`,
    );
  }
  return hostname;
}

/**
 * The server's close, once whoever calls it: the sessions first (their
 * trajectories end), then the seeds, the workers, the listener, the
 * sandboxes, the gateway and the browser.
 */
function closer(parts: {
  sessions: SessionManager;
  pool: SandboxPool;
  workers: KitWorkers;
  server: Listening;
  gateway: Gateway;
  browsers: BrowserHolder;
}): () => Promise<void> {
  const { sessions, pool, workers, server, gateway, browsers } = parts;
  let closing: Promise<void> | undefined;
  return () =>
    closing ??= (async () => {
      await sessions.closeAll();
      pool.closeSeeds();
      workers.close();
      await server.shutdown().catch((error) => logFailure("stop the listener", error));
      await pool.close();
      await gateway.close().catch((error) => logFailure("close the gateway", error));
      await browsers.close();
    })();
}
