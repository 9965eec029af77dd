/**
 * The infrastructure failure family: everything that is ours and not the
 * agent's. A trainer catches `EnvError` as a whole and never scores it as a
 * policy failure; an `ActionError` (see `engine/act/errors.ts`) is the
 * agent's, and the episode goes on.
 *
 * @module
 */

/**
 * Why the env could not do its part:
 * - `browser-gone`: the browser process died or its connection closed;
 * - `renderer-crashed`: the tab's renderer crashed;
 * - `site-unreachable`: the site did not answer or refused the connection;
 * - `sandbox-lost`: the site's sandbox instance died or was removed;
 * - `timeout`: the caller's deadline passed, or its signal aborted;
 * - `closed`: the env was closed;
 * - `internal`: anything else that went wrong on our side.
 */
export type EnvErrorCode =
  | "browser-gone"
  | "renderer-crashed"
  | "site-unreachable"
  | "sandbox-lost"
  | "timeout"
  | "closed"
  | "internal";

/**
 * The env could not do its part; the agent is not to blame. `reset()` or a
 * new env recovers, except after `closed`.
 *
 * @example Tell our failures from the agent's
 * ```ts
 * import { EnvError } from "./env_error.ts";
 * const error = new EnvError("renderer-crashed", "The tab's renderer crashed");
 * console.assert(error instanceof EnvError && error.code === "renderer-crashed");
 * ```
 */
export class EnvError extends Error {
  /** What failed. */
  readonly code: EnvErrorCode;

  /**
   * Creates an infrastructure error.
   *
   * @param code what failed
   * @param message what happened, in sentence case
   * @param options the cause
   */
  constructor(code: EnvErrorCode, message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "EnvError";
    this.code = code;
  }
}
