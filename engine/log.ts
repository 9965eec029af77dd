/**
 * The one place best-effort failures go: calls whose failure the caller
 * chose not to propagate (cleanup, resuming a target that may be gone).
 * Set `WEBSERV_DEBUG=1` to see them on the console.
 *
 * @module
 */
import { envVar } from "./_runtime.ts";

let enabled: boolean | undefined;

function debugEnabled(): boolean {
  // Without --allow-env the variable reads as unset: stay quiet.
  enabled ??= Boolean(envVar("WEBSERV_DEBUG"));
  return enabled;
}

/**
 * Logs a failure that the caller chose not to propagate; silent unless
 * `WEBSERV_DEBUG` is set.
 *
 * @param what what was attempted, such as `"detaching a session"`
 * @param error what it failed with
 *
 * @example Log a failed cleanup
 * ```ts
 * import { logFailure } from "@webserv/webserv";
 * try {
 *   await Deno.remove("/nonexistent/webserv-example");
 * } catch (error) {
 *   logFailure("removing a scratch file", error);
 * }
 * ```
 */
export function logFailure(what: string, error: unknown): void {
  // deno-lint-ignore no-console
  if (debugEnabled()) console.debug(`[webserv] ${what} failed:`, error);
}

/**
 * Runs a best-effort call: a rejection is logged with {@linkcode logFailure},
 * never thrown or left unhandled.
 *
 * @param what what is attempted
 * @param promise the call
 *
 * @example Fire and forget
 * ```ts
 * import { bestEffort } from "@webserv/webserv";
 * bestEffort("an optional cleanup", Promise.reject(new Error("gone")));
 * ```
 */
export function bestEffort(what: string, promise: Promise<unknown>): void {
  promise.catch((error) => logFailure(what, error));
}
