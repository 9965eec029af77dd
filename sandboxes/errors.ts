/**
 * Errors raised by the sandboxes. A daemon's refusal keeps the HTTP status
 * and the daemon's own message, so callers can tell "not found" from
 * "conflict" without parsing text.
 *
 * @module
 */

/** Options of {@linkcode SandboxError}. */
export interface SandboxErrorOptions extends ErrorOptions {
  /** The HTTP status the daemon answered with, if any. */
  status?: number;
  /** The daemon's own error message, if any. */
  daemonMessage?: string;
  /** Lines of the daemon's logs that say why, if it has them. */
  daemonLog?: string[];
}

/** A sandbox operation failed; the base of all sandbox errors. */
export class SandboxError extends Error {
  /** The HTTP status the daemon answered with, or `0` when there was none. */
  readonly status: number;
  /** The daemon's own error message, or `""` when there was none. */
  readonly daemonMessage: string;
  /**
   * Lines of the daemon's logs that say why, such as the `ERROR` lines of an
   * Incus container's `lxc.log` when its start failed; empty when none.
   */
  readonly daemonLog: string[];

  /**
   * Creates the error.
   *
   * @param message what failed
   * @param options the status, the daemon's message and the cause
   */
  constructor(message: string, options: SandboxErrorOptions = {}) {
    super(message, options);
    this.name = "SandboxError";
    this.status = options.status ?? 0;
    this.daemonMessage = options.daemonMessage ?? "";
    this.daemonLog = options.daemonLog ?? [];
  }
}

/** An instance died, was removed from outside, or no longer answers. */
export class InstanceGoneError extends SandboxError {
  /**
   * Creates the error.
   *
   * @param message what was found
   * @param options the status, the daemon's message and the cause
   */
  constructor(message: string, options: SandboxErrorOptions = {}) {
    super(message, options);
    this.name = "InstanceGoneError";
  }
}

/** An operation did not finish in time. */
export class SandboxTimeoutError extends SandboxError {
  /**
   * Creates the error.
   *
   * @param message what did not finish
   * @param options the cause
   */
  constructor(message: string, options: SandboxErrorOptions = {}) {
    super(message, options);
    this.name = "SandboxTimeoutError";
  }
}

/** The daemon a backend needs is not running or not installed. */
export class DaemonUnavailableError extends SandboxError {
  /**
   * Creates the error.
   *
   * @param message which daemon and what to install
   * @param options the cause
   */
  constructor(message: string, options: SandboxErrorOptions = {}) {
    super(message, options);
    this.name = "DaemonUnavailableError";
  }
}

/**
 * An instance's socket was tampered with from inside its container: a
 * symlink, something else than a socket, or a socket of another owner where
 * the host expected the instance's own. The instance is lost (its container
 * runs a process that is no longer ours); never the agent's error, never a
 * reward.
 */
export class SocketTamperedError extends InstanceGoneError {
  /**
   * Creates the error.
   *
   * @param message what was found, and where
   * @param options the cause
   */
  constructor(message: string, options: SandboxErrorOptions = {}) {
    super(message, options);
    this.name = "SocketTamperedError";
  }
}
