/**
 * Best-effort failures of the adapters go here. Set `WEBSERV_DEBUG=1` to see
 * them. A copy of the engine's helper: adapters import only the public
 * `mod.ts`, which does not export it.
 *
 * @module
 */

let enabled: boolean | undefined;

function debugEnabled(): boolean {
  if (enabled === undefined) {
    try {
      enabled = Boolean(Deno.env.get("WEBSERV_DEBUG"));
    } catch {
      enabled = false; // no --allow-env: stay quiet
    }
  }
  return enabled;
}

/** Logs a failure that the caller chose not to propagate. */
export function logFailure(what: string, error: unknown): void {
  // deno-lint-ignore no-console
  if (debugEnabled()) console.debug(`[webserv] ${what} failed:`, error);
}

/** Runs a best-effort call: a rejection is logged, never thrown or left unhandled. */
export function bestEffort(what: string, promise: Promise<unknown>): void {
  promise.catch((error) => logFailure(what, error));
}
