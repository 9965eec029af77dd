/**
 * What runs inside an Incus or Docker instance: the site module served on a
 * unix socket in a folder the host bind-mounts, and its privileged state API
 * on a second socket beside it, which the gateway never routes to.
 *
 * @module
 */
import { DatabaseSync } from "node:sqlite";
import type { Site } from "../types.ts";

/** Options of {@linkcode serveSite}. */
export interface ServeSiteOptions {
  /** The folder for `site.sock` and `state.sock`. */
  socketDirectory: string;
  /** The database file; seeded when it does not exist. */
  database: string;
  /**
   * The seed used when the database is seeded.
   *
   * @default {0}
   */
  seed?: number;
  /**
   * Serve the site on this TCP port of 127.0.0.1 instead of `site.sock`, as
   * an image that only speaks TCP does (the host reaches it through an Incus
   * proxy device). The state API stays on its socket.
   */
  tcpPort?: number;
}

/** The two servers a site runs. */
export interface SiteServers {
  /** Resolves when both servers have stopped. */
  finished: Promise<void>;
}

/**
 * Seeds the database if needed, then serves the site and its state API.
 * The state socket is opened last, so when it answers `GET /healthz` the site
 * socket is ready too.
 *
 * @param site the site module
 * @param options where the sockets and the database live
 * @returns the running servers
 */
export function serveSite(site: Site, options: ServeSiteOptions): SiteServers {
  const db = openSeeded(site, options.database, options.seed ?? 0);
  const sitePath = `${options.socketDirectory}/site.sock`;
  const statePath = `${options.socketDirectory}/state.sock`;
  for (const path of [sitePath, statePath]) {
    try {
      Deno.removeSync(path);
    } catch (error) {
      if (!(error instanceof Deno.errors.NotFound)) throw error;
    }
  }
  const app = site.app(db);
  const state = site.state(db);
  const siteServer = options.tcpPort
    ? Deno.serve({ hostname: "127.0.0.1", port: options.tcpPort, onListen() {} }, app)
    : Deno.serve({ path: sitePath, onListen() {} }, app);
  const stateServer = Deno.serve({ path: statePath, onListen() {} }, state);
  // The host connects as root from outside the container's user namespace.
  if (!options.tcpPort) Deno.chmodSync(sitePath, 0o777);
  Deno.chmodSync(statePath, 0o777);
  return {
    finished: Promise.all([siteServer.finished, stateServer.finished]).then(
      () => {},
    ),
  };
}

function openSeeded(site: Site, path: string, seed: number): DatabaseSync {
  try {
    Deno.statSync(path);
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
    // Seed into a side file and rename, so a crash never leaves half a seed.
    const partial = `${path}.partial`;
    try {
      Deno.removeSync(partial);
    } catch (error) {
      if (!(error instanceof Deno.errors.NotFound)) throw error;
    }
    const fresh = new DatabaseSync(partial);
    site.seed(fresh, seed);
    fresh.close();
    Deno.renameSync(partial, path);
  }
  return new DatabaseSync(path);
}
