/**
 * When sessions expire and what they answer afterwards: the lease (an idle
 * timeout renewed by use, capped by a hard lifetime), which sessions the
 * reaper closes, and the tombstones that make a closed session answer
 * `expired` rather than "not found".
 *
 * @module
 */
import { HttpError } from "./http_error.ts";
import type { LeaseBody, StepResponse } from "./protocol.ts";

/** The limits of a lease, read on every use; the defaults when absent. */
export interface ExpiryLimits {
  /** Idle time after which a session is reaped, in milliseconds (default 300000). */
  readonly idleTimeoutMs?: number;
  /** The hard lifetime of a session, in milliseconds (default 3600000). */
  readonly lifetimeMs?: number;
}

/** What a lease is computed from. */
export interface Leased {
  /** When the session opened (epoch milliseconds). */
  readonly createdAt: number;
  /** When it was last used (epoch milliseconds). */
  readonly lastUsed: number;
  /** How many operations are queued or running on it. */
  readonly busy: number;
  /**
   * How many connections hold it open (a WebSocket): while one does it is
   * never reaped for idling, and its idle time counts from the last release.
   */
  readonly attached: number;
  /** Its own idle timeout, from its spec, instead of the server's. */
  readonly spec: { readonly idle_timeout_s?: number | undefined };
}

const TOMBSTONES = 10_000;

/** Leases, reaping and the tombstones of closed sessions. */
export class Expiry {
  #limits: ExpiryLimits;
  #tombstones = new Map<string, string>();

  /**
   * Creates the bookkeeping.
   *
   * @param limits the idle timeout and lifetime
   */
  constructor(limits: ExpiryLimits) {
    this.#limits = limits;
  }

  /**
   * A session's lease.
   *
   * @param session the session
   * @returns when it expires if left idle, and at the latest
   */
  lease(session: Leased): LeaseBody {
    const idle = this.#idle(session);
    const hard = session.createdAt + this.#lifetime();
    return {
      expires_at: new Date(Math.min(session.lastUsed + idle, hard)).toISOString(),
      idle_timeout_s: idle / 1000,
      hard_expires_at: new Date(hard).toISOString(),
    };
  }

  /**
   * Whether a session outlived its lifetime.
   *
   * @param session the session
   * @param now the time (epoch milliseconds)
   * @returns whether it is past its hard expiry
   */
  outlived(session: Leased, now: number = Date.now()): boolean {
    return now - session.createdAt > this.#lifetime();
  }

  /**
   * Why the reaper closes a session now, if it does.
   *
   * @param session the session
   * @param now the time (epoch milliseconds)
   * @returns `"lifetime"`, `"idle"`, or `undefined` to keep it
   */
  due(session: Leased, now: number): "lifetime" | "idle" | undefined {
    // A session is never closed under a running operation; it goes when that ends.
    if (session.busy > 0) return undefined;
    if (this.outlived(session, now)) return "lifetime";
    if (session.attached === 0 && now - session.lastUsed > this.#idle(session)) return "idle";
    return undefined;
  }

  /**
   * Remembers why a session closed; the oldest are forgotten past a cap.
   *
   * @param id the session
   * @param reason why it closed
   */
  tombstone(id: string, reason: string): void {
    this.#tombstones.set(id, reason);
    if (this.#tombstones.size > TOMBSTONES) {
      this.#tombstones.delete(this.#tombstones.keys().next().value!);
    }
  }

  /**
   * The refusal for a session that is not live.
   *
   * @param id the session
   * @returns 410 when it expired, 404 when it never was
   */
  gone(id: string): HttpError {
    const reason = this.#tombstones.get(id);
    if (reason !== undefined) {
      return new HttpError(410, "expired", `Session "${id}" expired: ${reason}`);
    }
    return new HttpError(404, "not-found", `No session "${id}"`);
  }

  /**
   * The answer to a step on a session that is not live.
   *
   * @param id the session
   * @returns the `expired` step
   * @throws {HttpError} 404 when it never was
   */
  expiredStep(id: string): StepResponse {
    const reason = this.#tombstones.get(id);
    if (reason === undefined) throw new HttpError(404, "not-found", `No session "${id}"`);
    return {
      status: "expired",
      observation: null,
      done: true,
      truncated: true,
      info: {
        step: 0,
        elapsed_ms: 0,
        error: { code: "expired", message: `Session "${id}" expired: ${reason}` },
      },
    };
  }

  #idle(session: Leased): number {
    const own = session.spec.idle_timeout_s;
    return own !== undefined ? own * 1000 : this.#limits.idleTimeoutMs ?? 300_000;
  }

  #lifetime(): number {
    return this.#limits.lifetimeMs ?? 3_600_000;
  }
}
