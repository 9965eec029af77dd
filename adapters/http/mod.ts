/**
 * The rollout server, to embed in a trainer or a test: `startServer()` runs
 * what `deno task serve` runs (one Chromium, the sandboxes, the sessions,
 * the HTTP and WebSocket API) and returns a handle to stop it.
 *
 * @example Start a server on a free port and open a session
 * ```ts ignore
 * import { startServer } from "@webserv/webserv/server";
 * import { WebServClient } from "@webserv/webserv/client";
 * await using server = await startServer({ port: 0 });
 * const client = new WebServClient(server.url);
 * const session = await client.createSession({ task: "demo/add-note/1" });
 * ```
 *
 * @module
 */
import { startServer as start } from "./server.ts";
import type { Backend, ListenOptions } from "./server.ts";

export type { Backend, ListenOptions };

/** A running rollout server, as embedders see it. */
export interface RunningServer extends AsyncDisposable {
  /** The base URL, such as `http://127.0.0.1:8800`. */
  readonly url: string;
  /** The port it listens on. */
  readonly port: number;
  /** Closes every session, context, sandbox instance, the browser and the listener. */
  close(): Promise<void>;
}

/**
 * Starts the rollout server with the shipped sites and tasks.
 *
 * @param options where to listen, the backend, the limits
 * @returns the running server
 * @throws {RangeError} when binding off loopback without a token
 */
export function startServer(options: ListenOptions = {}): Promise<RunningServer> {
  return start(options);
}
