/**
 * How failures under a session become answers: the caller's mistakes are
 * 400s, infrastructure failures 503s (to retry) or, inside a step, an
 * `EnvError` the step reports as `env_error` or `timeout`.
 *
 * @module
 */
import { ActionError, EnvError } from "../../mod.ts";
import { HttpError } from "./http_error.ts";

/**
 * The refusal for a failed env call: an `HttpError` as it is, a bad action
 * as 400, anything else as a 503 to retry.
 *
 * @param error what was thrown
 * @returns the error to throw
 */
export function refusal(error: unknown): Error {
  if (error instanceof HttpError) return error;
  if (error instanceof TypeError || error instanceof ActionError) {
    return new HttpError(400, "bad-request", error.message);
  }
  const envError = asEnvError(error);
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
 * env's own `EnvError`, or anything else as `internal`.
 *
 * @param error what was thrown
 * @returns the env error
 */
export function asEnvError(error: unknown): EnvError {
  if (error instanceof EnvError) return error;
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
