/**
 * The server's listener: `Deno.serve` behind a connection guard that bounds
 * how long a connection may take to send its head, how long it may idle and
 * how many may be open (`_connection_guard.ts`); or `Deno.serve` alone when
 * the header timeout is `0`.
 *
 * @module
 */
import { join } from "node:path";
import { ConnectionGuard } from "./_connection_guard.ts";

/** The bounds of the connections. */
export interface ListenBounds {
  /** @default {10000} */
  headerTimeoutMs?: number;
  /** @default {300000} */
  connectionIdleTimeoutMs?: number;
  /** @default {512} */
  maxConnections?: number;
}

/** The server's listener: its port, its connections, and how to stop it. */
export interface Listening {
  port: number;
  readonly connections: number;
  /** Connections accepted so far (0 without the guard: `Deno.serve` counts none). */
  readonly accepted: number;
  readonly cut: number;
  shutdown(): Promise<void>;
}

/** Listens on `port`, or on 8800 or the next free port after it. */
function bind<T>(port: number | undefined, open: (port: number) => T): T {
  if (port !== undefined) return open(port);
  for (let candidate = 8800; candidate < 8900; candidate++) {
    try {
      return open(candidate);
    } catch (error) {
      if (!(error instanceof Deno.errors.AddrInUse)) throw error;
    }
  }
  return open(0);
}

export async function listen(
  handler: (request: Request) => Response | Promise<Response>,
  hostname: string,
  port: number | undefined,
  bounds: ListenBounds,
): Promise<Listening> {
  const headerTimeoutMs = bounds.headerTimeoutMs ?? 10_000;
  if (headerTimeoutMs === 0) {
    const server = bind(port, (p) => Deno.serve({ hostname, port: p, onListen() {} }, handler));
    return {
      port: server.addr.port,
      connections: 0,
      accepted: 0,
      cut: 0,
      shutdown: () => server.shutdown(),
    };
  }
  // Deno.serve has no header or idle timeout: the guard accepts and relays to it on a unix socket.
  const listener = bind(port, (p) => Deno.listen({ hostname, port: p }));
  const folder = await Deno.makeTempDir({ prefix: "webserv-http-" });
  const path = join(folder, "http.sock");
  const server = Deno.serve({ transport: "unix", path, onListen() {} }, handler);
  const guard = new ConnectionGuard(
    listener,
    () => Deno.connect({ transport: "unix", path }),
    {
      headerTimeoutMs,
      idleTimeoutMs: bounds.connectionIdleTimeoutMs ?? 300_000,
      maxConnections: bounds.maxConnections ?? 512,
    },
  );
  return {
    port: listener.addr.port,
    get connections() {
      return guard.open;
    },
    get accepted() {
      return guard.accepted;
    },
    get cut() {
      return guard.cut;
    },
    async shutdown() {
      await guard.close();
      await server.shutdown();
      await Deno.remove(folder, { recursive: true }).catch(() => {});
    },
  };
}
