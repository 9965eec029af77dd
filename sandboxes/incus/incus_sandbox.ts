/**
 * The production backend: Incus system containers, each a copy-on-write copy
 * of a seeded snapshot.
 *
 * Invariants:
 * - one base instance per image, pool and seed is created from the image,
 *   started once so the site seeds its database, stopped, and snapshotted as
 *   `seeded`; it never runs again, and every env is a copy of that snapshot
 *   (`source.type: copy`, `instance_only`), which on btrfs or ZFS shares every
 *   block it does not write;
 * - an env's sockets live in a host folder bind-mounted at `/run/ws` (a disk
 *   device), so the gateway reaches it with no network at all; the folder
 *   is the container root's alone, and the host dials each socket only once
 *   pinned outside it (see `_socket_directory.ts`);
 * - every env has memory, process and CPU limits (`limits`);
 * - every env carries `user.webserv.owner`, so a later run reaps the envs of a
 *   crashed one and leaves a running one's alone.
 *
 * Reset re-copies the snapshot into a new container, points the gateway at
 * it, and deletes the old container in the background (the origin stays the
 * same); `reset: "restore"` instead stops the container and restores a
 * snapshot taken at creation. The benchmark compares the two. A fork
 * (`Instance.fork()`) freezes the env's container while a snapshot of it is
 * cut, copies that snapshot copy-on-write into a new env container, starts
 * it and deletes the snapshot; the fork's reset re-copies the seeded base.
 *
 * @module
 */
import { SandboxError } from "../errors.ts";
import { type ContainerLimits, incusLimits } from "../_container_limits.ts";
import { logFailure } from "../../engine/log.ts";
import type { Gateway } from "../gateway.ts";
import type { Container } from "../_container_instance.ts";
import type { ContainerInstance } from "../_container_instance.ts";
import { ContainerLifecycle, type ListedContainer } from "../_container_sandbox.ts";
import type { InstanceSpec, Sandbox } from "../types.ts";
import { ownerIsGone } from "../_owner.ts";
import { IncusClient } from "./client.ts";
import { decodeInstances, type RootIds } from "./_decode.ts";
import {
  baseName,
  type ContainerSpec,
  createContainer,
  deleteInstance,
  exists,
  type OpenedImage,
  openOnImage,
  probeInstance,
  serialized,
} from "./_instances.ts";

/** Options of {@linkcode IncusSandbox.open}. */
export interface IncusSandboxOptions {
  /** The gateway the instances are reached through. */
  gateway: Gateway;
  /** The image alias, such as `"webserv-demo"` (see `deno task image`). */
  image: string;
  /** The storage pool; btrfs or ZFS for copy-on-write copies. */
  pool: string;
  /**
   * The Incus daemon.
   *
   * @default {a client of the local unix socket, closed by close()}
   */
  client?: IncusClient;
  /**
   * The Incus cluster member every instance of this backend is placed on
   * (`?target=`), for the client this backend makes; a given `client` carries
   * its own. Each member gets its own base instance: a copy onto another
   * member would be a full migration, not a copy-on-write clone.
   *
   * @default {none: the daemon chooses (on one host, the host)}
   */
  target?: string;
  /**
   * The prefix of every instance name this backend creates and reaps.
   *
   * @default {"ws-"}
   */
  prefix?: string;
  /**
   * The host folder holding each instance's socket folder.
   *
   * @default {"/run/webserv/incus"}
   */
  socketRoot?: string;
  /**
   * How reset brings back the seeded state.
   *
   * @default {"recopy"}
   */
  reset?: "recopy" | "restore";
  /**
   * Ready containers kept per seed, launched ahead so that `create()` and
   * `reset()` take one instead of waiting for a launch.
   *
   * @default {0}
   */
  spares?: number;
  /**
   * How long an env may take to answer after start, in milliseconds.
   *
   * @default {30_000}
   */
  readyTimeoutMs?: number;
  /**
   * How long the base instance may take to seed its database.
   *
   * @default {900_000}
   */
  seedTimeoutMs?: number;
  /**
   * What each env container may take: memory, processes and CPU (the bases
   * that seed the site once run without).
   *
   * @default {1 GiB, 1,024 processes and threads, 2 CPUs (`DEFAULT_LIMITS`)}
   */
  limits?: ContainerLimits;
  /** Extra instance config for every env; it wins over `limits`. */
  config?: Record<string, string>;
  /**
   * How the gateway reaches the site: `"unix"`, a socket in the bind-mounted
   * folder (fast); `"tcp"`, for images that only speak TCP: the site listens
   * on 127.0.0.1:8080 inside and an Incus proxy device bound to a free port
   * of the host's 127.0.0.1 forwards to it (about a second more per start).
   *
   * @default {"unix"}
   */
  siteTransport?: "unix" | "tcp";
  /**
   * Deletes the seeded bases this sandbox made itself when it lets go of
   * them: a seed's at `retire(seed)`, every one at `close()`. A base is kept
   * by default as a copy-on-write cache later runs share, but each holds its
   * seed's whole database: a run over many seeds of a real application (a
   * checker's 20 seeds of MediaWiki) would otherwise fill the pool. Bases
   * this sandbox found already made are left alone.
   *
   * @default {false}
   */
  removeBases?: boolean;
}

/** The port the site listens on inside a container, with `siteTransport: "tcp"`. */
const SITE_PORT = 8080;

/** A free TCP port on the host's 127.0.0.1, for a proxy device to listen on. */
function freeLoopbackPort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const { port } = listener.addr as Deno.NetAddr;
  listener.close();
  return port;
}

/**
 * Creates instances as copy-on-write Incus containers.
 *
 * @example Open the backend and create an env
 * ```ts ignore
 * import { Gateway } from "@webserv/webserv/sandboxes";
 * import { IncusSandbox } from "@webserv/webserv/sandboxes/incus";
 * await using gateway = new Gateway();
 * await using sandbox = await IncusSandbox.open({
 *   gateway,
 *   image: "webserv-demo",
 *   pool: "webserv-btrfs",
 * });
 * await using env = await sandbox.create({ seed: 1 });
 * console.log(env.origin);
 * ```
 */
export class IncusSandbox implements Sandbox {
  /** Always `"incus"`. */
  readonly kind = "incus";
  /** The Incus client in use. */
  readonly client: IncusClient;
  #options: IncusSandboxOptions;
  #opened: OpenedImage;
  #lifecycle: ContainerLifecycle;
  /** The bases this sandbox made, by seed (removed with `removeBases`). */
  #madeBases = new Map<number, string>();

  private constructor(options: IncusSandboxOptions, opened: OpenedImage) {
    this.#options = options;
    this.#opened = opened;
    this.client = opened.client;
    this.#lifecycle = new ContainerLifecycle("incus", {
      gateway: options.gateway,
      prefix: options.prefix ?? "ws-",
      socketRoot: options.socketRoot ?? "/run/webserv/incus",
      spares: options.spares ?? 0,
      restoreOnReset: options.reset === "restore",
    }, {
      launchOnce: (seed) => this.#launchOnce(seed),
      makeBase: (seed) => this.#makeBase(seed),
      probe: (name) => probeInstance(this.client, name),
      remove: (container) => this.#remove(container),
      listContainers: () => this.#listContainers(),
      // close() closes the client itself, after removing the bases it made.
      closeClient: () => {},
      restore: (container) => this.#restore(container),
      fork: (container) => this.#fork(container),
    });
  }

  /**
   * Connects to Incus, checks the image, and reaps what crashed runs left.
   *
   * @param options the gateway, image, pool and tuning
   * @returns the backend
   * @throws {DaemonUnavailableError} when Incus does not answer
   * @throws {SandboxError} when the image is missing
   */
  static open(options: IncusSandboxOptions): Promise<IncusSandbox> {
    try {
      incusLimits(options.limits);
    } catch (error) {
      return Promise.reject(error);
    }
    if (
      options.client !== undefined && options.target !== undefined &&
      options.client.target !== options.target
    ) {
      return Promise.reject(
        new TypeError(
          `Cannot place on "${options.target}": the given client places on "${options.client.target}"; set the target on the client`,
        ),
      );
    }
    const client = options.client ??
      new IncusClient(options.target === undefined ? {} : { target: options.target });
    return openOnImage(
      client,
      options.client === undefined,
      options.image,
      "deno task image",
      (opened) => new IncusSandbox(options, opened),
    );
  }

  /** How reset brings back the seeded state. */
  get resetMode(): "recopy" | "restore" {
    return this.#options.reset ?? "recopy";
  }

  /**
   * Creates an env: a container of the seeded site, started and answering.
   *
   * @param spec the seed
   * @returns the instance
   * @throws {SandboxError} when Incus refuses, with its message
   * @throws {SandboxTimeoutError} when the site does not answer in time
   */
  create(spec: InstanceSpec = {}): Promise<ContainerInstance> {
    return this.#lifecycle.create(spec);
  }

  /** How many spare containers are ready now. */
  get readySpares(): number {
    return this.#lifecycle.readySpares;
  }

  /** How many seeds hold spares or a known seeded base. */
  get seedsHeld(): number {
    return this.#lifecycle.seedsHeld;
  }

  /**
   * Removes a seed's spares and forgets its base (which stays on the daemon,
   * a copy-on-write cache).
   *
   * @param seed the seed
   */
  async retire(seed: number): Promise<void> {
    await this.#lifecycle.retire(seed);
    const base = this.#madeBases.get(seed);
    if (base === undefined || !this.#options.removeBases) return;
    // Copies of a base are independent on btrfs, but Incus may refuse to delete a ZFS origin
    // that a live env was cloned from: the base goes once no env of its seed lives.
    if (this.#lifecycle.seedsLive.has(seed)) return;
    this.#madeBases.delete(seed);
    await this.#remove(this.#lifecycle.containerNamed(base));
  }

  /**
   * Starts filling a seed's spares now, before its first `create()` (which
   * would start them otherwise); does nothing without `spares`.
   *
   * @param seed the seed
   */
  warm(seed: number): void {
    this.#lifecycle.warm(seed);
  }

  /** The names of the containers of the live envs. */
  get containerNames(): string[] {
    return this.#lifecycle.containerNames;
  }

  /**
   * Removes the envs whose owner process is gone (a crashed run), socket
   * folders with no container, and the base instances of images Incus no
   * longer has (rebuilt since: `deno task image` deletes the image it
   * replaces) that no instance was copied from.
   *
   * @returns the names removed
   */
  async reap(): Promise<string[]> {
    const removed = await this.#lifecycle.reap();
    removed.push(...await this.#pruneBases());
    return removed;
  }

  /**
   * Destroys every env, waits for background removals, removes the bases it
   * made (with `removeBases`), closes the client it made.
   */
  async close(): Promise<void> {
    try {
      await this.#lifecycle.close();
      if (this.#options.removeBases) {
        for (const [seed, base] of this.#madeBases) {
          this.#madeBases.delete(seed);
          await this.#remove(this.#lifecycle.containerNamed(base));
        }
      }
    } finally {
      if (this.#opened.ownsClient) this.client.close();
    }
  }

  /** Calls `close()`. */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  /**
   * Deletes stale bases. A base is named by its image's fingerprint, so each
   * image rebuild makes new ones; one whose image is gone can seed no new
   * env, and one no env was copied from is not reset from either.
   */
  async #pruneBases(): Promise<string[]> {
    const prefix = `${this.#lifecycle.settings.prefix}base-`;
    const [instances, images] = await Promise.all([
      this.client.listInstances(),
      this.client.imageFingerprints(),
    ]);
    const current = new Set(images);
    const copied = new Set(
      instances.filter((instance) => instance.config["user.webserv.role"] !== "base")
        .map((instance) => instance.config["volatile.base_image"]),
    );
    const removed: string[] = [];
    for (const { name, config } of instances) {
      const image = config["volatile.base_image"];
      if (
        !name.startsWith(prefix) || config["user.webserv.role"] !== "base" || !image ||
        current.has(image) || copied.has(image)
      ) continue;
      try {
        await this.#remove(this.#lifecycle.containerNamed(name));
        removed.push(name);
      } catch (error) {
        // Tidying up: a base that will not go now is tried again at the next open.
        logFailure(`removing the stale base "${name}"`, error);
      }
    }
    return removed;
  }

  async #listContainers(): Promise<ListedContainer[]> {
    return (await this.client.listInstances()).map((instance) => ({
      name: instance.name,
      owner: instance.config["user.webserv.owner"] ?? "",
      role: instance.config["user.webserv.role"] ?? "",
    }));
  }

  /** Launches a container: a copy of the seed's base. */
  async #launchOnce(seed: number): Promise<Container> {
    const base = await this.#lifecycle.base(seed);
    return await this.#launchFrom(async (spec) => {
      const root = await createContainer(this.client, {
        ...spec,
        source: { type: "copy", source: base, instance_only: true },
      });
      if (this.#options.reset === "restore") {
        await this.client.request(
          "POST",
          `/1.0/instances/${spec.name}/snapshots`,
          { json: { name: "pristine" } },
        );
      }
      return root;
    });
  }

  /**
   * Launches a container on a copy of a running one's data. Copying a
   * running container's live state needs CRIU; its data needs only a
   * snapshot, cut while the container is frozen (cgroup freezer: no process
   * of the site runs, so no write is half made; a transaction the freeze
   * caught mid-way is rolled back by the database when the copy opens it).
   * The snapshot is copy-on-write on btrfs or ZFS, copied the same way, and
   * deleted once copied.
   */
  async #fork(parent: Container): Promise<Container> {
    const snapshot = `fork-${crypto.randomUUID().slice(0, 8)}`;
    return await this.#launchFrom(async (spec) => {
      await this.#freezeWhile(
        parent.name,
        () =>
          this.client.request("POST", `/1.0/instances/${parent.name}/snapshots`, {
            json: { name: snapshot },
          }),
      );
      try {
        return await createContainer(this.client, {
          ...spec,
          source: { type: "copy", source: `${parent.name}/${snapshot}`, instance_only: true },
        });
      } finally {
        await this.client.request("DELETE", `/1.0/instances/${parent.name}/snapshots/${snapshot}`)
          .catch((error) => logFailure(`deleting the fork snapshot "${snapshot}"`, error));
      }
    });
  }

  /** Runs `task` while the instance is frozen, and thaws it whatever happens. */
  async #freezeWhile<T>(name: string, task: () => Promise<T>): Promise<T> {
    await this.client.request("PUT", `/1.0/instances/${name}/state`, {
      json: { action: "freeze", timeout: 30 },
    });
    try {
      return await task();
    } finally {
      await this.client.request("PUT", `/1.0/instances/${name}/state`, {
        json: { action: "unfreeze", timeout: 30 },
      });
    }
  }

  /**
   * Makes an env container with `create` (handed the name, config, socket
   * folder and devices every env has), gives it its socket folder, starts it
   * and waits until it answers; removes it on failure. Copies, starts and
   * stops go through one queue per process: Incus runs them one at a time
   * per storage pool anyway, and a queue of our own keeps each call's
   * deadline for its own work. (The start hooks that timed out under load,
   * once blamed on concurrency, were an idle pooled connection blocking
   * incusd's socket: see `IncusClient`.)
   */
  async #launchFrom(
    create: (spec: Omit<ContainerSpec, "source">) => Promise<RootIds>,
  ): Promise<Container> {
    const { name, directory } = this.#lifecycle.containerNamed(this.#lifecycle.newName());
    await directory.create();
    const tcp = this.#options.siteTransport === "tcp";
    const port = tcp ? freeLoopbackPort() : 0;
    const container: Container = tcp
      ? { name, directory, target: { port, hostname: "127.0.0.1" } }
      : { name, directory };
    try {
      await serialized(async () => {
        const root = await create({
          name,
          config: {
            ...incusLimits(this.#options.limits),
            ...this.#options.config,
            ...(tcp ? { "environment.WS_SITE_PORT": String(SITE_PORT) } : {}),
            "user.webserv.role": "env",
          },
          folder: directory.mounted,
          devices: tcp
            ? {
              site: {
                type: "proxy",
                bind: "host",
                listen: `tcp:127.0.0.1:${port}`,
                connect: `tcp:127.0.0.1:${SITE_PORT}`,
              },
            }
            : {},
        });
        await directory.own(root);
      });
      await this.#start(container);
      return container;
    } catch (error) {
      await this.#remove(container).catch((cause) =>
        logFailure(`removing the failed container "${container.name}"`, cause)
      );
      throw error;
    }
  }

  async #start(container: Container): Promise<void> {
    await container.directory.clear();
    await serialized(() => this.client.changeState(container.name, "start"));
    await container.directory.waitUntilReady({
      timeoutMs: this.#options.readyTimeoutMs ?? 30_000,
      probe: () => probeInstance(this.client, container.name),
      // Without a TCP target the gateway reaches the site through site.sock.
      site: container.target === undefined,
    });
  }

  async #restore(container: Container): Promise<void> {
    await serialized(async () => {
      await this.client.changeState(container.name, "stop", true);
      await this.client.request("PUT", `/1.0/instances/${container.name}`, {
        json: { restore: "pristine" },
      });
    });
    await this.#start(container);
  }

  async #makeBase(seed: number): Promise<string> {
    // On a cluster each member has its own base, named for it.
    const member = this.client.target === undefined
      ? ""
      : `-${this.client.target.replace(/[^a-zA-Z0-9]/g, "").slice(0, 12)}`;
    const name = baseName(
      this.#lifecycle.settings.prefix,
      this.#options.image,
      this.#options.pool,
      seed,
      this.#opened.fingerprint,
      member,
    );
    const snapshot = `${name}/seeded`;
    const timeoutMs = this.#options.seedTimeoutMs ?? 900_000;
    const deadline = performance.now() + timeoutMs;
    while (performance.now() < deadline) {
      if (await exists(this.client, `/1.0/instances/${name}/snapshots/seeded`)) {
        return snapshot;
      }
      // A base with no snapshot is being made by another run, or was left
      // half made by a run that died: wait for the first, take over the other.
      if (await exists(this.client, `/1.0/instances/${name}`)) {
        await this.#waitForOtherBase(name, deadline);
        continue;
      }
      const { directory } = this.#lifecycle.containerNamed(name);
      await directory.create();
      let root;
      try {
        root = await createContainer(this.client, {
          name,
          source: { type: "image", fingerprint: this.#opened.fingerprint },
          config: { "environment.WS_SEED": String(seed), "user.webserv.role": "base" },
          folder: directory.mounted,
          devices: { root: { type: "disk", path: "/", pool: this.#options.pool } },
        });
      } catch (error) {
        // Another run made the same name first. Incus refuses the copy in
        // its operation (a 500 naming a UNIQUE constraint), not with a 409,
        // so the instance's existence is what tells.
        if (
          !(error instanceof SandboxError) || !await exists(this.client, `/1.0/instances/${name}`)
        ) throw error;
        continue;
      }
      try {
        await directory.own(root);
        await this.#start({ name, directory });
        await this.client.changeState(name, "stop", true);
        await this.client.request("POST", `/1.0/instances/${name}/snapshots`, {
          json: { name: "seeded" },
        });
      } catch (error) {
        await this.#remove({ name, directory }).catch((cause) =>
          logFailure(`removing the failed base "${name}"`, cause)
        );
        throw error;
      }
      await directory.remove();
      directory[Symbol.dispose]();
      this.#madeBases.set(seed, name);
      return snapshot;
    }
    throw new SandboxError(
      `Incus base "${name}" was not seeded within ${timeoutMs} ms`,
    );
  }

  /**
   * Waits while another live run makes a base, until its snapshot exists or
   * the base is gone. A base whose maker is gone (killed half way, stopped or
   * still running, with no `seeded` snapshot) or that names no maker is
   * removed, so the caller makes it anew. A maker on another host is waited
   * for: that host's runs judge their own.
   */
  async #waitForOtherBase(name: string, deadline: number): Promise<void> {
    while (performance.now() < deadline) {
      if (await exists(this.client, `/1.0/instances/${name}/snapshots/seeded`)) return;
      let config: Record<string, string>;
      try {
        const metadata = await this.client.request("GET", `/1.0/instances/${name}`);
        config = decodeInstances([metadata])[0]?.config ?? {};
      } catch (error) {
        if (error instanceof SandboxError && error.status === 404) return;
        throw error;
      }
      const owner = config["user.webserv.owner"] ?? "";
      if (owner === "" || ownerIsGone(owner)) {
        await this.#remove(this.#lifecycle.containerNamed(name));
        return;
      }
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }

  /**
   * Stops and deletes a container and removes its socket folder, which goes
   * even when Incus cannot delete the container (its cluster member lost):
   * nothing on this host serves through it any more.
   */
  async #remove(container: Container): Promise<void> {
    try {
      await deleteInstance(this.client, container.name);
    } finally {
      await container.directory.remove();
      container.directory[Symbol.dispose]();
    }
  }
}
