/**
 * The one place failures that are not thrown go: best-effort calls whose
 * failure the caller chose not to propagate (cleanup, resuming a target that
 * may be gone, restarting a dead browser), and our own bugs reported as
 * `EnvError("internal")`.
 *
 * Each one is counted by kind (see {@linkcode failureCounts}; the server
 * exposes the counts in `/metrics`) and written to stderr as one JSON line:
 * `{"level":"warn","kind":…,"what":…,"error":…,"stack":…}`. Set
 * `WEBSERV_LOG=quiet` to stop the lines (the counts go on), `WEBSERV_LOG=debug`
 * (or `WEBSERV_DEBUG=1`) to print the error objects whole as well.
 *
 * @module
 */
import { envVar } from "./_runtime.ts";
import { ConnectionClosedError, TargetClosedError } from "./cdp/errors.ts";
import { EnvError } from "./env_error.ts";

type Level = "quiet" | "warn" | "debug";

let level: Level | undefined;

function logLevel(): Level {
  // Without --allow-env the variables read as unset: warn, the default.
  level ??= envVar("WEBSERV_LOG") === "quiet"
    ? "quiet"
    : envVar("WEBSERV_LOG") === "debug" || envVar("WEBSERV_DEBUG")
    ? "debug"
    : "warn";
  return level;
}

const counts = new Map<string, number>();

/**
 * The kind of a failure from what was attempted: quoted parts (URLs, names,
 * ids) stand as `*`, so that kinds stay few.
 */
function kindOf(what: string): string {
  return what.replace(/"[^"]*"/g, "*");
}

/**
 * Whether a failure is part of a shutdown we asked for: a call cut short
 * because our side closed the browser's connection, or because the env it
 * ran for was closed (anywhere in the cause chain, eight deep at most). A
 * connection the browser dropped while nothing was closing it is not one.
 */
function isShutdown(error: unknown): boolean {
  for (let current = error, depth = 0; current && depth < 8; depth++) {
    if (current instanceof ConnectionClosedError && current.byClient) return true;
    if (current instanceof EnvError && current.code === "closed") return true;
    current = current instanceof Error ? current.cause : undefined;
  }
  return false;
}

/**
 * Counts and writes one failure as a warning; a closed target (a tab, frame
 * or document gone) is counted and written only at the `debug` level. A call
 * cut short by a shutdown we asked for (the browser, an env or its context
 * being closed) is no failure: neither counted nor written, but at the
 * `debug` level.
 *
 * @param what what was attempted, such as `"detaching a session"`
 * @param error what it failed with
 * @param kind how it is counted; by default `what` with its quoted parts as `*`
 */
export function logFailure(what: string, error: unknown, kind: string = kindOf(what)): void {
  const current = logLevel();
  if (isShutdown(error)) {
    if (current === "debug") write("debug", kind, what, error);
    return;
  }
  counts.set(kind, (counts.get(kind) ?? 0) + 1);
  if (current === "quiet") return;
  // A target that closed (a tab, a frame, a document replaced) is part of a normal run:
  // releasing a handle in it or detaching from it has nothing left to do. Counted, and
  // written only when debugging; a connection the browser dropped is still a warning.
  if (
    error instanceof TargetClosedError && error.name === "TargetClosedError" && current !== "debug"
  ) return;
  write("warn", kind, what, error);
}

/** Writes one failure as a JSON line on stderr; at the `debug` level, the error whole too. */
function write(level: "warn" | "debug", kind: string, what: string, error: unknown): void {
  const line = {
    level,
    kind,
    what,
    error: error instanceof Error ? `${error.name}: ${error.message}` : String(error),
    ...(error instanceof Error && error.stack ? { stack: error.stack } : {}),
  };
  // deno-lint-ignore no-console
  console.error(`[webserv] ${JSON.stringify(line)}`);
  // deno-lint-ignore no-console
  if (logLevel() === "debug") console.debug(error);
}

/**
 * How many failures of each kind were logged since the process started.
 *
 * @returns the counts by kind
 *
 * @example Read the counts
 * ```ts
 * import { failureCounts } from "./log.ts";
 * const counts = failureCounts();
 * console.assert(typeof counts === "object");
 * ```
 */
export function failureCounts(): Record<string, number> {
  return Object.fromEntries(counts);
}

/**
 * Runs a best-effort call: a rejection is logged and counted with
 * {@linkcode logFailure}, never thrown or left unhandled.
 *
 * @param what what is attempted
 * @param promise the call
 *
 * @example Fire and forget
 * ```ts
 * import { bestEffort } from "@webserv/webserv/cdp";
 * bestEffort("an optional cleanup", Promise.resolve());
 * ```
 */
export function bestEffort(what: string, promise: Promise<unknown>): void {
  promise.catch((error) => logFailure(what, error));
}

/**
 * Marks a promise whose rejection is seen elsewhere (awaited later, or
 * raced), so that it never counts as unhandled in the meantime. Not for
 * swallowing: what it rejects with must reach someone.
 *
 * @param promise the promise
 */
export function observed(promise: Promise<unknown>): void {
  promise.catch(() => undefined);
}

/**
 * Waits for a promise to settle, for a queue's tail or a shutdown: what it
 * rejects with was seen by whoever awaited it, so it is not seen again here.
 *
 * @param promise the promise
 * @returns a promise that fulfils once `promise` settled
 */
export function settled(promise: Promise<unknown>): Promise<void> {
  return promise.then(() => undefined, () => undefined);
}
