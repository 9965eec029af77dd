/**
 * What a `SessionManager` is built from: the browser, the sandbox
 * backends, the catalog and the limits (beside `sessions.ts`, which holds
 * the manager itself).
 *
 * @module
 */
import type { Browser } from "../../mod.ts";
import type { Sandbox, Site } from "../../sandboxes/mod.ts";
import type { Catalog } from "./catalog.ts";
import type { Metrics } from "./metrics.ts";
import type { TrajectoryLog } from "./trajectory.ts";

/** Options of `SessionManager`. */
export interface SessionManagerOptions {
  /** Gives the current browser, launching a new one when the last is gone. */
  browser: () => Promise<Browser>;
  /**
   * Gives the sandbox backend of a site, on a placement target when the
   * session names one.
   */
  sandbox: (site: Site, target?: string) => Promise<Sandbox>;
  /**
   * Whether sessions may name a placement `target` (the incus backend).
   *
   * @default {false}
   */
  placementTargets?: boolean;
  /** The sites and tasks. */
  catalog: Catalog;
  /** The counters. */
  metrics: Metrics;
  /** Where trajectories go; none are written when absent. */
  trajectories?: TrajectoryLog;
  /**
   * The cap on live sessions.
   *
   * @default {16}
   */
  maxSessions?: number;
  /**
   * Idle time after which a session is reaped, in milliseconds.
   *
   * @default {300000}
   */
  idleTimeoutMs?: number;
  /**
   * The hard lifetime of a session, in milliseconds.
   *
   * @default {3600000}
   */
  lifetimeMs?: number;
  /**
   * The deadline of one step, reset or create, in milliseconds.
   *
   * @default {30000}
   */
  stepTimeoutMs?: number;
  /**
   * Origins bare-URL sessions may not open (the server's own).
   *
   * @default {[]}
   */
  blockedOrigins?: () => string[];
}
