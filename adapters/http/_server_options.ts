/**
 * What {@linkcode startServer} is started with: where to listen, the
 * backend and every limit (beside `server.ts`, which puts the server
 * together from them).
 *
 * @module
 */
import type { Backend } from "./backends.ts";
import type { Catalog } from "./catalog.ts";

/** Options of `startServer`. */
export interface ServerOptions extends ListenOptions {
  /**
   * @internal The sites and tasks (tests and tools bring their own).
   *
   * @default {defaultCatalog()}
   */
  catalog?: Catalog;
}

/** What an embedder sets of `startServer`: where to listen, the backend and the limits. */
export interface ListenOptions {
  /**
   * The port; `0` picks any free one.
   *
   * @default {8800, or the next free port after it}
   */
  port?: number;
  /**
   * The address to listen on; anything but loopback needs `token`.
   *
   * @default {"127.0.0.1"}
   */
  hostname?: string;
  /**
   * The sandbox backend.
   *
   * @default {"fixture"}
   */
  backend?: Backend;
  /** The bearer token every request but `/health` must carry. */
  token?: string;
  /**
   * Names the server answers to besides loopback ones on its port, as
   * `name` or `name:port` (see `_guard.ts`): on loopback, a port forwarded
   * to it (`"localhost:9000"`); off loopback, the names clients use (any name
   * when none are given; the token guards it).
   *
   * @default {[]}
   */
  allowedHosts?: string[];
  /**
   * The cap on live sessions.
   *
   * @default {16}
   */
  maxSessions?: number;
  /**
   * The cap on seeds holding state at once (per site and placement target:
   * a template, spares, a running runtime). A new seed past it retires the
   * least recently used idle seed, or is refused with 429 `seed-capacity`
   * when every held seed has a live session.
   *
   * @default {twice maxSessions, and the warmed seeds: a session holds one
   *   seed, two while it resets onto another, so the seed cap refuses nothing
   *   the session cap admits}
   */
  maxSeeds?: number;
  /**
   * How long a seed with no live session keeps its state, in milliseconds,
   * so that the next episode on it starts warm.
   *
   * @default {60000}
   */
  seedGraceMs?: number;
  /**
   * The cap on placement targets with a backend of their own (incus): past
   * it, the backend of a target with no live session is closed for a new
   * one, or the new target is refused with 429 `too-many-targets`.
   *
   * @default {64}
   */
  maxTargets?: number;
  /**
   * How long a connection may take to send its first request head, in
   * milliseconds; `0` serves on `Deno.serve`'s own listener, with no
   * connection bounds at all (see `_connection_guard.ts`).
   *
   * @default {10000}
   */
  headerTimeoutMs?: number;
  /**
   * How long a connection may pass no byte either way before it is closed,
   * in milliseconds (longer than the longest silent call, an application's
   * env creation of up to 180 s).
   *
   * @default {300000}
   */
  connectionIdleTimeoutMs?: number;
  /**
   * The cap on open connections; one past it is closed at accept.
   *
   * @default {512}
   */
  maxConnections?: number;
  /**
   * The cap on task proposals kept (process-wide: the last server started
   * sets it); past it the oldest is retired.
   *
   * @default {1000}
   */
  maxProposals?: number;
  /**
   * How many task proposals one client (by its token; every client without
   * one is one client) may make in a minute; past it 429 with Retry-After.
   *
   * @default {30}
   */
  proposalsPerMinute?: number;
  /**
   * The cap on messages one WebSocket connection has queued (the running one
   * included); past it a message is refused with an error.
   *
   * @default {64}
   */
  wsMaxQueued?: number;
  /** A running browser's DevTools WebSocket URL; a browser is launched when absent. */
  browserUrl?: string;
  /**
   * How many ready browser contexts the browser's warm pool keeps per kind,
   * for forks to take (see docs/fork.md); 0 turns the pool off.
   *
   * @default {2}
   */
  contextPool?: number;
  /**
   * Idle time after which a session is reaped, in milliseconds.
   *
   * @default {300000}
   */
  idleTimeoutMs?: number;
  /**
   * A session's hard lifetime, in milliseconds.
   *
   * @default {3600000}
   */
  lifetimeMs?: number;
  /**
   * The deadline of a step, reset or create, in milliseconds.
   *
   * @default {30000}
   */
  stepTimeoutMs?: number;
  /** Where trajectories go; none are written when absent. */
  runDir?: string;
  /**
   * Other runs the dashboard lists beside the one recorded, read only: run
   * directories, or parents holding runs one level down (scanned each time
   * the list is asked for).
   *
   * @default {[]}
   */
  runs?: readonly string[];
  /**
   * The Incus storage pool, for the incus and shared backends.
   *
   * @default {"default"}
   */
  incusPool?: string;
  /**
   * The Incus daemon's unix socket, for the incus backend: on a cluster, any
   * member's (instances go to a session's `target`, or where Incus places them).
   *
   * @default {"/var/lib/incus/unix.socket"}
   */
  incusSocket?: string;
  /**
   * The prefix of every Incus instance the incus and shared backends create
   * and reap (the seeded bases included).
   *
   * @default {"ws-" on incus, "wsshared-" on shared}
   */
  incusPrefix?: string;
  /**
   * Ready containers kept per site and seed on the incus and docker
   * backends, launched ahead so that opening or resetting a session takes one
   * instead of waiting for a launch (the spares of a seed start filling when
   * its first session opens, or at start for the seeds in `warm`). On the
   * shared backend, the database servers each seed's runtime starts ahead.
   *
   * @default {0; 2 on shared}
   */
  spares?: number;
  /**
   * Sites and seeds whose spares are filled at start, such as
   * `["wordpress/3"]` (needs `spares`, but on shared, where it starts the
   * seed's runtime).
   *
   * @default {[]}
   */
  warm?: string[];
  /**
   * Whether the launched browser installs its own SIGINT/SIGTERM handlers;
   * `deno task serve` turns them off to shut down gracefully itself.
   *
   * @default {true}
   */
  browserHandlesSignals?: boolean;
}
