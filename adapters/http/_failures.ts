/**
 * How failures under a session become answers: the caller's mistakes are
 * 400s, infrastructure failures 503s (to retry), our own bugs 500s or,
 * inside a step, an `EnvError` the step reports as `env_error` or `timeout`.
 *
 * @module
 */
import { ActionError, EnvError } from "../../mod.ts";
import { logFailure } from "../../engine/log.ts";
import { SandboxError } from "../../sandboxes/mod.ts";
import { HttpError } from "./http_error.ts";

/**
 * The refusal for a failed env call: an `HttpError` as it is, an
 * `ActionError` as 400, an `EnvError` or a sandbox's failure as a 503 to
 * retry, anything else (our bug, a `TypeError` included) as a 500, logged
 * with its stack.
 *
 * @param error what was thrown
 * @returns the error to throw
 */
export function refusal(error: unknown): Error {
  if (error instanceof HttpError) return error;
  if (error instanceof ActionError) return new HttpError(400, "bad-request", error.message);
  const envError = asEnvError(error);
  if (envError.code === "internal") return new HttpError(500, envError.code, envError.message);
  return new HttpError(503, envError.code, envError.message, { "Retry-After": "1" });
}

/**
 * Runs an env call; infrastructure failures become 503 refusals.
 *
 * @param run the call
 * @returns what it returns
 * @throws {HttpError} as {@linkcode refusal} makes of its failure
 */
export async function envCall<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    throw refusal(error);
  }
}

/**
 * The infrastructure error behind a failure that is not the agent's: the
 * env's own `EnvError`, a sandbox's failure as `sandbox-lost`, or anything
 * else as `internal`, logged with its stack (it is our bug).
 *
 * @param error what was thrown
 * @returns the env error
 */
export function asEnvError(error: unknown): EnvError {
  if (error instanceof EnvError) return error;
  if (error instanceof SandboxError) {
    // A sandbox the daemon refused or lost: ours, and worth retrying.
    logFailure("serving a session: the sandbox failed", error, "sandbox");
    return new EnvError("sandbox-lost", messageOf(error), { cause: error });
  }
  logFailure("serving a session: unexpected error", error, "internal");
  return new EnvError("internal", messageOf(error), { cause: error });
}

/**
 * The message of anything thrown.
 *
 * @param error what was thrown
 * @returns its message, or its string form
 */
export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
