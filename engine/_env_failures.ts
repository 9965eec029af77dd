/**
 * Whose a failure is: the site's or the task's (marked as they are thrown),
 * told apart by what is in the cause chain, as the env's error codes.
 *
 * @module
 */
import { EnvError } from "./env_error.ts";

/** The message of an error, or the thrown value as text. */
export function message(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** Whether `error` or one of its causes (eight deep at most) is a `type`. */
export function causedBy(error: unknown, type: abstract new (...args: never[]) => Error): boolean {
  for (let current = error, depth = 0; current && depth < 8; depth++) {
    if (current instanceof type) return true;
    current = current instanceof Error ? current.cause : undefined;
  }
  return false;
}

/** Error names of connection failures, in Deno (`Deno.errors`) and Node (`code`). */
export const UNREACHABLE =
  /ConnectionRefused|ConnectionReset|ConnectionAborted|NotConnected|AddrNotAvailable|ECONNREFUSED|ECONNRESET|EHOSTUNREACH|ENOTFOUND|fetch failed|error sending request/i;

/** What the site or the task threw, marked so that `Env.#map` knows whose it is. */
export class SiteFailure extends Error {
  /** What the env was doing. */
  readonly what: string;

  constructor(what: string, cause: unknown) {
    super(`Cannot ${what}: ${message(cause)}`, { cause });
    this.name = "SiteFailure";
    this.what = what;
  }
}

/** Calls the site or the task; what it throws is marked as the site's. */
export async function siteCall<T>(what: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (error) {
    if (error instanceof EnvError) throw error;
    throw new SiteFailure(what, error);
  }
}

/**
 * A site failure as an `EnvError`: a connection failure anywhere in the
 * cause chain is `site-unreachable`, anything else (`InstanceGoneError`,
 * `SandboxError`, the site's own) is `sandbox-lost`. Matched by name, code
 * and message: the engine imports no sandbox.
 */
export function siteError(failure: SiteFailure): EnvError {
  let unreachable = false;
  for (let current: unknown = failure.cause, depth = 0; current && depth < 8; depth++) {
    const code = (current as { code?: unknown }).code;
    const text = current instanceof Error
      ? `${current.name} ${current.message} ${typeof code === "string" ? code : ""}`
      : String(current);
    if (UNREACHABLE.test(text)) unreachable = true;
    current = current instanceof Error ? current.cause : undefined;
  }
  return new EnvError(unreachable ? "site-unreachable" : "sandbox-lost", failure.message, {
    cause: failure.cause,
  });
}
