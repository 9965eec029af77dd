/**
 * The host folder an instance's sockets appear in: `site.sock` for the
 * gateway and `state.sock` for the privileged state API. The folder is
 * bind-mounted into the container at `/run/ws`, so the host reaches the
 * instance without any network, bridge or proxy device.
 *
 * @module
 */
import { join } from "node:path";
import { SandboxTimeoutError } from "./errors.ts";
import type { StateClient } from "./types.ts";

/** Options of {@linkcode SocketDirectory.waitUntilReady}. */
export interface ReadyOptions {
  /** How long to wait, in milliseconds. */
  timeoutMs: number;
  /** Called about once a second; throw from it to stop waiting early. */
  probe?: () => Promise<void>;
  /**
   * Also wait until `site.sock` accepts a connection. Set it when the gateway
   * reaches the site through that socket: an image may start its site relay
   * and its state server side by side, and under load the state server can
   * answer first, so "ready" on the state socket alone let the gateway's
   * first request fail with a 502.
   *
   * @default {false}
   */
  site?: boolean;
}

/** One instance's socket folder on the host. */
export class SocketDirectory implements Disposable {
  /** The folder. */
  readonly path: string;
  /** The site's socket, for the gateway. */
  readonly siteSocket: string;
  /** The state API's socket. */
  readonly stateSocket: string;
  /** Privileged access to the state API. */
  readonly state: StateClient;
  #http: Deno.HttpClient;

  /** @param path the folder */
  constructor(path: string) {
    this.path = path;
    this.siteSocket = join(path, "site.sock");
    this.stateSocket = join(path, "state.sock");
    // No idle connections: a restarted instance listens on a new socket.
    // The URL's host is "localhost": Deno resolves it even through a unix
    // proxy, and any other name would be a DNS query leaving the machine.
    this.#http = Deno.createHttpClient({
      proxy: { transport: "unix", path: this.stateSocket },
      poolMaxIdlePerHost: 0,
    });
    this.state = {
      fetch: (path, init) => fetch(`http://localhost${path}`, { ...init, client: this.#http }),
    };
  }

  /**
   * Creates the folder, writable by the container's mapped root.
   */
  async create(): Promise<void> {
    await Deno.mkdir(this.path, { recursive: true, mode: 0o777 });
    await Deno.chmod(this.path, 0o777);
  }

  /** Removes sockets left by an earlier run of the instance. */
  async clear(): Promise<void> {
    for (const socket of [this.siteSocket, this.stateSocket]) {
      await Deno.remove(socket).catch(ignoreNotFound);
    }
  }

  /**
   * Polls the state socket until `GET /healthz` answers 200 (and, with
   * `site`, until the site's socket accepts a connection).
   *
   * @param options the timeout and a liveness probe
   * @throws {SandboxTimeoutError} when it does not answer in time
   */
  async waitUntilReady(options: ReadyOptions): Promise<void> {
    const deadline = performance.now() + options.timeoutMs;
    let nextProbe = performance.now() + 1_000;
    let last: unknown;
    // Each attempt gets a short timeout that grows when the machine is slow
    // to answer, so one stuck connection does not hold up readiness.
    let attemptMs = 250;
    let waiting = this.stateSocket;
    while (performance.now() < deadline) {
      waiting = this.stateSocket;
      try {
        const response = await this.state.fetch("/healthz", {
          signal: AbortSignal.timeout(attemptMs),
        });
        await response.body?.cancel();
        if (response.ok) {
          if (!options.site) return;
          waiting = this.siteSocket;
          const connection = await Deno.connect({ transport: "unix", path: this.siteSocket });
          connection.close();
          return;
        }
      } catch (error) {
        last = error;
        if (error instanceof DOMException && error.name === "TimeoutError") {
          attemptMs = Math.min(attemptMs * 2, 2_000);
        }
      }
      if (options.probe && performance.now() > nextProbe) {
        await options.probe();
        nextProbe = performance.now() + 1_000;
      }
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    throw new SandboxTimeoutError(
      `The site behind "${waiting}" did not answer within ${options.timeoutMs} ms`,
      { cause: last },
    );
  }

  /** Removes the folder and what is in it. */
  async remove(): Promise<void> {
    await Deno.remove(this.path, { recursive: true }).catch(ignoreNotFound);
  }

  /** Closes the state client. */
  [Symbol.dispose](): void {
    this.#http.close();
  }
}

function ignoreNotFound(error: unknown): void {
  if (!(error instanceof Deno.errors.NotFound)) throw error;
}
