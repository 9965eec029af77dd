/**
 * Errors raised by the CDP client.
 *
 * One small hierarchy: {@linkcode ProtocolError} records the method, the code
 * and the browser's message; {@linkcode TargetClosedError} and
 * {@linkcode ConnectionClosedError} extend it so callers can tell "page gone"
 * from "command failed"; {@linkcode CdpTimeoutError} names the method and
 * session of a call the browser never answered.
 *
 * @module
 */

/** Options shared by the CDP errors. */
export interface CdpErrorOptions extends ErrorOptions {
  /** The CDP method of the failed call, such as `"Runtime.evaluate"`. */
  method?: string;
  /** The session the call was sent on; absent for the browser session. */
  sessionId?: string;
}

/**
 * A CDP command failed: the browser answered with an error, or the call could
 * not be completed.
 *
 * @example Catch a protocol error
 * ```ts
 * import { ProtocolError } from "./errors.ts";
 * const error = new ProtocolError("No node with given id found", {
 *   method: "DOM.describeNode",
 *   code: -32000,
 * });
 * console.assert(error.code === -32000);
 * ```
 */
export class ProtocolError extends Error {
  /** The CDP method of the failed call. */
  readonly method: string | undefined;
  /** The session the call was sent on. */
  readonly sessionId: string | undefined;
  /** The JSON-RPC error code the browser sent, when it sent one. */
  readonly code: number | undefined;
  /** The browser's own message, unaltered. */
  readonly browserMessage: string;

  /**
   * Creates the error from the browser's answer.
   *
   * @param message the browser's message
   * @param options the method, session and code
   */
  constructor(message: string, options: CdpErrorOptions & { code?: number } = {}) {
    const where = options.method ? `${options.method}: ` : "";
    super(`${where}${message}`, options);
    this.name = "ProtocolError";
    this.method = options.method;
    this.sessionId = options.sessionId;
    this.code = options.code;
    this.browserMessage = message;
  }
}

/**
 * The target (page, frame, worker) a command was sent to has gone: it was
 * closed, crashed or detached before answering.
 */
export class TargetClosedError extends ProtocolError {
  /**
   * Creates the error for a call whose target went away.
   *
   * @param message why the target is gone
   * @param options the method and session
   */
  constructor(message: string, options: CdpErrorOptions = {}) {
    super(message, options);
    this.name = "TargetClosedError";
  }
}

/** Options of a {@linkcode ConnectionClosedError}. */
export interface ConnectionClosedErrorOptions extends CdpErrorOptions {
  /**
   * Whether the connection's own client closed it (`Connection.close()`).
   *
   * @default {false}
   */
  byClient?: boolean;
}

/**
 * The connection to the browser closed: the socket dropped or the browser
 * exited, or the client closed it. Every pending command rejects with this
 * error at once.
 */
export class ConnectionClosedError extends TargetClosedError {
  /**
   * Whether the client closed the connection itself (closing the browser):
   * a normal shutdown, where `false` means the browser was lost.
   */
  readonly byClient: boolean;

  /**
   * Creates the error for a call whose connection closed.
   *
   * @param message why the connection closed
   * @param options the method and session, and whether the client closed it
   */
  constructor(message: string, options: ConnectionClosedErrorOptions = {}) {
    const { byClient = false, ...rest } = options;
    super(message, rest);
    this.name = "ConnectionClosedError";
    this.byClient = byClient;
  }
}

/** A CDP command got no answer within its timeout. */
export class CdpTimeoutError extends Error {
  /** The CDP method of the call that timed out. */
  readonly method: string;
  /** The session the call was sent on; absent for the browser session. */
  readonly sessionId: string | undefined;
  /** The timeout that elapsed, in milliseconds. */
  readonly timeoutMs: number;

  /**
   * Creates the error for a call that got no answer in time.
   *
   * @param method the CDP method
   * @param timeoutMs the timeout that elapsed
   * @param sessionId the session the call was sent on
   */
  constructor(method: string, timeoutMs: number, sessionId?: string) {
    const session = sessionId ? ` on session "${sessionId}"` : "";
    super(`CDP command "${method}"${session} timed out after ${timeoutMs} ms`);
    this.name = "CdpTimeoutError";
    this.method = method;
    this.sessionId = sessionId;
    this.timeoutMs = timeoutMs;
  }
}
