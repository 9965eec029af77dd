/**
 * A small client for the Incus REST API: over the local unix socket, or over
 * HTTPS with a client certificate for a remote host or a cluster. Background
 * operations are waited on with a timeout, and a refusal becomes a
 * {@linkcode SandboxError} carrying the HTTP status and Incus's own message.
 * See https://linuxcontainers.org/incus/docs/main/rest-api/.
 *
 * @module
 */
import { type DaemonInfo, fetchDaemon } from "../_daemon_fetch.ts";
import { SandboxError, SandboxTimeoutError } from "../errors.ts";
import {
  type ClusterMember,
  decodeClusterMembers,
  decodeEnvelope,
  decodeFingerprint,
  decodeImageList,
  decodeImageProperties,
  decodeInstances,
  decodeInstanceState,
  decodeOperation,
  decodePoolSpace,
  type Envelope,
  type InstanceState,
  type InstanceSummary,
  type Operation,
} from "./_decode.ts";

export type { ClusterMember, InstanceState, InstanceSummary, Operation } from "./_decode.ts";

/** The default path of the local Incus socket. */
export const INCUS_SOCKET = "/var/lib/incus/unix.socket";

/** Options of {@linkcode IncusClient}. */
export interface IncusClientOptions {
  /**
   * The local unix socket, used when `url` is absent.
   *
   * @default {"/var/lib/incus/unix.socket"}
   */
  socket?: string;
  /** The HTTPS address of a remote Incus, such as `https://10.0.0.2:8443`. */
  url?: string;
  /** The client certificate (PEM) the remote trusts. */
  cert?: string;
  /** The client certificate's private key (PEM). */
  key?: string;
  /** The remote's server certificate (PEM), trusted as a root. */
  serverCert?: string;
  /**
   * The Incus project.
   *
   * @default {"default"}
   */
  project?: string;
  /** A cluster member to place new instances on (`?target=`). */
  target?: string;
  /**
   * How long one call, or one wait for an operation, may take.
   *
   * @default {60_000}
   */
  timeoutMs?: number;
}

/** Options of one {@linkcode IncusClient.request}. */
export interface IncusRequestOptions {
  /** A JSON body. */
  json?: unknown;
  /** A raw body, sent as `application/octet-stream`. */
  body?: BodyInit;
  /** Extra headers. */
  headers?: Record<string, string>;
  /** How long the call may take, in milliseconds. */
  timeoutMs?: number;
  /** Whether to add the placement `target` to the query. */
  placed?: boolean;
}

/**
 * A client for one Incus daemon.
 *
 * @example Ask the local daemon for its instances
 * ```ts ignore
 * import { IncusClient } from "@webserv/webserv/sandboxes/incus";
 * using incus = new IncusClient();
 * console.log(await incus.listInstances());
 * ```
 */
export class IncusClient implements Disposable {
  /** Where the daemon is, for messages. */
  readonly endpoint: string;
  #base: string;
  #http: Deno.HttpClient;
  #project: string;
  #target: string | undefined;
  #timeoutMs: number;

  /**
   * Makes a client of the local unix socket, or of a remote daemon over HTTPS.
   *
   * @param options where the daemon is and how to authenticate
   * @throws {TypeError} when `url` is given without `cert` and `key`
   */
  constructor(options: IncusClientOptions = {}) {
    this.#project = options.project ?? "default";
    this.#target = options.target;
    this.#timeoutMs = options.timeoutMs ?? 60_000;
    if (options.url !== undefined) {
      if (options.cert === undefined || options.key === undefined) {
        throw new TypeError(
          `Cannot reach "${options.url}": a remote Incus needs a client certificate and key`,
        );
      }
      this.#base = options.url.replace(/\/$/, "");
      this.endpoint = this.#base;
      this.#http = Deno.createHttpClient({
        cert: options.cert,
        key: options.key,
        ...(options.serverCert === undefined ? {} : { caCerts: [options.serverCert] }),
      });
    } else {
      const socket = options.socket ?? INCUS_SOCKET;
      // "localhost": Deno resolves the URL's host even through a unix proxy.
      this.#base = "http://localhost";
      this.endpoint = socket;
      this.#http = Deno.createHttpClient({
        proxy: { transport: "unix", path: socket },
        // No idle connections, ever. Incus 6's unix listener peeks at the
        // first bytes of each connection inside its accept loop
        // (`StarttlsListener.Accept`), so one connected client that has not
        // sent its request yet stops the daemon from accepting any other:
        // the start hooks of every container (`incusd callhook`, over this
        // socket) then time out after 30 s and the start fails. A pooled
        // client leaves exactly such a connection behind: when a request
        // races an idle-connection checkout against a new connect and the
        // checkout wins, the new connection is parked in the pool without a
        // request and sits there until the pool's idle timeout (90 s). With
        // no pool, every connection carries its request at once and is
        // closed after the answer.
        poolMaxIdlePerHost: 0,
      });
    }
  }

  /** The cluster member new instances are placed on; `undefined` lets the daemon choose. */
  get target(): string | undefined {
    return this.#target;
  }

  /**
   * Calls the API and returns the response's metadata; for a background
   * operation, waits for it and returns the operation's metadata.
   *
   * @param method the HTTP method
   * @param path the path under the API, such as `/1.0/instances`
   * @param options the body and the timeout
   * @returns the metadata
   * @throws {SandboxError} when Incus refuses, with its status and message
   * @throws {SandboxTimeoutError} when the call or the operation takes too long
   * @throws {DaemonUnavailableError} when the daemon cannot be reached
   */
  async request(
    method: string,
    path: string,
    options: IncusRequestOptions = {},
  ): Promise<unknown> {
    const envelope = await this.#call(method, path, options);
    if (envelope.type !== "async") return envelope.metadata;
    const op = await this.wait(
      decodeOperation(envelope.metadata).id,
      options.timeoutMs,
    );
    return op.metadata;
  }

  /**
   * Waits for a background operation to end.
   *
   * @param id the operation's id
   * @param timeoutMs how long to wait
   * @returns the finished operation
   * @throws {SandboxError} when the operation failed, with Incus's message
   * @throws {SandboxTimeoutError} when it does not end in time
   */
  async wait(
    id: string,
    timeoutMs: number = this.#timeoutMs,
  ): Promise<Operation> {
    const seconds = Math.max(1, Math.ceil(timeoutMs / 1000));
    let envelope: Envelope;
    try {
      envelope = await this.#call(
        "GET",
        `/1.0/operations/${id}/wait?timeout=${seconds}`,
        { timeoutMs: timeoutMs + 5_000 },
      );
    } catch (error) {
      // Incus may answer a wait that ran out with an error instead of the
      // running operation: that is the operation taking too long all the same.
      if (error instanceof SandboxError && /deadline exceeded/i.test(error.daemonMessage)) {
        throw new SandboxTimeoutError(
          `Incus operation "${id}" did not finish within ${timeoutMs} ms (Incus: ${error.daemonMessage})`,
          { cause: error },
        );
      }
      throw error;
    }
    const op = decodeOperation(envelope.metadata);
    if (op.status === "Running" || op.status === "Pending") {
      throw new SandboxTimeoutError(
        `Incus operation "${id}" did not finish within ${timeoutMs} ms`,
      );
    }
    if (op.status !== "Success") {
      throw new SandboxError(`Incus operation "${id}" failed: ${op.err}`, {
        status: op.statusCode,
        daemonMessage: op.err,
      });
    }
    return op;
  }

  /**
   * Lists the instances with their config.
   *
   * @returns the instances
   */
  async listInstances(): Promise<InstanceSummary[]> {
    return decodeInstances(
      await this.request("GET", "/1.0/instances?recursion=1"),
    );
  }

  /**
   * Lists the members of the cluster this daemon belongs to.
   *
   * @returns the members with their status
   * @throws {SandboxError} when the daemon is not a cluster member
   */
  async clusterMembers(): Promise<ClusterMember[]> {
    return decodeClusterMembers(
      await this.request("GET", "/1.0/cluster/members?recursion=1"),
    );
  }

  /**
   * Reads an instance's state.
   *
   * @param name the instance
   * @returns its status, init pid and memory use
   */
  async instanceState(name: string): Promise<InstanceState> {
    return decodeInstanceState(
      await this.request("GET", `/1.0/instances/${name}/state`),
    );
  }

  /**
   * Starts, stops or restarts an instance and waits for it.
   *
   * @param name the instance
   * @param action `"start"`, `"stop"` or `"restart"`
   * @param force whether to kill rather than ask
   */
  async changeState(
    name: string,
    action: "start" | "stop" | "restart",
    force = false,
  ): Promise<void> {
    try {
      await this.request("PUT", `/1.0/instances/${name}/state`, {
        json: { action, force, timeout: force ? -1 : 30 },
        // A start or a forced stop takes about a second; Incus gives each of
        // the container's hooks 30 s, so a start past that has failed.
        ...(force || action === "start" ? { timeoutMs: Math.min(this.#timeoutMs, 30_000) } : {}),
      });
    } catch (error) {
      if (!(error instanceof SandboxError) || error.status === 404) throw error;
      throw await this.#stateChangeFailure(name, action, error);
    }
  }

  /**
   * Reads one of an instance's log files, such as `lxc.log`.
   *
   * @param name the instance
   * @param file the log file's name
   * @returns the log's text
   * @throws {SandboxError} when Incus has no such instance or log
   */
  async instanceLog(name: string, file = "lxc.log"): Promise<string> {
    const response = await fetchDaemon(
      this.#daemonInfo(),
      this.#url(`/1.0/instances/${name}/logs/${file}`),
      {
        method: "GET",
        path: `/1.0/instances/${name}/logs/${file}`,
        headers: new Headers(),
        rawType: "application/octet-stream",
        client: this.#http,
        timeoutMs: this.#timeoutMs,
      },
    );
    const text = await response.text();
    if (!response.ok) {
      throw new SandboxError(
        `Incus has no log "${file}" of instance "${name}": HTTP ${response.status}`,
        { status: response.status, daemonMessage: text.slice(0, 500) },
      );
    }
    return text;
  }

  /**
   * The error of a failed start or stop, naming the instance and carrying
   * the `ERROR` lines of its `lxc.log`, which say why (a hook that failed,
   * a mount refused) where Incus's own message only says that it failed.
   */
  async #stateChangeFailure(
    name: string,
    action: string,
    error: SandboxError,
  ): Promise<SandboxError> {
    let daemonLog: string[];
    let logNote = "";
    try {
      daemonLog = (await this.instanceLog(name)).split("\n")
        .filter((line) => /\bERROR\b/.test(line)).slice(-8);
    } catch (logError) {
      daemonLog = [];
      logNote = ` (its lxc.log could not be read: ${
        logError instanceof Error ? logError.message : String(logError)
      })`;
    }
    const message = `Incus could not ${action} instance "${name}": ${error.message}${logNote}${
      daemonLog.length > 0 ? `; lxc.log says:\n  ${daemonLog.join("\n  ")}` : ""
    }`;
    const options = {
      status: error.status,
      daemonMessage: error.daemonMessage,
      daemonLog,
      cause: error,
    };
    return error instanceof SandboxTimeoutError
      ? new SandboxTimeoutError(message, options)
      : new SandboxError(message, options);
  }

  /**
   * Reads how much of a storage pool is in use.
   *
   * @param pool the pool's name
   * @returns bytes used and the pool's size
   */
  async poolSpace(pool: string): Promise<{ used: number; total: number }> {
    return decodePoolSpace(
      await this.request("GET", `/1.0/storage-pools/${pool}/resources`),
    );
  }

  /**
   * Resolves an image alias to its fingerprint.
   *
   * @param alias the alias
   * @returns the fingerprint
   */
  async imageFingerprint(alias: string): Promise<string> {
    return decodeFingerprint(
      await this.request("GET", `/1.0/images/aliases/${alias}`),
    );
  }

  /**
   * Lists the images Incus has.
   *
   * @returns their fingerprints
   */
  async imageFingerprints(): Promise<string[]> {
    return decodeImageList(await this.request("GET", "/1.0/images"));
  }

  /**
   * Reads the properties of the image an alias points at.
   *
   * @param alias the alias
   * @returns the properties, or `undefined` when the alias does not exist
   */
  async aliasedImageProperties(
    alias: string,
  ): Promise<Record<string, string> | undefined> {
    try {
      const fingerprint = await this.imageFingerprint(alias);
      return decodeImageProperties(
        await this.request("GET", `/1.0/images/${fingerprint}`),
      );
    } catch (error) {
      if (error instanceof SandboxError && error.status === 404) {
        return undefined;
      }
      throw error;
    }
  }

  /**
   * Imports a unified image tarball (`metadata.yaml` plus `rootfs/`) and
   * points an alias at it.
   *
   * @param tarball the tarball's bytes
   * @param alias the alias to create or move
   * @returns the image's fingerprint
   */
  async importImage(
    tarball: BodyInit,
    alias: string,
  ): Promise<string> {
    const fingerprint = decodeFingerprint(
      await this.request("POST", "/1.0/images", {
        body: tarball,
        timeoutMs: 300_000,
      }),
    );
    let previous: string | undefined;
    try {
      previous = await this.imageFingerprint(alias);
      await this.request("DELETE", `/1.0/images/aliases/${alias}`);
    } catch (error) {
      if (!(error instanceof SandboxError) || error.status !== 404) throw error;
    }
    await this.request("POST", "/1.0/images/aliases", {
      json: { name: alias, target: fingerprint },
    });
    if (previous !== undefined && previous !== fingerprint) {
      // Instances copied from the old image keep their own volumes.
      await this.request("DELETE", `/1.0/images/${previous}`);
    }
    return fingerprint;
  }

  /** Closes the HTTP client. */
  close(): void {
    this.#http.close();
  }

  /** Calls {@linkcode IncusClient.close}. */
  [Symbol.dispose](): void {
    this.close();
  }

  #url(path: string): URL {
    const url = new URL(this.#base + path);
    if (this.#project !== "default") {
      url.searchParams.set("project", this.#project);
    }
    return url;
  }

  #daemonInfo(): DaemonInfo {
    return {
      name: "Incus",
      endpoint: this.endpoint,
      install: 'install it with "apt-get install -t bookworm-backports incus" and start incusd',
    };
  }

  async #call(
    method: string,
    path: string,
    options: IncusRequestOptions,
  ): Promise<Envelope> {
    const url = this.#url(path);
    if (options.placed && this.#target !== undefined) {
      url.searchParams.set("target", this.#target);
    }
    const response = await fetchDaemon(
      this.#daemonInfo(),
      url,
      {
        method,
        path,
        headers: new Headers(options.headers),
        json: options.json,
        body: options.body,
        rawType: "application/octet-stream",
        client: this.#http,
        timeoutMs: options.timeoutMs ?? this.#timeoutMs,
      },
    );
    const raw: unknown = await response.json().catch(() => ({
      type: "error",
      error: `HTTP ${response.status} with a body that is not JSON`,
      error_code: response.status,
    }));
    const envelope = decodeEnvelope(raw);
    if (envelope.type === "error" || !response.ok) {
      const status = envelope.errorCode || response.status;
      throw new SandboxError(
        `Incus refused "${method} ${path}": ${envelope.error}`,
        { status, daemonMessage: envelope.error },
      );
    }
    return envelope;
  }
}
