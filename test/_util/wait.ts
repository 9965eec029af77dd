/**
 * Bounded waiting for tests: poll a condition until it holds, and fail loudly
 * with a message a person can act on when it does not within the bound. A
 * test never waits without a bound, and never sleeps to prove that something
 * did not happen.
 *
 * @module
 */

/** How {@linkcode waitFor} waits. */
export interface WaitOptions {
  /** What was awaited, for the error; say what should have happened. */
  message: string;
  /** Give up after this many milliseconds (default 10,000: generous, for a loaded machine). */
  timeoutMs?: number;
  /** Poll every this many milliseconds (default 10). */
  intervalMs?: number;
}

/** A wait that ran out: its message and how long it waited. */
export class WaitTimeout extends Error {
  /**
   * Creates the error.
   *
   * @param message what was awaited
   * @param ms how long it waited
   * @param last the last value the condition gave, for the report
   */
  constructor(message: string, ms: number, last: unknown) {
    super(`${message}: not within ${ms} ms (last value: ${describe(last)})`);
    this.name = "WaitTimeout";
  }
}

function describe(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

/**
 * Polls `condition` until it answers a truthy value, and answers that value.
 * An exception from the condition fails the wait at once.
 *
 * @param condition checked now and after every interval; may be async
 * @param options the message and the bound
 * @returns the first truthy value of the condition
 * @throws {WaitTimeout} when the bound passes first
 * @example Wait for a counter
 * ```ts ignore
 * await waitFor(() => server.sessions.live === 0, { message: "the session closes" });
 * ```
 */
export async function waitFor<T>(
  condition: () => T | Promise<T>,
  options: WaitOptions,
): Promise<NonNullable<T>> {
  const { message, timeoutMs = 10_000, intervalMs = 10 } = options;
  const start = performance.now();
  for (;;) {
    const value = await condition();
    if (value) return value as NonNullable<T>;
    if (performance.now() - start >= timeoutMs) throw new WaitTimeout(message, timeoutMs, value);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

/**
 * Settles like `promise`, or rejects with {@linkcode WaitTimeout} when it has
 * not settled within the bound: for an event a test awaits.
 *
 * @param promise what to await
 * @param options the message and the bound (`intervalMs` is unused)
 * @returns the promise's value
 * @throws {WaitTimeout} when the bound passes first
 */
export async function within<T>(promise: Promise<T>, options: WaitOptions): Promise<T> {
  const { message, timeoutMs = 10_000 } = options;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new WaitTimeout(message, timeoutMs, "pending")), timeoutMs);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
