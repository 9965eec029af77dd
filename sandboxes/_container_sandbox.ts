/**
 * The lifecycle both container backends share, whatever their daemon: open
 * (check the image, reap what crashed runs left), create envs from spare or
 * fresh containers, one seeded base per seed, background removals, reap and
 * close. A backend holds one {@linkcode ContainerLifecycle}, hands it a
 * {@linkcode ContainerDaemon} (launch one container, seed a base, probe,
 * remove, list) and forwards its public methods to it; composition rather
 * than a base class, so the lifecycle stays out of the public types.
 *
 * @module
 */
import { join } from "node:path";
import { SandboxError } from "./errors.ts";
import type { Gateway } from "./gateway.ts";
import { type Container, type ContainerBackend, ContainerInstance } from "./_container_instance.ts";
import { ownerIsGone } from "./_owner.ts";
import { destroyAll, removeOrphanFolders, retryLaunchOnce } from "./_container_backend.ts";
import { SocketDirectory } from "./_socket_directory.ts";
import { Spares } from "./_spares.ts";
import type { InstanceSpec } from "./types.ts";

/** What the shared lifecycle needs from a backend's options. */
export interface ContainerSandboxSettings {
  /** The gateway the instances are reached through. */
  gateway: Gateway;
  /** The prefix of every container name the backend creates and reaps. */
  prefix: string;
  /** The host folder holding each container's socket folder. */
  socketRoot: string;
  /** Ready containers kept per seed. */
  spares: number;
  /** Whether reset restores a container in place instead of launching a new one. */
  restoreOnReset: boolean;
}

/** A container of this backend as its daemon lists it, with the labels reap reads. */
export interface ListedContainer {
  /** The container's name. */
  name: string;
  /** Its owner tag (see `_owner.ts`), or `""`. */
  owner: string;
  /** Its role: `"env"`, `"base"`… */
  role: string;
}

/** A daemon client the backend may own and close. */
interface Closable {
  close(): void;
}

/** What a backend does with its daemon; the lifecycle does the rest. */
export interface ContainerDaemon {
  /**
   * Launches one ready container of the seeded site; on failure it removes
   * what it made (the lifecycle retries once).
   */
  launchOnce(seed: number): Promise<Container>;
  /** Makes the seeded base of a seed; returns what `launchOnce` launches from. */
  makeBase(seed: number): Promise<string>;
  /** Throws InstanceGoneError when the container is not running. */
  probe(name: string): Promise<void>;
  /** Removes a container (a missing one is fine) and its socket folder. */
  remove(container: Container): Promise<void>;
  /** Every container of the daemon this backend may have made, with its labels. */
  listContainers(): Promise<ListedContainer[]>;
  /** Closes the daemon client, when the backend made it. */
  closeClient(): void;
  /** Restores a container to its seeded state in place (with `restoreOnReset`). */
  restore?(container: Container): Promise<void>;
  /**
   * Launches a ready container on a consistent copy of a running one's data
   * (its files and database as they are at the call); on failure it removes
   * what it made.
   */
  fork?(container: Container): Promise<Container>;
}

/**
 * Opens a backend: runs `open`, then reaps what crashed runs left; when
 * either fails, closes the client if the backend made it.
 *
 * @param client the daemon client
 * @param ownsClient whether the backend made the client (and so closes it)
 * @param open checks the daemon and the image and builds the backend
 * @returns the open backend
 */
export async function openContainerSandbox<S extends { reap(): Promise<string[]> }>(
  client: Closable,
  ownsClient: boolean,
  open: () => Promise<S>,
): Promise<S> {
  try {
    const sandbox = await open();
    await sandbox.reap();
    return sandbox;
  } catch (error) {
    if (ownsClient) client.close();
    throw error;
  }
}

/**
 * Runs `lookup`; a 404 from the daemon becomes a SandboxError that says how
 * to build the image.
 *
 * @param lookup finds the image
 * @param missing the message when there is none
 * @returns what `lookup` returned
 */
export async function findImage<T>(lookup: () => Promise<T>, missing: string): Promise<T> {
  try {
    return await lookup();
  } catch (error) {
    if (error instanceof SandboxError && error.status === 404) {
      throw new SandboxError(missing, {
        status: 404,
        daemonMessage: error.daemonMessage,
        cause: error,
      });
    }
    throw error;
  }
}

/** The shared lifecycle of a sandbox whose envs are containers of a daemon (Incus, Docker). */
export class ContainerLifecycle {
  /** The shared settings. */
  readonly settings: ContainerSandboxSettings;
  #kind: string;
  #daemon: ContainerDaemon;
  #bases = new Map<number, Promise<string>>();
  #instances = new Set<ContainerInstance>();
  #removals = new Set<Promise<void>>();
  #backend: ContainerBackend;
  #spares: Spares;

  /**
   * Sets up the shared lifecycle.
   *
   * @param kind the backend's name, such as `"incus"`, for messages
   * @param settings the gateway, names, folders and spares
   * @param daemon what talks to the daemon
   */
  constructor(kind: string, settings: ContainerSandboxSettings, daemon: ContainerDaemon) {
    this.#kind = kind;
    this.settings = settings;
    this.#daemon = daemon;
    this.#spares = new Spares({
      launch: (seed) => retryLaunchOnce(() => daemon.launchOnce(seed)),
      remove: (container) => daemon.remove(container),
      probe: (container) => daemon.probe(container.name),
    }, settings.spares);
    const restore = daemon.restore?.bind(daemon);
    this.#backend = {
      launch: (seed) => this.#spares.take(seed),
      remove: (container) => daemon.remove(container),
      removeLater: (container) => this.#removeLater(container),
      probe: (container) => daemon.probe(container.name),
      forget: (instance) => this.#instances.delete(instance),
      ...(settings.restoreOnReset && restore ? { restore } : {}),
    };
    const fork = daemon.fork?.bind(daemon);
    if (fork) {
      // A fork has none of its parent's snapshots, so its reset re-copies the seeded base.
      const { restore: _restore, ...recopy } = this.#backend;
      const forkBackend: ContainerBackend = recopy;
      const forkOf = async (container: Container, seed: number) => {
        const copy = await fork(container);
        const instance = new ContainerInstance(copy, seed, forkBackend, settings.gateway);
        this.#instances.add(instance);
        return instance;
      };
      forkBackend.fork = forkOf;
      this.#backend.fork = forkOf;
    }
  }

  /**
   * Creates an env: a container of the seeded site, started and answering.
   *
   * @param spec the seed
   * @returns the instance
   * @throws {SandboxError} when the daemon refuses, with its message
   * @throws {SandboxTimeoutError} when the site does not answer in time
   */
  async create(spec: InstanceSpec = {}): Promise<ContainerInstance> {
    const seed = spec.seed ?? 0;
    const container = await this.#spares.take(seed);
    const instance = new ContainerInstance(container, seed, this.#backend, this.settings.gateway);
    this.#instances.add(instance);
    return instance;
  }

  /** How many spare containers are ready now. */
  get readySpares(): number {
    return this.#spares.ready;
  }

  /**
   * Starts filling a seed's spares.
   *
   * @param seed the seed
   */
  warm(seed: number): void {
    this.#spares.prepare(seed);
  }

  /** How many seeds hold spares or a seeded base this lifecycle made or found. */
  get seedsHeld(): number {
    return new Set([...this.#bases.keys(), ...this.#spares.seeds]).size;
  }

  /**
   * Removes a seed's spares and forgets its base (made again, or found on
   * the daemon, at its next use). The base itself stays on the daemon: a
   * copy-on-write cache other runs share, kept on disk and reaped when its
   * image goes stale.
   *
   * @param seed the seed
   */
  async retire(seed: number): Promise<void> {
    this.#bases.delete(seed);
    await this.#spares.retire(seed);
  }

  /** The seeds of the live envs (a seed in it still needs its base). */
  get seedsLive(): ReadonlySet<number> {
    return new Set([...this.#instances].map((i) => i.seed));
  }

  /** The names of the containers of the live envs. */
  get containerNames(): string[] {
    return [...this.#instances].map((i) => i.containerName);
  }

  /**
   * Removes the envs whose owner process is gone (a crashed run), and socket
   * folders with no container.
   *
   * @returns the names removed
   */
  async reap(): Promise<string[]> {
    const removed: string[] = [];
    const live = new Set<string>();
    for (const { name, owner, role } of await this.#daemon.listContainers()) {
      if (!name.startsWith(this.settings.prefix)) continue;
      live.add(name);
      if (role === "env" && owner !== "" && ownerIsGone(owner)) {
        await this.#daemon.remove(this.containerNamed(name));
        live.delete(name);
        removed.push(name);
      }
    }
    removed.push(
      ...await removeOrphanFolders(this.settings.socketRoot, this.settings.prefix, live),
    );
    return removed;
  }

  /** Destroys every env, waits for background removals, closes the client it made. */
  async close(): Promise<void> {
    await destroyAll(this.#instances);
    await this.#spares.close();
    await Promise.all(this.#removals);
    this.#daemon.closeClient();
  }

  /**
   * The seeded base of a seed, made once (concurrent callers share it; a
   * failure is forgotten, so a later call tries again).
   *
   * @param seed the seed
   * @returns what `makeBase` returned: the image or snapshot to launch from
   */
  base(seed: number): Promise<string> {
    let base = this.#bases.get(seed);
    if (!base) {
      base = this.#daemon.makeBase(seed);
      base.catch(() => this.#bases.delete(seed));
      this.#bases.set(seed, base);
    }
    return base;
  }

  /**
   * A container of this backend by name, with its socket folder.
   *
   * @param name the container's name
   * @returns the container
   */
  containerNamed(name: string): Container {
    return { name, directory: new SocketDirectory(join(this.settings.socketRoot, name)) };
  }

  /**
   * A fresh random container name with the backend's prefix.
   *
   * @returns the name
   */
  newName(): string {
    const bytes = crypto.getRandomValues(new Uint8Array(8));
    return this.settings.prefix + Array.from(bytes, (b) => (b % 36).toString(36)).join("");
  }

  #removeLater(container: Container): Promise<void> {
    const removal = this.#daemon.remove(container).catch((error) =>
      // deno-lint-ignore no-console
      console.warn(
        `Could not remove ${this.#kind} container "${container.name}": ${String(error)}`,
      )
    ).finally(() => this.#removals.delete(removal));
    this.#removals.add(removal);
    return removal;
  }
}
