/**
 * Whether sessions may open now: not while the server shuts down, not a
 * group larger than the cap, not past the cap on live sessions.
 *
 * @module
 */
import { HttpError } from "./http_error.ts";

/** What admission reads of the server. */
export interface Occupancy {
  /** Whether the server is shutting down. */
  readonly closing: boolean;
  /** Sessions open now, and being opened. */
  readonly live: number;
  /** The cap on live sessions. */
  readonly max: number;
}

/**
 * Admits `n` new sessions, or refuses them.
 *
 * @param n how many would open
 * @param occupancy the server's state
 * @throws {HttpError} 503 while shutting down, 400 for a group past the cap,
 *   429 with Retry-After past the live cap
 */
export function admission(n: number, occupancy: Occupancy): void {
  const { closing, live, max } = occupancy;
  // Waiting does not help a server going down, nor a group past the cap:
  // neither refusal carries Retry-After.
  if (closing) {
    throw new HttpError(503, "shutting-down", "The server is shutting down");
  }
  if (n > max) {
    throw new HttpError(
      400,
      "group-too-large",
      `A group of ${n} cannot open here: the server's cap is ${max} live sessions ` +
        "(--max-sessions); split the group or raise the cap",
    );
  }
  if (live + n > max) {
    throw new HttpError(
      429,
      "capacity",
      `Cannot open ${n} session(s): ${live} of ${max} are live`,
      { "Retry-After": "5" },
    );
  }
}
