/**
 * An env of the shared-runtime mode (see `shared_runtime_sandbox.ts`): a
 * database server of its own behind the runtime its seed shares.
 *
 * @module
 */
import { InstanceGoneError } from "../errors.ts";
import type { Gateway, GatewayRoute } from "../gateway.ts";
import { checkStateAnswers } from "../_container_instance.ts";
import type { SocketDirectory } from "../_socket_directory.ts";
import type { Instance, InstanceForkOptions, StateClient } from "../types.ts";
import {
  type ControlAnswer,
  decodeControlAnswer,
  type ForkRecord,
  type Runtime,
  type ServerSource,
} from "./_shared_runtime_control.ts";
import type { SharedRuntimeSandboxOptions } from "./shared_runtime_sandbox.ts";

/** An env of the shared runtime: its origin, its database server, its state socket. */
export class SharedRuntimeInstance implements Instance {
  /** The id in `env-<id>.localhost`. */
  readonly id: string;
  /** The origin the browser opens. */
  readonly origin: string;
  /** Privileged access to the env's state API (its own database only). */
  readonly state: StateClient;
  /** The env's key in the runtime (`x-webserv-env`, `/run/wsdb/env-KEY.sock`). */
  readonly key: string;
  /** The runtime container's name. */
  readonly runtimeName: string;
  /** Where the server of the last creation or reset came from. */
  source: ServerSource;
  /**
   * How this env was forked, when it is a fork of a control that says: the
   * path (`import` or `copy`), why not `import`, and the import's steps.
   */
  readonly forked?: ForkRecord;
  /**
   * The runtime's number for the env's server now: its datadir is
   * `/var/lib/wsdb/slot-N`, its socket `/run/wsdb/slot-N.sock` (for measurements).
   */
  slot: number;
  #runtime: Runtime;
  #directory: SocketDirectory;
  #site: Deno.HttpClient;
  #route: GatewayRoute;
  #options: SharedRuntimeSandboxOptions;
  #forget: () => void;
  #seed: number;
  #destroyed = false;
  /**
   * Makes a new env of the same runtime at this one's live database and
   * files: a spare server that imports the tables this env changed, or (when
   * the import cannot carry them) a copy taken while its server is stopped
   * (see {@linkcode SharedRuntimeInstance.forked}); present
   * only when the runtime's control can copy a live env (an image built
   * before it could has none, and a session on it answers 409
   * `fork-unsupported`).
   */
  readonly fork?: (options?: InstanceForkOptions) => Promise<Instance>;
  /** Reserves the origins a fork may be made on (the gateway's spare routes). */
  readonly spares?: Gateway;

  /** Made by {@linkcode SharedRuntimeSandbox.create}. */
  constructor(
    runtime: Runtime,
    key: string,
    server: {
      source: ServerSource;
      slot: number;
      seed: number;
      origin?: string | undefined;
      path?: ControlAnswer["path"] | undefined;
      reason?: string | undefined;
      phases?: Record<string, number> | undefined;
    },
    directory: SocketDirectory,
    options: SharedRuntimeSandboxOptions,
    forget: () => void,
    fork?: (
      parent: SharedRuntimeInstance,
      options: InstanceForkOptions,
    ) => Promise<SharedRuntimeInstance>,
  ) {
    this.#runtime = runtime;
    this.key = key;
    this.source = server.source;
    this.slot = server.slot;
    if (server.path !== undefined) {
      this.forked = {
        path: server.path,
        ...(server.reason === undefined ? {} : { reason: server.reason }),
        ...(server.phases === undefined ? {} : { phases: server.phases }),
      };
    }
    this.#seed = server.seed;
    this.runtimeName = runtime.name;
    this.#options = options;
    this.#forget = forget;
    // The pinned sockets (see `_socket_directory.ts`), which the runtime cannot move.
    this.#directory = directory;
    // No idle connections: a relay made again listens on a new socket.
    this.#site = Deno.createHttpClient({
      proxy: { transport: "unix", path: this.#directory.siteSocket },
      poolMaxIdlePerHost: 0,
    });
    const target = { unix: this.#directory.siteSocket };
    this.#route = server.origin === undefined
      ? options.gateway.add(target)
      : options.gateway.claim(server.origin, target);
    this.id = this.#route.id;
    this.origin = this.#route.origin;
    this.state = { fetch: (path, init) => this.#directory.state.fetch(path, init) };
    if (fork) {
      this.spares = options.gateway;
      this.fork = async (forkOptions = {}) => {
        if (this.#destroyed) {
          throw new InstanceGoneError(`Instance "env-${this.id}" was destroyed`);
        }
        return await fork(this, forkOptions);
      };
    }
  }

  /**
   * Points the env at a fresh copy of the seeded database (a spare when the
   * runtime has one).
   *
   * @param options `cold`: start a server for this reset instead of taking a
   *   spare; `seed`: the env's own seed or none (a runtime serves one seed)
   * @throws {RangeError} when `seed` is another seed than the env's
   * @throws {InstanceGoneError} when the env was destroyed or its runtime is
   *   gone, or its runtime's web server does not answer
   */
  async reset(options: { seed?: number; cold?: boolean } = {}): Promise<void> {
    if (this.#destroyed) {
      throw new InstanceGoneError(`Instance "env-${this.id}" was destroyed`);
    }
    if (options.seed !== undefined && options.seed !== this.#seed) {
      throw new RangeError(
        `Cannot reset "env-${this.id}" to seed ${options.seed}: it serves seed ${this.#seed}, and a shared runtime serves one seed; create an env of seed ${options.seed} instead`,
      );
    }
    const answer = decodeControlAnswer(
      await this.#runtime.call(
        "POST",
        `/envs/${this.key}/reset`,
        { cold: options.cold === true },
        this.#options.envTimeoutMs ?? 60_000,
      ),
    );
    this.source = answer.source;
    this.slot = answer.slot;
    // A fresh database behind a web server that is gone is no reset: the
    // caller needs an env of a new runtime (`SharedRuntimeSandbox.create`).
    await this.checkWebServer();
  }

  /**
   * Checks that the env's state API answers over its own database, and that
   * the runtime's web server answers through the env's relay: either can die
   * while the other goes on (a `mariadbd` killed, an Apache stopped), and
   * the agent's pages would then be an error page of the site's or the
   * relay's 502.
   *
   * @throws {InstanceGoneError} when either does not
   */
  async check(): Promise<void> {
    if (this.#destroyed) {
      throw new InstanceGoneError(`Instance "env-${this.id}" was destroyed`);
    }
    await Promise.all([checkStateAnswers(this.id, this.state, 5_000), this.checkWebServer()]);
  }

  /**
   * Checks that the runtime's web server answers through the env's relay:
   * asks for a file Apache serves itself (Debian's `/icons/` alias: no PHP,
   * no database, about a millisecond); a 5xx is the relay's answer that
   * Apache does not answer (a 404 would still be Apache's).
   *
   * @throws {InstanceGoneError} when it does not
   */
  async checkWebServer(): Promise<void> {
    try {
      const response = await fetch("http://localhost/icons/blank.gif", {
        client: this.#site,
        signal: AbortSignal.timeout(5_000),
      });
      await response.body?.cancel();
      if (response.status >= 500) throw new Error(`HTTP ${response.status}`);
    } catch (error) {
      throw new InstanceGoneError(
        `The web server of "env-${this.id}" (runtime "${this.runtimeName}") does not answer: ${
          String(error)
        }`,
        { cause: error },
      );
    }
  }

  /** Stops the env's server and removes its copy and sockets; safe to call twice. */
  async destroy(): Promise<void> {
    if (this.#destroyed) return;
    this.#destroyed = true;
    this.#route.remove();
    this.#forget();
    try {
      await this.#runtime.call("DELETE", `/envs/${this.key}`, undefined, 30_000);
    } finally {
      this.#site.close();
      this.#directory[Symbol.dispose]();
      await this.#directory.remove();
    }
  }

  /** Calls {@linkcode SharedRuntimeInstance.destroy}. */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.destroy();
  }
}
