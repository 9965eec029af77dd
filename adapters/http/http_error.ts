/**
 * The one error the server's handlers throw for a request they refuse; the
 * app's `onError` turns it into `{ code, message }` with its status.
 *
 * @module
 */

/** The HTTP statuses the server refuses requests with. */
export type RefusalStatus = 400 | 401 | 403 | 404 | 409 | 410 | 413 | 415 | 422 | 429 | 500 | 503;

/**
 * A refused request: an HTTP status, a stable code and a message.
 *
 * @example Refuse an unknown session
 * ```ts
 * import { HttpError } from "./http_error.ts";
 * const error = new HttpError(404, "not-found", 'No session "s-1"');
 * console.assert(error.status === 404);
 * ```
 */
export class HttpError extends Error {
  /** The HTTP status. */
  readonly status: RefusalStatus;
  /** A stable code, such as `"not-found"`. */
  readonly code: string;
  /** Headers to send along, such as `Retry-After`. */
  readonly headers: Record<string, string>;

  /**
   * Creates a refusal.
   *
   * @param status the HTTP status
   * @param code a stable code
   * @param message what was wrong, in sentence case
   * @param headers extra response headers
   */
  constructor(
    status: RefusalStatus,
    code: string,
    message: string,
    headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = "HttpError";
    this.status = status;
    this.code = code;
    this.headers = headers;
  }
}
