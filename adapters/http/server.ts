/**
 * The rollout server put together: one Chromium (launched, or reached at a
 * `ws://` endpoint, and started again when it dies), the gateway and the
 * sandbox backend, the sessions, the app, the WebSocket and the dashboard,
 * on one Hono server on loopback.
 *
 * @module
 */
import { Browser } from "../../mod.ts";
import { logFailure, settled } from "../../engine/log.ts";
import { FixtureSandbox, Gateway, type Sandbox, type Site } from "../../sandboxes/mod.ts";
import { IncusClient, IncusSandbox, SharedRuntimeSandbox } from "../../sandboxes/incus/mod.ts";
import { DockerSandbox } from "../../sandboxes/docker/mod.ts";
import { createApp } from "./app.ts";
import { HttpError } from "./http_error.ts";
import {
  APPS,
  KitWorkers,
  MAX_PROPOSALS,
  proposalStore,
  SHARED_RUNTIME_APPS,
  SITES,
} from "../../fixtures/sites/mod.ts";
import { type Catalog, defaultCatalog } from "./catalog.ts";
import { onlineMember } from "./_placement.ts";
import { mountDashboard } from "./dashboard.ts";
import { Metrics } from "./metrics.ts";
import { SessionManager } from "./sessions.ts";
import { TrajectoryLog } from "./trajectory.ts";
import { mountWebSocket } from "./websocket.ts";
import { ConnectionGuard } from "./_connection_guard.ts";
import { join } from "node:path";
import { retireSeed, SeedBook, seededSandbox } from "./_seeds.ts";

/**
 * The sandbox backends the server can use: `shared` is the real
 * applications' shared-runtime mode on Incus (one Apache/PHP per seed, a
 * `mariadbd` of its own per session; see `SharedRuntimeSandbox`).
 */
export type Backend = "fixture" | "incus" | "docker" | "shared";

/** Every {@linkcode Backend}, in the order `--help` lists them. */
export const BACKENDS: readonly Backend[] = Object.freeze(["fixture", "incus", "docker", "shared"]);

/** Options of {@linkcode startServer}. */
export interface ServerOptions extends ListenOptions {
  /**
   * @internal The sites and tasks (tests and tools bring their own).
   *
   * @default {defaultCatalog()}
   */
  catalog?: Catalog;
}

/** What an embedder sets of {@linkcode startServer}: where to listen, the backend and the limits. */
export interface ListenOptions {
  /**
   * The port; `0` picks any free one.
   *
   * @default {8800, or the next free port after it}
   */
  port?: number;
  /**
   * The address to listen on; anything but loopback needs `token`.
   *
   * @default {"127.0.0.1"}
   */
  hostname?: string;
  /**
   * The sandbox backend.
   *
   * @default {"fixture"}
   */
  backend?: Backend;
  /** The bearer token every request but `/health` must carry. */
  token?: string;
  /**
   * Names the server answers to besides loopback ones on its port, as
   * `name` or `name:port` (see `_guard.ts`): on loopback, a port forwarded
   * to it (`"localhost:9000"`); off loopback, the names clients use (any name
   * when none are given; the token guards it).
   *
   * @default {[]}
   */
  allowedHosts?: string[];
  /**
   * The cap on live sessions.
   *
   * @default {16}
   */
  maxSessions?: number;
  /**
   * The cap on seeds holding state at once (per site and placement target:
   * a template, spares, a running runtime). A new seed past it retires the
   * least recently used idle seed, or is refused with 429 `seed-capacity`
   * when every held seed has a live session.
   *
   * @default {twice maxSessions, and the warmed seeds: a session holds one
   *   seed, two while it resets onto another, so the seed cap refuses nothing
   *   the session cap admits}
   */
  maxSeeds?: number;
  /**
   * How long a seed with no live session keeps its state, in milliseconds,
   * so that the next episode on it starts warm.
   *
   * @default {60000}
   */
  seedGraceMs?: number;
  /**
   * The cap on placement targets with a backend of their own (incus): past
   * it, the backend of a target with no live session is closed for a new
   * one, or the new target is refused with 429 `too-many-targets`.
   *
   * @default {64}
   */
  maxTargets?: number;
  /**
   * How long a connection may take to send its first request head, in
   * milliseconds; `0` serves on `Deno.serve`'s own listener, with no
   * connection bounds at all (see `_connection_guard.ts`).
   *
   * @default {10000}
   */
  headerTimeoutMs?: number;
  /**
   * How long a connection may pass no byte either way before it is closed,
   * in milliseconds (longer than the longest silent call, an application's
   * env creation of up to 180 s).
   *
   * @default {300000}
   */
  connectionIdleTimeoutMs?: number;
  /**
   * The cap on open connections; one past it is closed at accept.
   *
   * @default {512}
   */
  maxConnections?: number;
  /**
   * The cap on task proposals kept (process-wide: the last server started
   * sets it); past it the oldest is retired.
   *
   * @default {1000}
   */
  maxProposals?: number;
  /**
   * How many task proposals one client (by its token; every client without
   * one is one client) may make in a minute; past it 429 with Retry-After.
   *
   * @default {30}
   */
  proposalsPerMinute?: number;
  /**
   * The cap on messages one WebSocket connection has queued (the running one
   * included); past it a message is refused with an error.
   *
   * @default {64}
   */
  wsMaxQueued?: number;
  /** A running browser's DevTools WebSocket URL; a browser is launched when absent. */
  browserUrl?: string;
  /**
   * Idle time after which a session is reaped, in milliseconds.
   *
   * @default {300000}
   */
  idleTimeoutMs?: number;
  /**
   * A session's hard lifetime, in milliseconds.
   *
   * @default {3600000}
   */
  lifetimeMs?: number;
  /**
   * The deadline of a step, reset or create, in milliseconds.
   *
   * @default {30000}
   */
  stepTimeoutMs?: number;
  /** Where trajectories go; none are written when absent. */
  runDir?: string;
  /**
   * The Incus storage pool, for the incus and shared backends.
   *
   * @default {"default"}
   */
  incusPool?: string;
  /**
   * The Incus daemon's unix socket, for the incus backend: on a cluster, any
   * member's (instances go to a session's `target`, or where Incus places them).
   *
   * @default {"/var/lib/incus/unix.socket"}
   */
  incusSocket?: string;
  /**
   * The prefix of every Incus instance the incus and shared backends create
   * and reap (the seeded bases included).
   *
   * @default {"ws-" on incus, "wsshared-" on shared}
   */
  incusPrefix?: string;
  /**
   * Ready containers kept per site and seed on the incus and docker
   * backends, launched ahead so that opening or resetting a session takes one
   * instead of waiting for a launch (the spares of a seed start filling when
   * its first session opens, or at start for the seeds in `warm`). On the
   * shared backend, the database servers each seed's runtime starts ahead.
   *
   * @default {0; 2 on shared}
   */
  spares?: number;
  /**
   * Sites and seeds whose spares are filled at start, such as
   * `["wordpress/3"]` (needs `spares`, but on shared, where it starts the
   * seed's runtime).
   *
   * @default {[]}
   */
  warm?: string[];
  /**
   * Whether the launched browser installs its own SIGINT/SIGTERM handlers;
   * `deno task serve` turns them off to shut down gracefully itself.
   *
   * @default {true}
   */
  browserHandlesSignals?: boolean;
}

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
  const hostname = options.hostname ?? "127.0.0.1";
  if (!LOOPBACK.test(hostname) && !options.token) {
    throw new RangeError(
      `Cannot listen on "${hostname}" without a bearer token: pass --token or WEBSERV_TOKEN`,
    );
  }
  const backend = options.backend ?? "fixture";
  if (!BACKENDS.includes(backend)) {
    throw new RangeError(
      `Unknown backend "${String(backend)}": the backends are ${quoted(BACKENDS)}`,
    );
  }
  const metrics = new Metrics();
  // Seeding, task generation and judging run here, off the event loop; a
  // worker starts when first needed, so a server that never seeds starts none.
  const workers = new KitWorkers();
  const catalog = options.catalog ?? catalogOf(backend, workers);
  const browsers = new BrowserHolder(options);
  const gateway = new Gateway();
  const sandboxes = new Map<string, Promise<Sandbox>>();
  // The same, once open: read by the metrics.
  const opened = new Map<string, Sandbox>();
  // Incus clients of the sandboxes and of placement, closed after the sandboxes.
  const incusClients: IncusClient[] = [];
  // The clients each placement target's backend was opened with, closed with it.
  const targetClients = new Map<string, IncusClient[]>();
  let placer: IncusClient | undefined;
  const incus = (): IncusClient => {
    if (!placer) {
      placer = new IncusClient(options.incusSocket ? { socket: options.incusSocket } : {});
      incusClients.push(placer);
    }
    return placer;
  };
  const seeds = new SeedBook({
    max: options.maxSeeds ?? 2 * (options.maxSessions ?? 16) + (options.warm?.length ?? 0),
    graceMs: options.seedGraceMs ?? 60_000,
  });
  async function keyedSandbox(site: Site, asked?: string): Promise<[string, Sandbox]> {
    // A lost member's sessions go to an online one (a reset recovers them).
    const target = asked === undefined ? undefined : await onlineMember(incus(), asked);
    // One backend per site and placement target, shared by its sessions.
    const key = target === undefined ? site.name : `${site.name}@${target}`;
    let sandbox = sandboxes.get(key);
    if (!sandbox && target !== undefined) {
      await makeRoomForTarget();
      sandbox = sandboxes.get(key);
    }
    if (!sandbox) {
      const clients: IncusClient[] = [];
      if (target !== undefined) targetClients.set(key, clients);
      const opening = openSandbox(backend, site, gateway, options, target, clients, workers);
      // Its clients were made before its first wait.
      incusClients.push(...clients);
      sandboxes.set(key, opening);
      opening.catch(() => {
        if (sandboxes.get(key) !== opening) return;
        sandboxes.delete(key);
        targetClients.delete(key);
      });
      sandbox = opening;
    }
    const open = await sandbox;
    if (sandboxes.get(key) === sandbox) opened.set(key, open);
    return [key, open];
  }
  // Closes the backend of a placement target with no live session when the targets fill the cap.
  async function makeRoomForTarget(): Promise<void> {
    const keys = [...targetClients.keys()];
    if (keys.length < (options.maxTargets ?? 64)) return;
    const idle = keys.find((key) => !seeds.busy(key));
    if (idle === undefined) {
      throw new HttpError(
        429,
        "too-many-targets",
        `Cannot place on another target: ${keys.length} placement targets have live sessions`,
        { "Retry-After": "5" },
      );
    }
    const pending = sandboxes.get(idle);
    const clients = targetClients.get(idle) ?? [];
    sandboxes.delete(idle);
    opened.delete(idle);
    targetClients.delete(idle);
    seeds.forget(idle);
    await pending?.then((s) => s.close()).catch((error) =>
      logFailure("close a target's sandbox", error)
    );
    for (const client of clients) {
      client.close();
      const at = incusClients.indexOf(client);
      if (at >= 0) incusClients.splice(at, 1);
    }
  }
  // A session's sandbox: its instances hold their seed until destroyed.
  async function sessionSandbox(site: Site, asked?: string): Promise<Sandbox> {
    const [key, sandbox] = await keyedSandbox(site, asked);
    return seededSandbox(sandbox, key, seeds);
  }
  // `site/seed`: open the site's backend and start filling that seed's spares.
  async function warm(entry: string): Promise<void> {
    const [name = "", seedText = ""] = entry.split("/");
    const site = catalog.sites.get(name);
    const seed = Number(seedText);
    if (!site || seedText === "" || !Number.isInteger(seed) || seed < 0) {
      throw new RangeError(
        `Cannot warm "${entry}": expected SITE/SEED with a site the ${backend} backend serves (${
          quoted([...catalog.sites.keys()])
        }), such as "wordpress/3"`,
      );
    }
    const [key, sandbox] = await keyedSandbox(site);
    await seeds.pin(`${key}/${seed}`, () => retireSeed(sandbox, seed));
    if ("warm" in sandbox && typeof sandbox.warm === "function") sandbox.warm(seed);
  }
  const trajectories = options.runDir ? await TrajectoryLog.open(options.runDir) : undefined;
  let selfOrigins: string[] = [];
  const sessions = new SessionManager({
    browser: () => browsers.get(),
    sandbox: sessionSandbox,
    placementTargets: backend === "incus",
    catalog,
    metrics,
    ...(trajectories ? { trajectories } : {}),
    ...(options.maxSessions !== undefined ? { maxSessions: options.maxSessions } : {}),
    ...(options.idleTimeoutMs !== undefined ? { idleTimeoutMs: options.idleTimeoutMs } : {}),
    ...(options.lifetimeMs !== undefined ? { lifetimeMs: options.lifetimeMs } : {}),
    ...(options.stepTimeoutMs !== undefined ? { stepTimeoutMs: options.stepTimeoutMs } : {}),
    blockedOrigins: () => selfOrigins,
  });
  try {
    await browsers.get();
  } catch (error) {
    await gateway.close();
    for (const client of incusClients) client.close();
    throw error;
  }
  // The port the listener got, once it listens (the host guard checks it).
  const bound: { port?: number } = {};
  metrics.gauge(
    "webserv_seeds",
    "Seeds held now (busy, idle in their grace, warmed).",
    () => seeds.held,
  );
  metrics.gauge(
    "webserv_seeds_retired_total",
    "Seeds whose state was retired.",
    () => seeds.retired,
    "counter",
  );
  proposalStore.max = options.maxProposals ?? MAX_PROPOSALS;
  metrics.gauge("webserv_proposals", "Task proposals kept.", () => proposalStore.size);
  metrics.gauge(
    "webserv_target_sandboxes",
    "Placement targets with a backend of their own.",
    () => targetClients.size,
  );
  metrics.gauge("webserv_seed_state", "Seeds whose state the sandboxes hold now.", () => {
    let held = 0;
    for (const sandbox of opened.values()) held += sandbox.seedsHeld ?? 0;
    return held;
  });
  const app = createApp({
    sessions,
    catalog,
    metrics,
    browserConnected: () => browsers.connected,
    ...(options.token ? { token: options.token } : {}),
    ...(options.proposalsPerMinute !== undefined
      ? { proposalsPerMinute: options.proposalsPerMinute }
      : {}),
    // DNS rebinding and cross-site requests: on loopback, only loopback names on our port.
    hosts: {
      loopback: LOOPBACK.test(hostname),
      port: () => bound.port,
      allowedHosts: options.allowedHosts ?? [],
    },
  });
  mountWebSocket(app, sessions, {
    metrics,
    ...(options.wsMaxQueued !== undefined ? { maxQueued: options.wsMaxQueued } : {}),
  });
  mountDashboard(app, sessions, trajectories);
  const server = await listen((request) => app.fetch(request), hostname, options.port, options);
  metrics.gauge("webserv_connections", "Client connections open now.", () => server.connections);
  metrics.gauge(
    "webserv_connections_cut_total",
    "Connections closed for a bound: a late request head, idle, past the cap.",
    () => server.cut,
    "counter",
  );
  const port = server.port;
  bound.port = port;
  const host = hostname.includes(":") ? `[${hostname}]` : hostname;
  selfOrigins = [`http://${host}:${port}`, `http://localhost:${port}`, `http://127.0.0.1:${port}`];
  let closing: Promise<void> | undefined;
  const close = (): Promise<void> =>
    closing ??= (async () => {
      await sessions.closeAll();
      seeds.close();
      workers.close();
      await server.shutdown().catch((error) => logFailure("stop the listener", error));
      for (const sandbox of sandboxes.values()) {
        await sandbox.then((s) => s.close()).catch((error) => logFailure("close a sandbox", error));
      }
      for (const client of incusClients) client.close();
      await gateway.close().catch((error) => logFailure("close the gateway", error));
      await browsers.close();
    })();
  try {
    for (const entry of options.warm ?? []) await warm(entry);
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
    async readySpares() {
      let ready = 0;
      for (const opening of sandboxes.values()) {
        const sandbox = await opening.catch(() => undefined);
        if (sandbox && "readySpares" in sandbox && typeof sandbox.readySpares === "number") {
          ready += sandbox.readySpares;
        }
      }
      return ready;
    },
    close,
    [Symbol.asyncDispose]: close,
  };
}

/** The server's listener: its port, its connections, and how to stop it. */
interface Listening {
  port: number;
  readonly connections: number;
  readonly cut: number;
  shutdown(): Promise<void>;
}

/** Listens on `port`, or on 8800 or the next free port after it. */
function bind<T>(port: number | undefined, open: (port: number) => T): T {
  if (port !== undefined) return open(port);
  for (let candidate = 8800; candidate < 8900; candidate++) {
    try {
      return open(candidate);
    } catch (error) {
      if (!(error instanceof Deno.errors.AddrInUse)) throw error;
    }
  }
  return open(0);
}

async function listen(
  handler: (request: Request) => Response | Promise<Response>,
  hostname: string,
  port: number | undefined,
  bounds: ServerOptions,
): Promise<Listening> {
  const headerTimeoutMs = bounds.headerTimeoutMs ?? 10_000;
  if (headerTimeoutMs === 0) {
    const server = bind(port, (p) => Deno.serve({ hostname, port: p, onListen() {} }, handler));
    return { port: server.addr.port, connections: 0, cut: 0, shutdown: () => server.shutdown() };
  }
  // Deno.serve has no header or idle timeout: the guard accepts and relays to it on a unix socket.
  const listener = bind(port, (p) => Deno.listen({ hostname, port: p }));
  const folder = await Deno.makeTempDir({ prefix: "webserv-http-" });
  const path = join(folder, "http.sock");
  const server = Deno.serve({ transport: "unix", path, onListen() {} }, handler);
  const guard = new ConnectionGuard(
    listener,
    () => Deno.connect({ transport: "unix", path }),
    {
      headerTimeoutMs,
      idleTimeoutMs: bounds.connectionIdleTimeoutMs ?? 300_000,
      maxConnections: bounds.maxConnections ?? 512,
    },
  );
  return {
    port: listener.addr.port,
    get connections() {
      return guard.open;
    },
    get cut() {
      return guard.cut;
    },
    async shutdown() {
      await guard.close();
      await server.shutdown();
      await Deno.remove(folder, { recursive: true }).catch(() => {});
    },
  };
}

/** How long a real application's env may take to answer (its base seeds within it). */
const APP_READY_TIMEOUT_MS = 180_000;

/** Names, quoted and joined: `"a", "b"`. */
function quoted(names: readonly string[]): string {
  return names.map((name) => `"${name}"`).join(", ");
}

/**
 * The sites a backend serves: the recreated sites and the demo in-process
 * and in containers, the real applications (which run only in their images)
 * in containers, and on shared only the applications with a shared runtime.
 */
function catalogOf(backend: Backend, workers: KitWorkers): Catalog {
  if (backend === "shared") {
    return defaultCatalog(SHARED_RUNTIME_APPS.map((name) => APPS[name]!), {
      demo: false,
      workers,
    });
  }
  return defaultCatalog([
    ...Object.values(SITES),
    ...(backend === "fixture" ? [] : Object.values(APPS)),
  ], { workers });
}

async function openSandbox(
  backend: Backend,
  site: Site,
  gateway: Gateway,
  options: ServerOptions,
  target: string | undefined,
  clients: IncusClient[],
  workers: KitWorkers,
): Promise<Sandbox> {
  const app = Object.hasOwn(APPS, site.name);
  const tuning = {
    ...(options.spares ? { spares: options.spares } : {}),
    ...(app ? { readyTimeoutMs: APP_READY_TIMEOUT_MS } : {}),
  };
  switch (backend) {
    case "fixture":
      return new FixtureSandbox(site, {
        gateway,
        // A shipped site is seeded in a worker; the demo's few rows here.
        ...(KitWorkers.serves(site)
          ? { seeder: (seed: number, path: string) => workers.seedFile(site.name, seed, path) }
          : {}),
      });
    case "incus": {
      // A placement target is the client's: new instances go to that member.
      const client = new IncusClient({
        ...(options.incusSocket ? { socket: options.incusSocket } : {}),
        ...(target === undefined ? {} : { target }),
      });
      clients.push(client);
      return await IncusSandbox.open({
        gateway,
        image: `webserv-${site.name}`,
        pool: options.incusPool ?? "default",
        client,
        ...(options.incusPrefix ? { prefix: options.incusPrefix } : {}),
        ...tuning,
      });
    }
    case "docker":
      return await DockerSandbox.open({ gateway, image: `webserv-${site.name}`, ...tuning });
    case "shared": {
      // The catalog holds these sites alone; a caller's own catalog may not.
      if (!SHARED_RUNTIME_APPS.includes(site.name)) {
        throw new HttpError(
          400,
          "no-shared-runtime",
          `Site "${site.name}" has no shared runtime: the shared backend serves ${
            quoted(SHARED_RUNTIME_APPS)
          }`,
        );
      }
      const client = new IncusClient(options.incusSocket ? { socket: options.incusSocket } : {});
      clients.push(client);
      return await SharedRuntimeSandbox.open({
        gateway,
        image: `webserv-${site.name}`,
        pool: options.incusPool ?? "default",
        client,
        ...(options.incusPrefix ? { prefix: options.incusPrefix } : {}),
        ...(options.spares !== undefined ? { spares: options.spares } : {}),
      });
    }
  }
}

/** One browser at a time; a dead one is replaced on the next use. */
class BrowserHolder {
  #options: ServerOptions;
  #browser: Browser | undefined;
  #starting: Promise<Browser> | undefined;
  #closed = false;

  constructor(options: ServerOptions) {
    this.#options = options;
  }

  get current(): Browser | undefined {
    return this.#browser;
  }

  get connected(): boolean {
    return this.#browser?.connected ?? false;
  }

  get(): Promise<Browser> {
    if (this.#closed) return Promise.reject(new Error("The server is shutting down"));
    const browser = this.#browser;
    if (browser?.connected) return Promise.resolve(browser);
    return this.#starting ??= this.#start().finally(() => this.#starting = undefined);
  }

  async close(): Promise<void> {
    this.#closed = true;
    if (this.#starting) await settled(this.#starting); // its failure was its callers'
    await this.#browser?.close().catch((error) => logFailure("close the browser", error));
  }

  async #start(): Promise<Browser> {
    const old = this.#browser;
    if (old) await old.close().catch((error) => logFailure("close the dead browser", error));
    const url = this.#options.browserUrl;
    const browser = url
      ? await Browser.connect(url)
      : await Browser.launch({ handleSignals: this.#options.browserHandlesSignals ?? true });
    this.#browser = browser;
    // Start the next browser as soon as this one dies, not on the next request.
    browser.on("disconnected", () => {
      if (this.#closed || this.#browser !== browser) return;
      this.get().catch((error) => logFailure("start a new browser", error));
    });
    return browser;
  }
}
