/**
 * Whose a failure is: the site's or the task's (marked as they are thrown),
 * told apart by what is in the cause chain, as the env's error codes.
 *
 * @module
 */
import { ActionError } from "./act/errors.ts";
import { CdpTimeoutError, ConnectionClosedError, TargetClosedError } from "./cdp/errors.ts";
import { EnvError } from "./env_error.ts";
import { logFailure } from "./log.ts";
import type { EnvSite } from "./env_types.ts";

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

/** What the env knew when an operation failed. */
export interface EnvFacts {
  /** Whether the env was closed. */
  closed: boolean;
  /** Why the browser's connection closed, when it did. */
  gone: string | undefined;
  /** The crash status of the active tab's renderer, when it crashed. */
  crash: string | undefined;
}

/**
 * The one place errors cross the env's boundary. The agent's (an
 * `ActionError` but a timeout, `invalid-action` for bad input) and the
 * caller's (`EvalError` from `evaluate`) pass through; everything else
 * becomes an {@linkcode EnvError}: an abandoned operation's reason, a dead
 * browser (`ConnectionClosedError`, whatever the actor made of it), a
 * crashed renderer, a browser command that timed out (`CdpTimeoutError`,
 * `ActionError("timeout")`), a page gone under us (`TargetClosedError`),
 * what the site or the task threw (`sandbox-lost`, `site-unreachable`:
 * see `siteError`), and anything unexpected (`internal`, a `TypeError`
 * included, logged with its stack).
 */
export function envFailure(
  error: unknown,
  what: string,
  signal: AbortSignal,
  env: EnvFacts,
): unknown {
  if (signal.aborted) return signal.reason;
  if (error instanceof EnvError) return error;
  if (error instanceof SiteFailure) return siteError(error);
  const options = { cause: error };
  if (env.closed) return new EnvError("closed", `Cannot ${what}: the env was closed`, options);
  const gone = env.gone ?? (causedBy(error, ConnectionClosedError) ? message(error) : undefined);
  if (gone !== undefined) {
    return new EnvError("browser-gone", `Cannot ${what}: the browser is gone (${gone})`, options);
  }
  const crash = env.crash;
  if (crash !== undefined) {
    return new EnvError(
      "renderer-crashed",
      `Cannot ${what}: the renderer of the active tab crashed ("${crash}")`,
      options,
    );
  }
  if (error instanceof ActionError) {
    if (error.code !== "timeout") return error;
    return new EnvError("timeout", `Cannot ${what}: ${error.message}`, options);
  }
  // `evaluate` throws an EvalError for the caller's expression, on purpose.
  if (error instanceof EvalError) return error;
  if (error instanceof CdpTimeoutError) {
    return new EnvError("timeout", `Cannot ${what}: ${error.message}`, options);
  }
  if (error instanceof TargetClosedError) {
    return new EnvError(
      "internal",
      `Cannot ${what}: the page went away (${error.message})`,
      options,
    );
  }
  // Our bug (a TypeError from an internal check included): never the agent's.
  logFailure(`${what}: unexpected error`, error, "internal");
  return new EnvError("internal", `Cannot ${what}: ${message(error)}`, options);
}

/**
 * Runs the site's liveness check, if it has one.
 *
 * @param site the env's site
 * @returns a promise of the check's failure (`undefined` when it passed); never rejects
 */
export function checkSite(site: EnvSite | undefined): Promise<unknown> {
  if (!site?.check) return Promise.resolve(undefined);
  return site.check().then(() => undefined, (error: unknown) => error ?? "failed");
}

/**
 * Throws what the site's check found as the site's failure (`sandbox-lost`…).
 *
 * @param alive the check, from {@linkcode checkSite}
 * @throws {SiteFailure} when the check failed
 */
export async function siteAlive(alive: Promise<unknown>): Promise<void> {
  const failure = await alive;
  if (failure !== undefined) throw new SiteFailure("check the site", failure);
}
