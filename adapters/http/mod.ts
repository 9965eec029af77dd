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
export { startServer } from "./server.ts";
export type { Backend, RolloutServer, ServerOptions } from "./server.ts";
