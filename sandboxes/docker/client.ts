/**
 * A small client for the Docker Engine API over its unix socket. A refusal
 * becomes a {@linkcode SandboxError} carrying the HTTP status and Docker's own
 * message. See https://docs.docker.com/reference/api/engine/version/v1.41/.
 *
 * @module
 */
import type { DockerLimits } from "../_container_limits.ts";
import { fetchDaemon } from "../_daemon_fetch.ts";
import { SandboxError } from "../errors.ts";
import {
  type ContainerInspect,
  type ContainerSummary,
  decodeContainers,
  decodeCpuCount,
  decodeErrorMessage,
  decodeId,
  decodeInspect,
  decodeMemoryUsage,
  decodeStreamError,
} from "./_decode.ts";

export type { ContainerInspect, ContainerSummary } from "./_decode.ts";

/** The default path of the Docker socket. */
export const DOCKER_SOCKET = "/var/run/docker.sock";

/** Options of {@linkcode DockerClient}. */
export interface DockerClientOptions {
  /**
   * The daemon's unix socket.
   *
   * @default {"/var/run/docker.sock"}
   */
  socket?: string;
  /**
   * The API version in every path.
   *
   * @default {"v1.41"}
   */
  apiVersion?: string;
  /**
   * How long one call may take.
   *
   * @default {60_000}
   */
  timeoutMs?: number;
}

/** Options of {@linkcode DockerClient.createContainer}. */
export interface CreateContainerOptions {
  /** The container's name. */
  name: string;
  /** The image, such as `webserv-demo:1a2b3c`. */
  image: string;
  /** Environment variables. */
  env?: Record<string, string>;
  /** Labels. */
  labels?: Record<string, string>;
  /** Bind mounts as `host:container`. */
  binds?: string[];
  /**
   * Resource limits, as `HostConfig` fields (see `dockerLimits` in
   * `sandboxes/_container_limits.ts`).
   */
  limits?: DockerLimits;
}

/**
 * A client for one Docker daemon.
 *
 * @example List the containers
 * ```ts ignore
 * import { DockerClient } from "@webserv/webserv/sandboxes/docker";
 * using docker = new DockerClient();
 * console.log(await docker.listContainers({}));
 * ```
 */
export class DockerClient implements Disposable {
  /** The socket path, for messages. */
  readonly endpoint: string;
  #http: Deno.HttpClient;
  #prefix: string;
  #timeoutMs: number;

  /**
   * Makes a client of the daemon's unix socket.
   *
   * @param options where the daemon is
   */
  constructor(options: DockerClientOptions = {}) {
    this.endpoint = options.socket ?? DOCKER_SOCKET;
    // "localhost": Deno resolves the URL's host even through a unix proxy.
    this.#prefix = `http://localhost/${options.apiVersion ?? "v1.41"}`;
    this.#timeoutMs = options.timeoutMs ?? 60_000;
    this.#http = Deno.createHttpClient({
      proxy: { transport: "unix", path: this.endpoint },
    });
  }

  /**
   * Calls the API.
   *
   * @param method the HTTP method
   * @param path the path after the version, such as `/containers/json`
   * @param init the body and headers
   * @returns the response, already checked to be a success
   * @throws {SandboxError} when Docker refuses, with its status and message
   * @throws {SandboxTimeoutError} when the call takes too long
   * @throws {DaemonUnavailableError} when the daemon cannot be reached
   */
  async request(
    method: string,
    path: string,
    init: { json?: unknown; body?: BodyInit; timeoutMs?: number } = {},
  ): Promise<Response> {
    const response = await fetchDaemon(
      {
        name: "Docker",
        endpoint: this.endpoint,
        install: 'install it with "apt-get install docker.io" and start dockerd',
      },
      this.#prefix + path,
      {
        method,
        path,
        headers: new Headers(),
        json: init.json,
        body: init.body,
        rawType: "application/x-tar",
        client: this.#http,
        timeoutMs: init.timeoutMs ?? this.#timeoutMs,
      },
    );
    if (!response.ok) {
      const message = decodeErrorMessage(
        await response.json().catch(() => undefined),
      );
      throw new SandboxError(
        `Docker refused "${method} ${path}": ${message}`,
        { status: response.status, daemonMessage: message },
      );
    }
    return response;
  }

  /**
   * Checks that the daemon answers.
   *
   * @throws {DaemonUnavailableError} when it does not
   */
  async ping(): Promise<void> {
    await (await this.request("GET", "/_ping", { timeoutMs: 5_000 })).body
      ?.cancel();
  }

  /**
   * How many CPUs the daemon's host has.
   *
   * @returns the count, at least 1
   */
  async cpuCount(): Promise<number> {
    return decodeCpuCount(await (await this.request("GET", "/info")).json());
  }

  /**
   * Whether an image exists.
   *
   * @param name the image's name and tag
   * @returns `true` when it exists
   */
  async hasImage(name: string): Promise<boolean> {
    try {
      await (await this.request("GET", `/images/${name}/json`)).body?.cancel();
      return true;
    } catch (error) {
      if (error instanceof SandboxError && error.status === 404) return false;
      throw error;
    }
  }

  /**
   * Reads an image's id.
   *
   * @param name the image's name and tag
   * @returns the id, such as `sha256:…`
   */
  async imageId(name: string): Promise<string> {
    return decodeId(
      await (await this.request("GET", `/images/${name}/json`)).json(),
    );
  }

  /**
   * Adds a tag to an image.
   *
   * @param name the image's name and tag
   * @param repository the new repository
   * @param tag the new tag
   */
  async tagImage(name: string, repository: string, tag: string): Promise<void> {
    const query = new URLSearchParams({ repo: repository, tag });
    await (await this.request("POST", `/images/${name}/tag?${query}`)).body
      ?.cancel();
  }

  /**
   * Removes an image.
   *
   * @param name the image's name and tag, or id
   */
  async removeImage(name: string): Promise<void> {
    try {
      await (await this.request("DELETE", `/images/${name}?force=true`)).body
        ?.cancel();
    } catch (error) {
      // Gone already: no such tag, or the image under it was deleted while
      // this call ran (a fork of a fork's image is its parent fork's child,
      // and removing the child removes the untagged parent with it).
      if (error instanceof SandboxError && imageGone(error)) return;
      throw error;
    }
  }

  /**
   * Imports a root filesystem tarball as an image (`docker import`).
   *
   * @param tarball the tar of the root filesystem's contents
   * @param repository the image's repository
   * @param tag the image's tag
   * @param command the image's command
   * @throws {SandboxError} when the import reports an error
   */
  async importImage(
    tarball: BodyInit,
    repository: string,
    tag: string,
    command: string[],
  ): Promise<void> {
    const query = new URLSearchParams({
      fromSrc: "-",
      repo: repository,
      tag,
      changes: `CMD ${JSON.stringify(command)}`,
    });
    const response = await this.request("POST", `/images/create?${query}`, {
      body: tarball,
      timeoutMs: 300_000,
    });
    const message = decodeStreamError(jsonLines(await response.text()));
    if (message !== "") {
      throw new SandboxError(`Docker could not import the image: ${message}`, {
        daemonMessage: message,
      });
    }
  }

  /**
   * Creates a container with no network.
   *
   * @param options the name, image, environment, labels, bind mounts and limits
   * @returns the container's id
   */
  async createContainer(options: CreateContainerOptions): Promise<string> {
    const response = await this.request(
      "POST",
      `/containers/create?name=${encodeURIComponent(options.name)}`,
      {
        json: {
          Image: options.image,
          Env: Object.entries(options.env ?? {}).map(([k, v]) => `${k}=${v}`),
          Labels: options.labels ?? {},
          NetworkDisabled: true,
          HostConfig: {
            ...options.limits,
            NetworkMode: "none",
            Binds: options.binds ?? [],
          },
        },
      },
    );
    return decodeId(await response.json());
  }

  /**
   * Starts a container.
   *
   * @param id the container
   */
  async startContainer(id: string): Promise<void> {
    await (await this.request("POST", `/containers/${id}/start`)).body
      ?.cancel();
  }

  /**
   * Stops a container and waits until it has stopped.
   *
   * @param id the container
   * @param timeoutSeconds seconds before Docker kills it
   */
  async stopContainer(id: string, timeoutSeconds = 0): Promise<void> {
    await (await this.request("POST", `/containers/${id}/stop?t=${timeoutSeconds}`))
      .body?.cancel();
  }

  /**
   * Removes a container, killing it first if it runs, with its volumes.
   *
   * @param id the container
   */
  async removeContainer(id: string): Promise<void> {
    await (await this.request("DELETE", `/containers/${id}?force=true&v=true`))
      .body?.cancel();
  }

  /**
   * Reads a container's state.
   *
   * @param id the container
   * @returns whether it runs, and its pid
   */
  async inspectContainer(id: string): Promise<ContainerInspect> {
    return decodeInspect(
      await (await this.request("GET", `/containers/${id}/json`)).json(),
    );
  }

  /**
   * Lists containers, all states included.
   *
   * @param options a label to filter on, and whether to compute sizes
   * @returns the containers
   */
  async listContainers(
    options: { label?: string; size?: boolean },
  ): Promise<ContainerSummary[]> {
    const query = new URLSearchParams({ all: "true" });
    if (options.size) query.set("size", "true");
    if (options.label !== undefined) {
      query.set("filters", JSON.stringify({ label: [options.label] }));
    }
    return decodeContainers(
      await (await this.request("GET", `/containers/json?${query}`, {
        timeoutMs: 300_000,
      })).json(),
    );
  }

  /**
   * Commits a container's filesystem as an image (`docker commit`).
   *
   * @param id the container
   * @param repository the image's repository
   * @param tag the image's tag
   * @returns the image's id
   */
  async commit(id: string, repository: string, tag: string): Promise<string> {
    // Paused while committed (Docker's default, said here): no write is half made.
    const query = new URLSearchParams({ container: id, repo: repository, tag, pause: "true" });
    return decodeId(
      await (await this.request("POST", `/commit?${query}`, {
        timeoutMs: 300_000,
      })).json(),
    );
  }

  /**
   * Reads a container's memory use.
   *
   * @param id the container
   * @returns bytes in use
   */
  async memoryUsage(id: string): Promise<number> {
    return decodeMemoryUsage(
      await (await this.request("GET", `/containers/${id}/stats?stream=false`))
        .json(),
    );
  }

  /** Closes the HTTP client. */
  close(): void {
    this.#http.close();
  }

  /** Calls {@linkcode DockerClient.close}. */
  [Symbol.dispose](): void {
    this.close();
  }
}

function jsonLines(body: string): unknown[] {
  const lines: unknown[] = [];
  for (const line of body.split("\n")) {
    if (line.trim() === "") continue;
    try {
      lines.push(JSON.parse(line));
    } catch {
      lines.push({ error: line });
    }
  }
  return lines;
}

/** Whether Docker refused an image's removal because the image is not there. */
function imageGone(error: SandboxError): boolean {
  return error.status === 404 || /unrecognized image ID|No such image/i.test(error.message);
}
