/**
 * The env's checks and shapes of its options: positive limits, the start
 * URL resolved against the site, and per-call options without absent keys
 * (`exactOptionalPropertyTypes` refuses an explicit `undefined`).
 *
 * @module
 */
import type { EnvTask } from "./task.ts";
import type { EnvCallOptions, EnvOptions } from "./env_types.ts";

/** `{ timeoutMs, signal }` without the absent ones. */
export function call(
  timeoutMs: number | undefined,
  signal: AbortSignal | undefined,
): EnvCallOptions {
  return {
    ...(timeoutMs !== undefined ? { timeoutMs } : {}),
    ...(signal !== undefined ? { signal } : {}),
  };
}

/**
 * Checks that an option, when given, is positive.
 *
 * @throws {RangeError} when it is not (`NaN` included)
 */
export function positive(name: string, value: number | undefined): void {
  if (value !== undefined && !(value > 0)) {
    throw new RangeError(`Invalid env option: "${name}" must be positive, got ${value}`);
  }
}

/**
 * The episode's start URL: the task's, else the env's, else the site's root
 * (or `about:blank` without a site), resolved against the site's origin.
 *
 * @throws {TypeError} when it is not a URL
 */
export function startUrlOf(options: EnvOptions, task: EnvTask | undefined): string {
  const start = task?.startUrl ?? options.startUrl ?? (options.site ? "/" : "about:blank");
  try {
    return new URL(start, options.site?.origin).href;
  } catch (cause) {
    throw new TypeError(
      `Cannot create env: start URL "${start}" is not a URL${
        options.site ? "" : " (no site to resolve a path against)"
      }`,
      { cause },
    );
  }
}
