/**
 * The shared-runtime mode of a real application (CUA-Sandbox, arXiv
 * 2609.32750): one Incus container per seed runs the application's runtime
 * (Apache/PHP) for every env, and each env owns only its mutable state, a
 * `mariadbd` on a `cp --reflink=always` copy of the seeded, cleanly stopped
 * datadir, started ahead as spares (see `fixtures/sites/kit/shared_runtime.ts`,
 * the runtime's control inside the container).
 *
 * Invariants:
 * - each env has its own origin through the gateway and its own folder in
 *   the runtime's bind-mounted `/run/ws`: `env-KEY/site.sock`, a relay that
 *   names the env in `x-webserv-env` (replacing any header the client sent),
 *   from which the application picks the env's database, and
 *   `env-KEY/state.sock`, the state API over that env's database alone;
 * - the runtime's host folder (`SOCKET_ROOT/NAME`, root's) holds its
 *   `/run/ws` as `ws/`, its root's alone (no other user of the runtime, such
 *   as Apache's www-data, can plant a socket or rename an env's folder), and
 *   the host's pins: `control.sock` and `env-KEY/{site,state}.sock`, each
 *   checked to be the runtime root's socket before it is ever dialled (see
 *   `_socket_directory.ts`); a tampered one is a `SocketTamperedError`;
 * - the runtime container has a process limit (`limits`);
 * - one seeded base per image, pool and seed (`PREFIXbase-APP-SEED-…-shared`,
 *   named apart from a container backend's; snapshot `seeded`) is made once
 *   and kept, so a later open copies it by copy-on-write instead of seeding
 *   again;
 * - the runtime container carries `user.webserv.owner`, so a later open
 *   reaps the runtimes of a crashed run;
 * - a new env is handed out only once its relay reaches the runtime's web
 *   server; a runtime whose web server stays silent is retired (its envs
 *   stay until destroyed, `close()` removes it) and the seed's next envs get
 *   a new one. An env's `check()` covers both its database and that web
 *   server, and its `reset()` fails when the web server is gone.
 *
 * Reset points the env at a fresh copy (a spare when there is one) and kills
 * the old server; the origin and the state socket stay. Needs an image whose
 * init knows `WS_SHARED=1` (a real application's whose registry entry has
 * `sharedRuntime`, from `deno task image:apps`).
 *
 * @module
 */
import { join } from "node:path";
import { logFailure } from "../../engine/log.ts";
import { SandboxError, SocketTamperedError } from "../errors.ts";
import { type ContainerLimits, incusLimits, SHARED_RUNTIME_LIMITS } from "../_container_limits.ts";
import { type Owner, SocketDirectory } from "../_socket_directory.ts";
import type { Gateway } from "../gateway.ts";
import { ownerIsGone } from "../_owner.ts";
import type { InstanceForkOptions, InstanceSpec, Sandbox } from "../types.ts";
import { IncusClient } from "./client.ts";
import {
  baseName,
  createContainer,
  exists,
  type OpenedImage,
  openOnImage,
  probeInstance,
} from "./_instances.ts";
import {
  decodeControlAnswer,
  decodeHealth,
  randomKey,
  Runtime,
  type RuntimeHealth,
} from "./_shared_runtime_control.ts";
import { SharedRuntimeInstance } from "./_shared_runtime_instance.ts";

export type {
  ForkPath,
  ForkRecord,
  RuntimeHealth,
  ServerSource,
} from "./_shared_runtime_control.ts";
export { SharedRuntimeInstance } from "./_shared_runtime_instance.ts";

/** Appended to the name of a shared runtime's seeded base (see `baseName`). */
export const SHARED_BASE = "-shared";

/** Options of {@linkcode SharedRuntimeSandbox.open}. */
export interface SharedRuntimeSandboxOptions {
  /** The gateway the envs are reached through. */
  gateway: Gateway;
  /** The image alias, such as `"webserv-wordpress"` (see `deno task image:apps`). */
  image: string;
  /** The storage pool: btrfs (or XFS) for reflinked copies. */
  pool: string;
  /**
   * The Incus daemon.
   *
   * @default {a client of the local unix socket, closed by close()}
   */
  client?: IncusClient;
  /**
   * The prefix of every instance name this backend creates and reaps.
   *
   * @default {"wsshared-"}
   */
  prefix?: string;
  /**
   * The host folder holding each runtime's socket folder.
   *
   * @default {"/run/webserv/shared"}
   */
  socketRoot?: string;
  /**
   * Database servers each runtime starts ahead, so that `create()` and
   * `reset()` take one instead of starting one.
   *
   * @default {2}
   */
  spares?: number;
  /**
   * How long a runtime may take to start (and its base to seed).
   *
   * @default {900_000}
   */
  readyTimeoutMs?: number;
  /**
   * How long one env's creation or reset may take.
   *
   * @default {60_000}
   */
  envTimeoutMs?: number;
  /**
   * What each runtime container may take (the base that seeds the
   * application once runs without). A runtime serves every env of its seed,
   * so its memory and CPU grow with them and are not limited unless set here.
   *
   * @default {32,768 processes and threads; no memory or CPU limit (`SHARED_RUNTIME_LIMITS`)}
   */
  limits?: ContainerLimits;
  /**
   * Deletes the seeded bases this sandbox made itself at `close()`. A base
   * is kept by default as a copy-on-write cache later runs share, but each
   * holds its seed's whole database: a run over many seeds of a real
   * application (a checker's 20 seeds of MediaWiki) would otherwise fill the
   * pool. Bases this sandbox found already made are left alone.
   *
   * @default {false}
   */
  removeBases?: boolean;
}

/**
 * Creates envs that share one application runtime, each with a private
 * database branch.
 *
 * @example Open the mode and create an env
 * ```ts ignore
 * import { Gateway } from "@webserv/webserv/sandboxes";
 * import { SharedRuntimeSandbox } from "@webserv/webserv/sandboxes/incus";
 * await using gateway = new Gateway();
 * await using sandbox = await SharedRuntimeSandbox.open({
 *   gateway,
 *   image: "webserv-wordpress",
 *   pool: "webserv-btrfs",
 * });
 * await using env = await sandbox.create({ seed: 1 });
 * console.log(env.origin);
 * ```
 */
export class SharedRuntimeSandbox implements Sandbox {
  /** Always `"incus-shared"`. */
  readonly kind = "incus-shared";
  /** The Incus client in use. */
  readonly client: IncusClient;
  #options: SharedRuntimeSandboxOptions;
  #opened: OpenedImage;
  #runtimes = new Map<number, Promise<Runtime>>();
  /** Runtimes replaced after their web server died, removed by close(). */
  #retired: Runtime[] = [];
  #instances = new Set<SharedRuntimeInstance>();
  /** The bases this sandbox seeded itself (removed at close() with `removeBases`). */
  #madeBases = new Set<string>();

  private constructor(options: SharedRuntimeSandboxOptions, opened: OpenedImage) {
    this.#options = options;
    this.#opened = opened;
    this.client = opened.client;
  }

  /**
   * Connects to Incus, checks the image, and reaps the runtimes of crashed runs.
   *
   * @param options the gateway, image, pool and tuning
   * @returns the backend
   * @throws {DaemonUnavailableError} when Incus does not answer
   * @throws {SandboxError} when the image is missing
   */
  static open(options: SharedRuntimeSandboxOptions): Promise<SharedRuntimeSandbox> {
    try {
      incusLimits(options.limits, SHARED_RUNTIME_LIMITS);
    } catch (error) {
      return Promise.reject(error);
    }
    const client = options.client ?? new IncusClient();
    return openOnImage(
      client,
      options.client === undefined,
      options.image,
      "deno task image:apps",
      (opened) => new SharedRuntimeSandbox(options, opened),
    );
  }

  get #prefix(): string {
    return this.#options.prefix ?? "wsshared-";
  }

  get #socketRoot(): string {
    return this.#options.socketRoot ?? "/run/webserv/shared";
  }

  /**
   * Creates an env: a database server of its own behind the shared runtime
   * of its seed (started, and its base seeded, at the seed's first env).
   *
   * @param spec the seed
   * @param options `cold`: start a server for this env instead of taking a spare
   * @returns the instance
   * @throws {SandboxError} when Incus or the runtime refuses, with its message
   */
  async create(
    spec: InstanceSpec = {},
    options: { cold?: boolean } = {},
  ): Promise<SharedRuntimeInstance> {
    const seed = spec.seed ?? 0;
    for (let attempt = 0;; attempt++) {
      const pending = this.#runtime(seed);
      const instance = await this.#createIn(await pending, seed, options);
      try {
        await webServerAnswers(instance);
        return instance;
      } catch (error) {
        await instance.destroy().catch((cause) => logFailure("destroying a shared env", cause));
        if (attempt > 0) throw error;
        // The web server is the runtime's, for every env of the seed: the
        // seed's next envs get a new runtime, and this one goes at close().
        logFailure(`the shared runtime of seed ${seed} lost its web server`, error);
        if (this.#runtimes.get(seed) === pending) {
          this.#runtimes.delete(seed);
          this.#retired.push(await pending);
        }
      }
    }
  }

  async #createIn(
    runtime: Runtime,
    seed: number,
    options: { cold?: boolean },
  ): Promise<SharedRuntimeInstance> {
    return await this.#openEnv(runtime, seed, undefined, (key) =>
      runtime.call(
        "POST",
        "/envs",
        { key, cold: options.cold === true },
        this.#options.envTimeoutMs ?? 60_000,
      ));
  }

  /**
   * A new env of the parent's runtime at the parent's live database and
   * files (a spare importing the tables the parent changed, or a copy taken
   * while the parent's server is stopped, see `kit/shared_fork.ts`).
   */
  async #fork(
    parent: SharedRuntimeInstance,
    runtime: Runtime,
    seed: number,
    options: InstanceForkOptions,
  ) {
    const instance = await this.#openEnv(runtime, seed, options.origin, (key) =>
      runtime.call(
        "POST",
        `/envs/${parent.key}/fork`,
        { key },
        this.#options.envTimeoutMs ?? 60_000,
      ));
    try {
      await instance.checkWebServer();
    } catch (error) {
      await instance.destroy().catch((cause) => logFailure("destroying a shared env", cause));
      throw error;
    }
    return instance;
  }

  /**
   * Opens an env of a runtime: its folder on the host, the control's call
   * that makes it (`make`, handed the env's new key), the instance, its pins.
   */
  async #openEnv(
    runtime: Runtime,
    seed: number,
    origin: string | undefined,
    make: (key: string) => Promise<unknown>,
  ): Promise<SharedRuntimeInstance> {
    const key = randomKey();
    // The env's sockets are pinned in a folder of the host's before the
    // host dials them (see `_socket_directory.ts`).
    const directory = new SocketDirectory(join(runtime.folder, `env-${key}`), {
      mounted: join(runtime.mounted, `env-${key}`),
      owner: runtime.owner,
    });
    let answer;
    try {
      await directory.create({ mounted: false });
      answer = decodeControlAnswer(await make(key));
    } catch (error) {
      directory[Symbol.dispose]();
      await directory.remove();
      throw error;
    }
    const instance = new SharedRuntimeInstance(
      runtime,
      key,
      { ...answer, seed, origin },
      directory,
      this.#options,
      () => this.#instances.delete(instance),
      runtime.forks ? (parent, options) => this.#fork(parent, runtime, seed, options) : undefined,
    );
    this.#instances.add(instance);
    try {
      await directory.pinNow(["state.sock", "site.sock"]);
    } catch (error) {
      await instance.destroy().catch((cause) => logFailure("destroying a shared env", cause));
      throw error;
    }
    return instance;
  }

  /**
   * The runtime container of a seed, started at its first call (concurrent
   * callers share it; a failure is forgotten, so a later call tries again).
   *
   * @param seed the seed
   * @returns the runtime's container name and host folder
   */
  async runtime(seed: number): Promise<{ name: string; folder: string }> {
    const { name, folder } = await this.#runtime(seed);
    return { name, folder };
  }

  /** How many seeds have a runtime running or starting. */
  get seedsHeld(): number {
    return this.#runtimes.size;
  }

  /**
   * Removes a seed's runtime (its container, its web server and its spare
   * database servers, a few hundred MiB for a PHP application), unless an env of it
   * lives; the seed's next env starts a runtime again from its seeded base,
   * which stays (a copy-on-write snapshot on disk, as `close()` keeps it).
   *
   * @param seed the seed
   */
  async retire(seed: number): Promise<void> {
    const pending = this.#runtimes.get(seed);
    if (!pending) return;
    const runtime = await pending.catch(() => undefined);
    if (this.#runtimes.get(seed) !== pending) return;
    if (runtime && [...this.#instances].some((i) => i.runtimeName === runtime.name)) return;
    this.#runtimes.delete(seed);
    if (!runtime) return;
    runtime.close();
    await this.#delete(runtime.name).catch((error) =>
      logFailure(`removing the shared runtime "${runtime.name}"`, error)
    );
    await Deno.remove(runtime.folder, { recursive: true }).catch(() => {});
  }

  /**
   * Starts a seed's runtime now (seeding its base at the first use), so that
   * its spare servers fill before its first `create()`; a failure is logged,
   * and the next `create()` tries again.
   *
   * @param seed the seed
   */
  warm(seed: number): void {
    this.#runtime(seed).catch((error) =>
      logFailure(`warming the shared runtime of seed ${seed}`, error)
    );
  }

  /**
   * Sets how many database servers a seed's runtime keeps started ahead
   * (0 makes every later creation and reset cold).
   *
   * @param seed the seed
   * @param count the spares
   */
  async setSpares(seed: number, count: number): Promise<void> {
    await (await this.#runtime(seed)).call("POST", "/spares", { count }, 10_000);
  }

  /**
   * A seed's runtime as its control sees it: open envs, spares waiting, and
   * spares lost while waiting (each thrown away and replaced, never handed out).
   *
   * @param seed the seed
   * @returns the counts
   */
  async health(seed: number): Promise<RuntimeHealth> {
    return decodeHealth(
      await (await this.#runtime(seed)).call("GET", "/healthz", undefined, 10_000),
    );
  }

  /**
   * Removes the runtimes whose owner process is gone (a crashed run), and
   * the bases of images Incus no longer has (rebuilt since).
   *
   * @returns the names removed
   */
  async reap(): Promise<string[]> {
    const removed: string[] = [];
    const images = new Set(await this.client.imageFingerprints());
    for (const instance of await this.client.listInstances()) {
      const owner = instance.config["user.webserv.owner"] ?? "";
      const role = instance.config["user.webserv.role"];
      const image = instance.config["volatile.base_image"];
      if (
        instance.name.startsWith(this.#prefix) &&
        ((role === "shared-runtime" && owner !== "" && ownerIsGone(owner)) ||
          (role === "shared-base" && image !== undefined && !images.has(image)))
      ) {
        await this.#delete(instance.name);
        removed.push(instance.name);
      }
    }
    return removed;
  }

  /**
   * Destroys every env and every runtime, removes the bases it made (with
   * `removeBases`); closes the client it made.
   */
  async close(): Promise<void> {
    for (const instance of [...this.#instances]) {
      await instance.destroy().catch((error) => logFailure("destroying a shared env", error));
    }
    const runtimes = [...this.#runtimes.values(), ...this.#retired.map((r) => Promise.resolve(r))];
    this.#runtimes.clear();
    this.#retired = [];
    for (const pending of runtimes) {
      const runtime = await pending.catch(() => undefined);
      if (!runtime) continue;
      runtime.close();
      await this.#delete(runtime.name).catch((error) =>
        logFailure(`removing the shared runtime "${runtime.name}"`, error)
      );
    }
    if (this.#options.removeBases) {
      // Runtimes are copies of a base's snapshot, independent on btrfs; every one is gone by now.
      for (const base of this.#madeBases) {
        this.#madeBases.delete(base);
        await this.#delete(base).catch((error) =>
          logFailure(`removing the seeded base "${base}"`, error)
        );
      }
    }
    if (this.#opened.ownsClient) this.client.close();
  }

  /** Calls `close()`. */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  #runtime(seed: number): Promise<Runtime> {
    let runtime = this.#runtimes.get(seed);
    if (!runtime) {
      runtime = this.#startRuntime(seed);
      runtime.catch(() => this.#runtimes.delete(seed));
      this.#runtimes.set(seed, runtime);
    }
    return runtime;
  }

  async #startRuntime(seed: number): Promise<Runtime> {
    const base = await this.#base(seed);
    const name = `${this.#prefix}rt-${seed}-${randomKey().slice(0, 8)}`;
    const folder = join(this.#socketRoot, name);
    const root = await this.#launch(name, folder, {
      type: "copy",
      source: base,
      instance_only: true,
    }, {
      ...incusLimits(this.#options.limits, SHARED_RUNTIME_LIMITS),
      "environment.WS_SPARES": String(this.#options.spares ?? 2),
      "user.webserv.role": "shared-runtime",
    });
    const runtime = new Runtime(name, folder, root);
    try {
      runtime.forks = decodeHealth(await runtime.call("GET", "/healthz", undefined, 10_000)).forks;
    } catch (error) {
      runtime.close();
      await this.#delete(name).catch((cause) => logFailure(`removing "${name}"`, cause));
      throw error;
    }
    return runtime;
  }

  /** The seeded base's snapshot: a runtime seeded once, stopped, and snapshotted. */
  async #base(seed: number): Promise<string> {
    const { image, pool } = this.#options;
    // Its own name: a container-per-env backend with the same prefix seeds its base from the
    // same image, but starts it otherwise, and must not take this one for its own.
    const name = baseName(this.#prefix, image, pool, seed, this.#opened.fingerprint, SHARED_BASE);
    const snapshot = `${name}/seeded`;
    if (await exists(this.client, `/1.0/instances/${name}/snapshots/seeded`)) return snapshot;
    // A base left half made by a crashed run is made again.
    if (await exists(this.client, `/1.0/instances/${name}`)) await this.#delete(name);
    const folder = join(this.#socketRoot, name);
    await this.#launch(name, folder, { type: "image", fingerprint: this.#opened.fingerprint }, {
      "environment.WS_SEED": String(seed),
      "environment.WS_SPARES": "0",
      "user.webserv.role": "shared-base",
    }, { root: { type: "disk", path: "/", pool: this.#options.pool } });
    try {
      await this.client.changeState(name, "stop", true);
      await this.client.request("POST", `/1.0/instances/${name}/snapshots`, {
        json: { name: "seeded" },
      });
    } catch (error) {
      await this.#delete(name).catch((cause) => logFailure(`removing the base "${name}"`, cause));
      throw error;
    }
    this.#madeBases.add(name);
    await Deno.remove(folder, { recursive: true }).catch(() => {});
    return snapshot;
  }

  /**
   * Creates and starts a container in shared mode; resolves when its control
   * answers, with the container's root as the host sees it.
   */
  async #launch(
    name: string,
    folder: string,
    source: Record<string, unknown>,
    config: Record<string, string>,
    devices: Record<string, Record<string, string>> = {},
  ): Promise<Owner> {
    // The runtime's folder is root's; the container's, in it, its root's
    // alone (www-data in the runtime can neither plant a socket there nor
    // rename another env's folder).
    const directory = new SocketDirectory(folder);
    directory[Symbol.dispose]();
    await directory.create();
    await Deno.remove(join(directory.mounted, "control.sock")).catch(() => {});
    await Deno.remove(directory.socket("control.sock")).catch(() => {});
    try {
      const root = await createContainer(this.client, {
        name,
        source,
        config: { "environment.WS_SHARED": "1", ...config },
        folder: directory.mounted,
        devices,
      });
      await directory.own(root);
      await this.client.changeState(name, "start");
      const runtime = new Runtime(name, folder, root);
      try {
        const deadline = performance.now() + (this.#options.readyTimeoutMs ?? 900_000);
        let last: unknown = new Error("control.sock is not there");
        for (let attempt = 0;; attempt++) {
          try {
            // Pinned before it is dialled; a tampered socket is no reason to wait.
            if (await runtime.pin()) {
              await runtime.call("GET", "/healthz", undefined, 2_000);
              return root;
            }
          } catch (error) {
            if (error instanceof SocketTamperedError) throw error;
            last = error;
          }
          if (performance.now() > deadline) {
            throw new SandboxError(
              `The shared runtime "${name}" did not answer in time: ${String(last)}`,
              { cause: last },
            );
          }
          if (attempt % 20 === 19) await probeInstance(this.client, name);
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
      } finally {
        runtime.close();
      }
    } catch (error) {
      await this.#delete(name).catch((cause) => logFailure(`removing "${name}"`, cause));
      throw error;
    }
  }

  async #delete(name: string): Promise<void> {
    try {
      await this.client.changeState(name, "stop", true);
    } catch (error) {
      if (!(error instanceof SandboxError)) throw error;
      // 404: gone; 400: already stopped.
    }
    try {
      await this.client.request("DELETE", `/1.0/instances/${name}`);
    } catch (error) {
      if (!(error instanceof SandboxError) || error.status !== 404) throw error;
    }
    await Deno.remove(join(this.#socketRoot, name), { recursive: true }).catch(() => {});
  }
}

/**
 * Waits up to about 2 s for the env's relay to reach the runtime's web
 * server: a runtime is replaced only when its web server stays silent, never
 * for one slow answer on a loaded host.
 */
async function webServerAnswers(instance: SharedRuntimeInstance): Promise<void> {
  for (let attempt = 1;; attempt++) {
    try {
      return await instance.checkWebServer();
    } catch (error) {
      if (attempt >= 5) throw error;
      await new Promise((resolve) => setTimeout(resolve, 400));
    }
  }
}
