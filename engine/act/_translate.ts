/**
 * The mapping of browser errors to action errors, so that every failure of
 * an action is an `ActionError` with a code; anything else is our bug, left
 * for the env to report as `EnvError("internal")`.
 *
 * @module
 */
import { CdpTimeoutError, ProtocolError, TargetClosedError } from "../cdp/errors.ts";
import type { Action } from "./action.ts";
import { ActionError } from "./errors.ts";
import { stale } from "./_calls.ts";

/** Browser messages that mean a handle's node or context is gone. */
const GONE =
  /Could not find node|No node with given id|Node is detached|Cannot find context|Cannot find object|Execution context was destroyed|Inspected target navigated/i;

/**
 * What leaves the actor when `action` threw `error`: a browser command that
 * timed out is `timeout`, a node or page gone is `stale-id` for an action on
 * an element and `navigation-failed` otherwise; the rest passes unchanged.
 */
export function translate(error: unknown, action: Action): unknown {
  if (error instanceof ActionError) return error;
  const id = "id" in action && action.id !== undefined ? action.id : undefined;
  if (error instanceof CdpTimeoutError) {
    return new ActionError(
      "timeout",
      `Cannot ${action.action}: the browser did not answer "${error.method}" within ${error.timeoutMs} ms`,
      { cause: error, ...(id !== undefined ? { id } : {}) },
    );
  }
  if (
    error instanceof ProtocolError &&
    (error instanceof TargetClosedError || GONE.test(error.message))
  ) {
    if (id !== undefined) return stale(id, error);
    return new ActionError("navigation-failed", `Cannot ${action.action}: the page went away`, {
      cause: error,
    });
  }
  return error;
}
