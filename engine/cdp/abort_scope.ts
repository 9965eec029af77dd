/**
 * An abort scope for CDP calls: every command sent while a function runs in
 * {@linkcode withSignal} (and in every promise continuation it starts)
 * rejects with the signal's reason once the signal aborts, and is refused
 * from then on. This is how an env stops an operation it abandoned (deadline,
 * caller's abort, crash): no call site needs the signal threaded through.
 *
 * Built on `AsyncLocalStorage` from `node:async_hooks`, which Deno and Node
 * both provide and which follows `await` and `.then` continuations.
 *
 * @module
 */
import { AsyncLocalStorage } from "node:async_hooks";

const scope = new AsyncLocalStorage<AbortSignal | undefined>();

/**
 * Runs `fn` with `signal` as the abort signal of every CDP call it makes;
 * `undefined` runs it outside any scope (cleanup that must not be refused).
 *
 * @param signal the signal, or `undefined` for none
 * @param fn the work
 * @returns what `fn` returns
 */
export function withSignal<T>(signal: AbortSignal | undefined, fn: () => T): T {
  return scope.run(signal, fn);
}

/**
 * The abort signal of the scope the caller runs in, if any.
 *
 * @returns the signal, or `undefined` outside a scope
 */
export function currentSignal(): AbortSignal | undefined {
  return scope.getStore();
}

/**
 * The error a call rejects with when its scope aborted: the signal's reason
 * when it is an `Error`, else a plain one.
 *
 * @param signal an aborted signal
 * @returns the error to reject with
 */
export function abortError(signal: AbortSignal): Error {
  const reason: unknown = signal.reason;
  return reason instanceof Error ? reason : new Error("The operation was aborted");
}
