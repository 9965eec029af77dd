/**
 * The sandbox backends the server can run on, by name: each registration
 * says which sites the backend serves, whether sessions may name a
 * placement target, what it reads of the server's options, and how it opens
 * the sandbox of one site. The server looks a backend up here and nowhere
 * else, so adding one is one {@linkcode BackendRegistry.register} call.
 *
 * @module
 */
import { FixtureSandbox, type Gateway, type Sandbox, type Site } from "../../sandboxes/mod.ts";
import { IncusClient, IncusSandbox, SharedRuntimeSandbox } from "../../sandboxes/incus/mod.ts";
import { DockerSandbox } from "../../sandboxes/docker/mod.ts";
import { APPS, SHARED_RUNTIME_APPS, SITES } from "../../fixtures/sites/mod.ts";
import { KitWorkers } from "../../fixtures/sites/kit/mod.ts";
import { type Catalog, defaultCatalog } from "./catalog.ts";
import { HttpError } from "./http_error.ts";

/** The server's options a backend may read (the rest are the server's own). */
export interface BackendOptions {
  /** The Incus storage pool. */
  incusPool?: string;
  /** The Incus daemon's unix socket. */
  incusSocket?: string;
  /** The prefix of every Incus instance the backend creates and reaps. */
  incusPrefix?: string;
  /** Ready containers (or database servers) kept per site and seed. */
  spares?: number;
}

/** What a backend opens one site's sandbox with. */
export interface BackendContext {
  /** The gateway every instance is reached through. */
  readonly gateway: Gateway;
  /** The placement target the sandbox serves; `undefined` for anywhere. */
  readonly target: string | undefined;
  /**
   * The Incus clients the sandbox is opened with: the backend pushes each
   * one it makes before its first wait, and the server closes them with it.
   */
  readonly clients: IncusClient[];
  /** Seeding and task generation off the event loop. */
  readonly workers: KitWorkers;
}

/**
 * One backend: what it serves and how it opens a site's sandbox.
 *
 * @typeParam N the backend's name
 * @typeParam O its options, as {@linkcode BackendDefinition.options} parses them
 */
export interface BackendDefinition<N extends string = string, O = unknown> {
  /** The name `--backend` and `startServer({ backend })` take. */
  readonly name: N;
  /** One line for `--help`. */
  readonly summary: string;
  /**
   * Whether sessions may name a placement `target`.
   *
   * @default {false}
   */
  readonly placementTargets?: boolean;
  /**
   * Whether `warm` needs `spares` above 0 (it starts a seed's spares); not
   * when the backend warms something of its own.
   *
   * @default {true}
   */
  readonly warmNeedsSpares?: boolean;
  /** The sites it serves. */
  catalog(workers: KitWorkers): Catalog;
  /** Its options, read once from the server's; throws `RangeError` for bad ones. */
  options(from: BackendOptions): O;
  /** Opens the sandbox of one site. */
  open(site: Site, options: O, context: BackendContext): Promise<Sandbox>;
}

/** A registered backend with its options parsed, ready to open sandboxes. */
export interface OpenableBackend {
  /** The registration. */
  readonly definition: BackendDefinition;
  /** Opens one site's sandbox with the parsed options. */
  open(site: Site, context: BackendContext): Promise<Sandbox>;
}

/** Backends by name. */
export class BackendRegistry {
  #backends = new Map<string, BackendDefinition>();

  /**
   * Adds a backend.
   *
   * @param definition the backend
   * @returns this registry, for chaining
   * @throws {RangeError} when a backend of that name is registered already
   */
  register<N extends string, O>(definition: BackendDefinition<N, O>): this {
    if (this.#backends.has(definition.name)) {
      throw new RangeError(`Backend "${definition.name}" is registered already`);
    }
    this.#backends.set(definition.name, definition as BackendDefinition<string, unknown>);
    return this;
  }

  /** The registered names, in registration order. */
  get names(): readonly string[] {
    return [...this.#backends.keys()];
  }

  /**
   * The backend of a name.
   *
   * @param name the name
   * @returns its registration
   * @throws {RangeError} naming the registered backends, for an unknown name
   */
  get(name: string): BackendDefinition {
    const found = this.#backends.get(name);
    if (!found) {
      throw new RangeError(
        `Unknown backend "${String(name)}": the backends are ${quoted(this.names)}`,
      );
    }
    return found;
  }

  /**
   * The backend of a name with its options parsed.
   *
   * @param name the name
   * @param options the server's options
   * @returns the backend, ready to open sandboxes
   * @throws {RangeError} for an unknown name or bad options
   */
  prepare(name: string, options: BackendOptions): OpenableBackend {
    const definition = this.get(name);
    const parsed = definition.options(options);
    return { definition, open: (site, context) => definition.open(site, parsed, context) };
  }
}

/** How long a real application's env may take to answer (its base seeds within it). */
const APP_READY_TIMEOUT_MS = 180_000;

/** What the container backends share: the spares, and the applications' longer start. */
function containerTuning(site: Site, spares: number | undefined) {
  return {
    ...(spares ? { spares } : {}),
    ...(Object.hasOwn(APPS, site.name) ? { readyTimeoutMs: APP_READY_TIMEOUT_MS } : {}),
  };
}

/** The recreated sites and the demo, and in containers the real applications too. */
function sitesCatalog(withApps: boolean) {
  return (workers: KitWorkers): Catalog =>
    defaultCatalog([...Object.values(SITES), ...(withApps ? Object.values(APPS) : [])], {
      workers,
    });
}

interface IncusOptions {
  pool: string;
  socket: string | undefined;
  prefix: string | undefined;
  spares: number | undefined;
}

function incusOptions(from: BackendOptions): IncusOptions {
  return {
    pool: from.incusPool ?? "default",
    socket: from.incusSocket,
    prefix: from.incusPrefix,
    spares: from.spares,
  };
}

/** Sites served in-process by Hono, each seed's database a copy of a seeded template. */
const fixture: BackendDefinition<"fixture", Record<never, never>> = {
  name: "fixture",
  summary: "in-process, the default",
  catalog: sitesCatalog(false),
  options: () => ({}),
  open(site, _options, { gateway, workers }) {
    return Promise.resolve(
      new FixtureSandbox(site, {
        gateway,
        // A shipped site is seeded in a worker; the demo's few rows here.
        ...(KitWorkers.serves(site)
          ? { seeder: (seed: number, path: string) => workers.seedFile(site.name, seed, path) }
          : {}),
      }),
    );
  },
};

/** A copy-on-write Incus container per session. */
const incus: BackendDefinition<"incus", IncusOptions> = {
  name: "incus",
  summary: "a container per session",
  placementTargets: true,
  catalog: sitesCatalog(true),
  options: incusOptions,
  async open(site, options, { gateway, target, clients }) {
    // A placement target is the client's: new instances go to that member.
    const client = new IncusClient({
      ...(options.socket ? { socket: options.socket } : {}),
      ...(target === undefined ? {} : { target }),
    });
    clients.push(client);
    return await IncusSandbox.open({
      gateway,
      image: `webserv-${site.name}`,
      pool: options.pool,
      client,
      ...(options.prefix ? { prefix: options.prefix } : {}),
      ...containerTuning(site, options.spares),
    });
  },
};

/** A Docker container per session. */
const docker: BackendDefinition<"docker", { spares: number | undefined }> = {
  name: "docker",
  summary: "a container per session",
  catalog: sitesCatalog(true),
  options: (from) => ({ spares: from.spares }),
  async open(site, options, { gateway }) {
    return await DockerSandbox.open({
      gateway,
      image: `webserv-${site.name}`,
      ...containerTuning(site, options.spares),
    });
  },
};

/**
 * The real applications' shared-runtime mode on Incus: one Apache/PHP per
 * seed, a `mariadbd` of its own per session (see `SharedRuntimeSandbox`).
 */
const shared: BackendDefinition<"shared", IncusOptions> = {
  name: "shared",
  summary: `${
    SHARED_RUNTIME_APPS.join(", ")
  } only: one application runtime per seed, a database server of its own per session; --spares is the servers started ahead per seed, default 2, and --warm starts a seed's runtime`,
  // The runtime's spare database servers start with the seed.
  warmNeedsSpares: false,
  catalog: (workers) =>
    defaultCatalog(SHARED_RUNTIME_APPS.map((name) => APPS[name]!), { demo: false, workers }),
  options: incusOptions,
  async open(site, options, { gateway, clients }) {
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
    const client = new IncusClient(options.socket ? { socket: options.socket } : {});
    clients.push(client);
    return await SharedRuntimeSandbox.open({
      gateway,
      image: `webserv-${site.name}`,
      pool: options.pool,
      client,
      ...(options.prefix ? { prefix: options.prefix } : {}),
      ...(options.spares !== undefined ? { spares: options.spares } : {}),
    });
  },
};

/**
 * A backend shipped with the server: `shared` is the real applications'
 * shared-runtime mode on Incus.
 */
export type Backend = "fixture" | "incus" | "docker" | "shared";

/** The backends shipped, in the order `--help` lists them. */
const BUILT_IN = [fixture, incus, docker, shared] as const satisfies readonly { name: Backend }[];

/** The server's backends: the shipped ones, registered here. */
export const BACKEND_REGISTRY: BackendRegistry = BUILT_IN.reduce<BackendRegistry>(
  (registry, backend) => registry.register<string, unknown>(backend as BackendDefinition),
  new BackendRegistry(),
);

/** Names, quoted and joined: `"a", "b"`. */
export function quoted(names: readonly string[]): string {
  return names.map((name) => `"${name}"`).join(", ");
}
