/**
 * The env's operations, one at a time in call order. Each runs under its
 * deadline and the caller's signal, in an abort scope (so its CDP calls are
 * refused once it is abandoned), watched for a dead browser or a crashed
 * tab; what it throws leaves through the env's error mapping. An abandoned
 * operation holds the next one back until it winds down, or for a grace
 * period at most.
 *
 * @module
 */
import { withSignal } from "./cdp/abort_scope.ts";
import { EnvError } from "./env_error.ts";
import { observed } from "./log.ts";

/** The longest delay `setTimeout` takes; longer ones fire at once. */
const MAX_TIMER_MS = 2 ** 31 - 1;
/** How long the next operation waits for an abandoned one to wind down. */
const ABANDON_GRACE_MS = 1_000;

/** What the queue asks of its env. */
export interface QueueHooks {
  /** Watches for a dead browser (and a crashed tab) while an operation runs; returns the unwatch. */
  watch(what: string, abort: (error: EnvError) => void, watchCrash: boolean): () => void;
  /** What leaves the env when an operation throws. */
  map(error: unknown, what: string, signal: AbortSignal): unknown;
  /** An operation was abandoned for `reason` (its deadline, the caller, the env closing). */
  abandoned(reason: unknown): void;
}

/** Runs an env's operations one at a time, each under its deadline. */
export class OperationQueue {
  #hooks: QueueHooks;
  #tail: Promise<void> = Promise.resolve();
  #ops = new Set<AbortController>();
  #graces = new Set<{ timer: ReturnType<typeof setTimeout>; release(): void }>();

  /** @param hooks what the queue asks of its env */
  constructor(hooks: QueueHooks) {
    this.#hooks = hooks;
  }

  /**
   * Runs `work` once the operations before it are done.
   *
   * @param what what the operation does, for error messages ("observe")
   * @param timeoutMs its deadline, the wait for its turn included
   * @param caller the caller's signal
   * @param work the operation, handed the signal that aborts it
   * @param watchCrash whether a crash of the active tab aborts it
   * @returns what `work` returns
   */
  async run<T>(
    what: string,
    timeoutMs: number,
    caller: AbortSignal | undefined,
    work: (signal: AbortSignal) => Promise<T>,
    watchCrash: boolean,
  ): Promise<T> {
    const controller = new AbortController();
    const signal = controller.signal;
    const abort = (error: EnvError) => {
      if (!signal.aborted) controller.abort(error);
    };
    const timer = setTimeout(
      () =>
        abort(new EnvError("timeout", `Cannot ${what}: the deadline of ${timeoutMs} ms passed`)),
      Math.min(timeoutMs, MAX_TIMER_MS),
    );
    const onCaller = () =>
      abort(
        new EnvError("timeout", `Cannot ${what}: the caller aborted`, { cause: caller?.reason }),
      );
    if (caller?.aborted) onCaller();
    else caller?.addEventListener("abort", onCaller, { once: true });
    const aborted = new Promise<never>((_, reject) => {
      if (signal.aborted) reject(signal.reason);
      else signal.addEventListener("abort", () => reject(signal.reason), { once: true });
    });
    observed(aborted);
    const previous = this.#tail;
    let release!: () => void;
    this.#tail = new Promise((resolve) => release = resolve);
    this.#ops.add(controller);
    let unwatch = () => {};
    let running: Promise<T> | undefined;
    try {
      await Promise.race([previous, aborted]);
      unwatch = this.#hooks.watch(what, abort, watchCrash);
      running = withSignal(signal, () => work(signal));
      observed(running); // awaited below; when the deadline wins, nothing else would
      return await Promise.race([running, aborted]);
    } catch (error) {
      throw this.#hooks.map(error, what, signal);
    } finally {
      clearTimeout(timer);
      caller?.removeEventListener("abort", onCaller);
      unwatch();
      this.#ops.delete(controller);
      if (!running) previous.then(release);
      else if (!signal.aborted) release();
      else this.#abandoned(running, signal, release);
    }
  }

  /** Aborts every operation running or waiting. */
  abortAll(error: EnvError): void {
    for (const op of this.#ops) op.abort(error);
  }

  /** Lets the next operation start at once, whatever abandoned ones still do. */
  releaseAll(): void {
    for (const grace of this.#graces) {
      clearTimeout(grace.timer);
      grace.release();
    }
    this.#graces.clear();
  }

  /**
   * After an operation was abandoned: let the next one start once it wound
   * down, or after a grace period (its CDP calls are refused, so it no
   * longer drives the page).
   */
  #abandoned(running: Promise<unknown>, signal: AbortSignal, release: () => void): void {
    this.#hooks.abandoned(signal.reason);
    const grace = {
      timer: setTimeout(() => done(), ABANDON_GRACE_MS),
      release,
    };
    const done = () => {
      clearTimeout(grace.timer);
      this.#graces.delete(grace);
      release();
    };
    this.#graces.add(grace);
    running.then(done, done);
  }
}
