/**
 * The Docker backend, over the Engine API: the same root filesystem as the
 * Incus image, imported with `docker import`; a base container per seed runs
 * once to seed the site's database and is committed as an image; every env is
 * a container of that image on overlay2, with no network, memory, process
 * and CPU limits (`limits`), and its socket folder bind-mounted at `/run/ws`
 * (root's alone; the host dials each socket only once pinned outside it, see
 * `_socket_directory.ts`). Reset recreates the container; the origin stays
 * the same. A fork is a container of an image committed from the running
 * one, paused while it is cut.
 *
 * @module
 */
import { InstanceGoneError, SandboxError } from "../errors.ts";
import type { Gateway } from "../gateway.ts";
import type { Container } from "../_container_instance.ts";
import type { ContainerInstance } from "../_container_instance.ts";
import {
  ContainerLifecycle,
  findImage,
  type ListedContainer,
  openContainerSandbox,
} from "../_container_sandbox.ts";
import type { InstanceSpec, Sandbox } from "../types.ts";
import { ownerIsGone, ownerTag } from "../_owner.ts";
import { DockerClient } from "./client.ts";
import { type ContainerLimits, type DockerLimits, dockerLimits } from "../_container_limits.ts";
import { logFailure } from "../../engine/log.ts";

/** Options of {@linkcode DockerSandbox.open}. */
export interface DockerSandboxOptions {
  /** The gateway the instances are reached through. */
  gateway: Gateway;
  /** The image repository, such as `"webserv-demo"` (tag `latest` is used). */
  image: string;
  /**
   * The Docker daemon.
   *
   * @default {a client of /var/run/docker.sock, closed by close()}
   */
  client?: DockerClient;
  /**
   * The prefix of every container name this backend creates and reaps.
   *
   * @default {"ws-"}
   */
  prefix?: string;
  /**
   * The host folder holding each container's socket folder.
   *
   * @default {"/run/webserv/docker"}
   */
  socketRoot?: string;
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
   * How long the base container may take to seed its database.
   *
   * @default {900_000}
   */
  seedTimeoutMs?: number;
  /**
   * What each env container may take: memory, processes and CPU (the base
   * that seeds the site once runs without). The CPUs are at most the
   * daemon host's (Docker refuses more).
   *
   * @default {1 GiB, 1,024 processes and threads, 2 CPUs (`DEFAULT_LIMITS`)}
   */
  limits?: ContainerLimits;
}

const OWNER = "webserv.owner";
const ROLE = "webserv.role";

/**
 * Creates instances as Docker containers.
 *
 * @example Open the backend and create an env
 * ```ts ignore
 * import { Gateway } from "@webserv/webserv/sandboxes";
 * import { DockerSandbox } from "@webserv/webserv/sandboxes/docker";
 * await using gateway = new Gateway();
 * await using sandbox = await DockerSandbox.open({ gateway, image: "webserv-demo" });
 * await using env = await sandbox.create({ seed: 1 });
 * console.log(env.origin);
 * ```
 */
export class DockerSandbox implements Sandbox {
  /** Always `"docker"`. */
  readonly kind = "docker";
  /** The Docker client in use. */
  readonly client: DockerClient;
  #options: DockerSandboxOptions;
  #ownsClient: boolean;
  #lifecycle: ContainerLifecycle;
  #imageId: string;
  #limits: DockerLimits;
  /** The commit under way of each container being forked, which the next fork of it waits for. */
  #commits = new Map<string, Promise<void>>();

  private constructor(
    options: DockerSandboxOptions,
    client: DockerClient,
    imageId: string,
    hostCpus: number,
  ) {
    this.#options = options;
    this.client = client;
    this.#ownsClient = options.client === undefined;
    this.#imageId = imageId;
    this.#limits = dockerLimits(options.limits, hostCpus);
    this.#lifecycle = new ContainerLifecycle("docker", {
      gateway: options.gateway,
      prefix: options.prefix ?? "ws-",
      socketRoot: options.socketRoot ?? "/run/webserv/docker",
      spares: options.spares ?? 0,
      restoreOnReset: false,
    }, {
      launchOnce: (seed) => this.#launchOnce(seed),
      makeBase: (seed) => this.#makeBase(seed),
      probe: (name) => this.#probe(name),
      remove: (container) => this.#remove(container),
      listContainers: () => this.#listContainers(),
      closeClient: () => {
        if (this.#ownsClient) this.client.close();
      },
      fork: (container) => this.#fork(container),
    });
  }

  /**
   * Connects to Docker, checks the image, and reaps what crashed runs left.
   *
   * @param options the gateway, image and tuning
   * @returns the backend
   * @throws {DaemonUnavailableError} when Docker does not answer
   * @throws {SandboxError} when the image is missing
   */
  static open(options: DockerSandboxOptions): Promise<DockerSandbox> {
    try {
      dockerLimits(options.limits);
    } catch (error) {
      return Promise.reject(error);
    }
    const client = options.client ?? new DockerClient();
    return openContainerSandbox(client, options.client === undefined, async () => {
      await client.ping();
      const imageId = await findImage(
        () => client.imageId(`${options.image}:latest`),
        `Docker has no image "${options.image}:latest": build it with "deno task image"`,
      );
      return new DockerSandbox(options, client, imageId, await client.cpuCount());
    });
  }

  /**
   * Creates an env: a container of the seeded site, started and answering.
   *
   * @param spec the seed
   * @returns the instance
   * @throws {SandboxError} when Docker refuses, with its message
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
  retire(seed: number): Promise<void> {
    return this.#lifecycle.retire(seed);
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
   * Removes the envs whose owner process is gone (a crashed run), and socket
   * folders with no container.
   *
   * @returns the names removed
   */
  reap(): Promise<string[]> {
    return this.#lifecycle.reap();
  }

  /** Destroys every env, waits for background removals, closes the client it made. */
  close(): Promise<void> {
    return this.#lifecycle.close();
  }

  /** Calls `close()`. */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  async #listContainers(): Promise<ListedContainer[]> {
    return (await this.client.listContainers({ label: OWNER })).map((container) => ({
      name: container.names[0] ?? container.id,
      owner: container.labels[OWNER] ?? "",
      role: container.labels[ROLE] ?? "",
    }));
  }

  async #launchOnce(seed: number): Promise<Container> {
    return await this.#launchFrom(await this.#lifecycle.base(seed));
  }

  /**
   * Launches a container on a copy of a running one's files: `docker commit`
   * pauses the container (cgroup freezer: no process of the site runs, so
   * no write is half made) while it cuts an image of its filesystem, and the
   * fork runs that image. The image is the fork's alone, tagged
   * `fork-<container>`, and goes when the fork's container goes. Forks of
   * one container are cut one after another: Docker pauses only a container
   * that is not paused yet and unpauses it when its own commit ends, so a
   * commit begun during another's ran on, in part, while the container ran.
   */
  async #fork(parent: Container): Promise<Container> {
    const name = this.#lifecycle.newName();
    const image = forkImage(this.#options.image, name);
    await this.#commitAlone(
      parent.name,
      () => this.client.commit(parent.name, this.#options.image, image.split(":")[1]!),
    );
    try {
      return await this.#launchFrom(image, name);
    } catch (error) {
      await this.client.removeImage(image).catch((cause) =>
        logFailure(`removing the fork image "${image}"`, cause)
      );
      throw error;
    }
  }

  /** Runs `commit` once no other commit of `container` is under way. */
  async #commitAlone(container: string, commit: () => Promise<unknown>): Promise<void> {
    const before = this.#commits.get(container) ?? Promise.resolve();
    const mine = before.then(commit);
    // The queue goes on whether this commit succeeds or not; the caller sees its failure.
    const settled = mine.then(() => {}, () => {});
    this.#commits.set(container, settled);
    try {
      await mine;
    } finally {
      if (this.#commits.get(container) === settled) this.#commits.delete(container);
    }
  }

  /** Creates and starts an env container of `image` and waits until it answers. */
  async #launchFrom(image: string, name = this.#lifecycle.newName()): Promise<Container> {
    const container = this.#lifecycle.containerNamed(name);
    const { directory } = container;
    await directory.create();
    try {
      await this.client.createContainer({
        name,
        image,
        labels: { [OWNER]: ownerTag(), [ROLE]: "env" },
        binds: [`${directory.mounted}:/run/ws`],
        limits: this.#limits,
      });
      await this.client.startContainer(name);
      await directory.waitUntilReady({
        timeoutMs: this.#options.readyTimeoutMs ?? 30_000,
        probe: () => this.#probe(name),
        // The gateway reaches a Docker site through site.sock.
        site: true,
      });
      return container;
    } catch (error) {
      await this.#remove(container).catch((cause) =>
        logFailure(`removing the failed container "${container.name}"`, cause)
      );
      throw error;
    }
  }

  async #probe(name: string): Promise<void> {
    let running: boolean;
    let status: string;
    try {
      ({ running, status } = await this.client.inspectContainer(name));
    } catch (error) {
      if (error instanceof SandboxError && error.status === 404) {
        throw new InstanceGoneError(
          `Docker container "${name}" no longer exists`,
          { status: 404, daemonMessage: error.daemonMessage, cause: error },
        );
      }
      throw error;
    }
    if (!running) {
      throw new InstanceGoneError(
        `Docker container "${name}" is not running: its status is "${status}"`,
      );
    }
  }

  async #makeBase(seed: number): Promise<string> {
    const id = this.#imageId.replace(/^sha256:/, "").slice(0, 12);
    const tag = `seed-${seed}-${id}`;
    const image = `${this.#options.image}:${tag}`;
    const site = this.#options.image.replace(/^webserv-/, "")
      .replace(/[^a-z0-9]/g, "");
    const name = `${this.#lifecycle.settings.prefix}base-${site}-${seed}-${id}`;
    const timeoutMs = this.#options.seedTimeoutMs ?? 900_000;
    const deadline = performance.now() + timeoutMs;
    while (performance.now() < deadline) {
      if (await this.client.hasImage(image)) return image;
      const container = this.#lifecycle.containerNamed(name);
      const { directory } = container;
      await directory.create();
      try {
        await this.client.createContainer({
          name,
          image: this.#imageId,
          env: { WS_SEED: String(seed) },
          labels: { [OWNER]: ownerTag(), [ROLE]: "base" },
          binds: [`${directory.mounted}:/run/ws`],
        });
      } catch (error) {
        if (!(error instanceof SandboxError) || error.status !== 409) {
          throw error;
        }
        await this.#waitForOtherBase(name, image, deadline);
        continue;
      }
      try {
        await this.client.startContainer(name);
        await directory.waitUntilReady({
          timeoutMs: deadline - performance.now(),
          probe: () => this.#probe(name),
        });
        await this.client.stopContainer(name);
        await this.client.commit(name, this.#options.image, tag);
      } finally {
        await this.#remove(container);
      }
      return image;
    }
    throw new SandboxError(
      `Docker base "${name}" was not seeded within ${timeoutMs} ms`,
    );
  }

  async #waitForOtherBase(
    name: string,
    image: string,
    deadline: number,
  ): Promise<void> {
    while (performance.now() < deadline) {
      if (await this.client.hasImage(image)) return;
      const base = (await this.client.listContainers({ label: OWNER })).find(
        (c) => c.names.includes(name),
      );
      if (base === undefined) return;
      if (ownerIsGone(base.labels[OWNER] ?? "")) {
        await this.#remove(this.#lifecycle.containerNamed(name));
        return;
      }
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }

  async #remove(container: Container): Promise<void> {
    try {
      await this.client.removeContainer(container.name);
    } catch (error) {
      if (!(error instanceof SandboxError) || error.status !== 404) throw error;
    }
    await container.directory.remove();
    container.directory[Symbol.dispose]();
    // A fork's image goes with it; any other container has none (a 404).
    try {
      await this.client.removeImage(forkImage(this.#options.image, container.name));
    } catch (error) {
      if (!(error instanceof SandboxError) || error.status !== 404) throw error;
    }
  }
}

/**
 * The image a fork's container runs: `REPOSITORY:fork-<container>`.
 *
 * @param repository the backend's image
 * @param container the fork's container
 * @returns the image's name and tag
 */
function forkImage(repository: string, container: string): string {
  return `${repository}:fork-${container}`;
}
