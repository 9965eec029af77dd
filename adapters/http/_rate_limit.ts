/**
 * A per-client rate limit over a sliding window: each client may make at
 * most `limit` requests in any `windowMs`; past it the request is refused
 * with the milliseconds until the oldest one leaves the window (the
 * `Retry-After` the server sends). Bounded: at most `maxClients` clients are
 * remembered, the one seen longest ago forgotten past it, and each keeps at
 * most `limit` times, so no client can grow it.
 *
 * @module
 */

/** Options of {@linkcode RateLimit}. */
export interface RateLimitOptions {
  /** Requests a client may make in a window. */
  limit: number;
  /**
   * The window, in milliseconds.
   *
   * @default {60000}
   */
  windowMs?: number;
  /**
   * The most clients remembered.
   *
   * @default {10000}
   */
  maxClients?: number;
  /**
   * The clock, in milliseconds (tests give their own).
   *
   * @default {performance.now}
   */
  now?: () => number;
}

/** A sliding-window limit per client key. */
export class RateLimit {
  #times = new Map<string, number[]>();
  #limit: number;
  #windowMs: number;
  #maxClients: number;
  #now: () => number;

  /**
   * Creates a limit.
   *
   * @param options how many requests per window, and the bounds
   * @throws {RangeError} when `limit` is not a whole number ≥ 1
   */
  constructor(options: RateLimitOptions) {
    if (!Number.isSafeInteger(options.limit) || options.limit < 1) {
      throw new RangeError(`Invalid rate limit ${options.limit}: expected a whole number >= 1`);
    }
    this.#limit = options.limit;
    this.#windowMs = options.windowMs ?? 60_000;
    this.#maxClients = options.maxClients ?? 10_000;
    this.#now = options.now ?? (() => performance.now());
  }

  /**
   * Counts a request of a client, when the window has room for it.
   *
   * @param client the client's key
   * @returns `0` when the request is allowed (and counted), else the
   *   milliseconds until it would be
   */
  take(client: string): number {
    const now = this.#now();
    const times = (this.#times.get(client) ?? []).filter((t) => now - t < this.#windowMs);
    // Seen now: the client moves to the end, so the one seen longest ago is forgotten first.
    this.#times.delete(client);
    if (times.length >= this.#limit) {
      this.#times.set(client, times);
      return Math.max(1, Math.ceil((times[0] as number) + this.#windowMs - now));
    }
    times.push(now);
    this.#times.set(client, times);
    while (this.#times.size > this.#maxClients) {
      this.#times.delete(this.#times.keys().next().value as string);
    }
    return 0;
  }
}
