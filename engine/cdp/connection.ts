/**
 * A raw CDP client in flat session mode.
 *
 * One {@linkcode Connection} per browser; one {@linkcode CdpSession} per
 * attached target, all multiplexed over the connection's transport by
 * `sessionId`. Invariants:
 * - every call settles exactly once: with the browser's answer, a
 *   {@linkcode ProtocolError}, a {@linkcode CdpTimeoutError}, or a
 *   {@linkcode TargetClosedError} / {@linkcode ConnectionClosedError} when
 *   its target or the whole connection goes away;
 * - a session exists from the moment its `Target.attachedToTarget` event is
 *   read, before any listener sees that event, so listeners can use it.
 *
 * @module
 */
import { Emitter } from "../_emitter.ts";
import { logFailure } from "../log.ts";
import { abortError, currentSignal } from "./abort_scope.ts";
import {
  type CdpErrorOptions,
  CdpTimeoutError,
  ConnectionClosedError,
  ProtocolError,
  TargetClosedError,
} from "./errors.ts";
import type {
  CommandName,
  CommandParamsTuple,
  CommandResult,
  EventName,
  EventParams,
} from "./protocol.ts";
import type { OutgoingMessage, Transport } from "./transport.ts";

/** Per-call options. */
export interface SendOptions {
  /**
   * How long to wait for the browser's answer, in milliseconds.
   *
   * @default {the connection's `timeoutMs`}
   */
  timeoutMs?: number;
}

/** Options for a {@linkcode Connection}. */
export interface ConnectionOptions {
  /**
   * Default timeout of every command, in milliseconds.
   *
   * @default {30000}
   */
  timeoutMs?: number;
}

/** The arguments of `send(method, …)` for command `M`: its params, then options. */
export type SendArgs<M extends CommandName> = CommandParamsTuple<M> extends []
  ? [params?: undefined, options?: SendOptions]
  : CommandParamsTuple<M> extends [infer P] ? [params: P, options?: SendOptions]
  : CommandParamsTuple<M> extends [(infer P)?] ? [params?: P, options?: SendOptions]
  : never;

/** A listener of CDP event `E`. */
export type EventListener<E extends EventName> = (params: EventParams<E>) => void;

interface Pending {
  method: string;
  sessionId: string | undefined;
  resolve(result: unknown): void;
  reject(error: Error): void;
  timer: ReturnType<typeof setTimeout>;
  /** Captured when the call is sent, so the caller's stack survives. */
  origin: Error;
}

type Decoded =
  | { kind: "response"; id: number; sessionId?: string; result: unknown }
  | {
    kind: "error";
    id: number;
    sessionId?: string;
    code?: number;
    message: string;
  }
  | { kind: "event"; method: string; params: unknown; sessionId?: string };

/** Narrows one incoming message; the only place raw CDP JSON is cast. */
function decode(raw: unknown): Decoded | undefined {
  let value = raw;
  if (typeof raw === "string") {
    try {
      value = JSON.parse(raw);
    } catch {
      return undefined;
    }
  }
  if (typeof value !== "object" || value === null) return undefined;
  const message = value as Record<string, unknown>;
  const sessionId = typeof message.sessionId === "string" ? { sessionId: message.sessionId } : {};
  if (typeof message.id === "number") {
    const error = message.error;
    if (typeof error === "object" && error !== null) {
      const { code, message: text, data } = error as Record<string, unknown>;
      const detail = typeof data === "string" ? ` (${data})` : "";
      return {
        kind: "error",
        id: message.id,
        ...sessionId,
        ...(typeof code === "number" ? { code } : {}),
        message: `${typeof text === "string" ? text : "Unknown error"}${detail}`,
      };
    }
    return { kind: "response", id: message.id, ...sessionId, result: message.result ?? {} };
  }
  if (typeof message.method === "string") {
    return { kind: "event", method: message.method, params: message.params ?? {}, ...sessionId };
  }
  return undefined;
}

/**
 * What a connection and a session have in common: send commands, hear events.
 */
export interface CdpClient {
  /** The flat session id; `undefined` for the browser session. */
  readonly sessionId: string | undefined;
  /**
   * Sends a command and resolves with its result.
   *
   * @throws {ProtocolError} when the browser answers with an error
   * @throws {TargetClosedError} when the target goes away first
   * @throws {CdpTimeoutError} when no answer arrives in time
   */
  send<M extends CommandName>(method: M, ...args: SendArgs<M>): Promise<CommandResult<M>>;
  /** Adds a listener for a CDP event on this session. */
  on<E extends EventName>(event: E, listener: EventListener<E>): void;
  /** Removes a listener added with `on`. */
  off<E extends EventName>(event: E, listener: EventListener<E>): void;
  /**
   * Resolves with the next event `E` that matches `predicate`.
   *
   * @throws {CdpTimeoutError} when none arrives within `timeoutMs`
   * @throws {TargetClosedError} when the session closes first
   */
  waitForEvent<E extends EventName>(
    event: E,
    options?: { predicate?: (params: EventParams<E>) => boolean; timeoutMs?: number },
  ): Promise<EventParams<E>>;
}

/**
 * One attached target (page, iframe, worker) in flat session mode.
 * Created by the {@linkcode Connection} when the target attaches.
 */
export class CdpSession implements CdpClient {
  readonly sessionId: string | undefined;
  /** The session that attached this one; `undefined` for top-level targets. */
  readonly parentSessionId: string | undefined;
  /** The attached target's `Target.TargetInfo`, as reported at attach time. */
  readonly targetInfo: EventParams<"Target.attachedToTarget">["targetInfo"] | undefined;
  #connection: Connection;
  #emitter = new Emitter<Record<string, unknown>>();
  #closeReason: string | undefined;
  #closeListeners = new Set<(reason: string) => void>();

  /** @internal Sessions are created by the connection. */
  constructor(
    connection: Connection,
    sessionId: string | undefined,
    attached?: EventParams<"Target.attachedToTarget">,
    parentSessionId?: string,
  ) {
    this.#connection = connection;
    this.sessionId = sessionId;
    this.targetInfo = attached?.targetInfo;
    this.parentSessionId = parentSessionId;
  }

  /** The connection this session runs over. */
  get connection(): Connection {
    return this.#connection;
  }

  /** Why the session closed, or `undefined` while it is open. */
  get closeReason(): string | undefined {
    return this.#closeReason;
  }

  send<M extends CommandName>(method: M, ...args: SendArgs<M>): Promise<CommandResult<M>> {
    return this.#connection._send(this, method, args[0], args[1]);
  }

  on<E extends EventName>(event: E, listener: EventListener<E>): void {
    this.#emitter.on(event, listener as (params: unknown) => void);
  }

  off<E extends EventName>(event: E, listener: EventListener<E>): void {
    this.#emitter.off(event, listener as (params: unknown) => void);
  }

  /**
   * Calls `listener` once when the session closes (detached, target gone or
   * connection closed); at once if it already has.
   */
  onClose(listener: (reason: string) => void): void {
    if (this.#closeReason !== undefined) listener(this.#closeReason);
    else this.#closeListeners.add(listener);
  }

  waitForEvent<E extends EventName>(
    event: E,
    options: { predicate?: (params: EventParams<E>) => boolean; timeoutMs?: number } = {},
  ): Promise<EventParams<E>> {
    const timeoutMs = options.timeoutMs ?? this.#connection.timeoutMs;
    const origin = new Error();
    const signal = currentSignal();
    if (signal?.aborted) return Promise.reject(abortError(signal));
    return new Promise((resolve, reject) => {
      const onAbort = () => finish(abortError(signal!));
      const finish = (error?: Error, params?: EventParams<E>) => {
        clearTimeout(timer);
        this.off(event, listener);
        this.#closeListeners.delete(onClose);
        signal?.removeEventListener("abort", onAbort);
        if (error) {
          error.stack = `${error.name}: ${error.message}${stackTail(origin)}`;
          reject(error);
        } else resolve(params as EventParams<E>);
      };
      const listener = (params: EventParams<E>) => {
        if (!options.predicate || options.predicate(params)) finish(undefined, params);
      };
      const onClose = (reason: string) =>
        finish(
          new TargetClosedError(`Session closed while waiting for "${event}": ${reason}`, {
            ...(this.sessionId ? { sessionId: this.sessionId } : {}),
          }),
        );
      const timer = setTimeout(
        () => finish(new CdpTimeoutError(event, timeoutMs, this.sessionId)),
        timeoutMs,
      );
      this.on(event, listener);
      this.onClose(onClose);
      signal?.addEventListener("abort", onAbort, { once: true });
    });
  }

  /** @internal */
  _emit(method: string, params: unknown): void {
    this.#emitter.emit(method, params);
  }

  /** @internal */
  _close(reason: string): void {
    if (this.#closeReason !== undefined) return;
    this.#closeReason = reason;
    for (const listener of [...this.#closeListeners]) {
      try {
        listener(reason);
      } catch (error) {
        logFailure("session close listener", error);
      }
    }
    this.#closeListeners.clear();
    this.#emitter.clear();
  }
}

function stackTail(origin: Error): string {
  const stack = origin.stack ?? "";
  const firstFrame = stack.indexOf("\n");
  return firstFrame === -1 ? "" : stack.slice(firstFrame);
}

/**
 * A CDP connection to a browser, over any {@linkcode Transport}.
 *
 * @example Evaluate an expression in a page
 * ```ts ignore
 * import { Connection, WebSocketTransport } from "@webserv/webserv/cdp";
 * declare const endpoint: string; // a browser's ws:// endpoint
 * const connection = new Connection(await WebSocketTransport.connect(endpoint));
 * const { targetId } = await connection.send("Target.createTarget", { url: "about:blank" });
 * const { sessionId } = await connection.send("Target.attachToTarget", { targetId, flatten: true });
 * const page = connection.session(sessionId)!;
 * const { result } = await page.send("Runtime.evaluate", { expression: "1 + 1" });
 * connection.close();
 * ```
 */
export class Connection implements CdpClient {
  /** Always `undefined`: the connection itself is the browser session. */
  readonly sessionId: undefined = undefined;
  /** Default timeout of every command, in milliseconds. */
  readonly timeoutMs: number;
  #transport: Transport;
  #nextId = 1;
  #pending = new Map<number, Pending>();
  #root: CdpSession;
  #sessions = new Map<string, CdpSession>();
  #closeReason: string | undefined;
  #closedByClient = false;

  /**
   * Wraps an open transport in a connection.
   *
   * @param transport an open transport; the connection takes it over
   * @param options defaults for every command
   */
  constructor(transport: Transport, options: ConnectionOptions = {}) {
    const timeoutMs = options.timeoutMs ?? 30_000;
    if (!(timeoutMs > 0)) {
      throw new RangeError(
        `Cannot create connection: timeoutMs must be positive, got ${timeoutMs}`,
      );
    }
    this.timeoutMs = timeoutMs;
    this.#transport = transport;
    this.#root = new CdpSession(this, undefined);
    transport.onmessage = (message) => this.#onMessage(message);
    transport.onclose = (reason) => this.#onClose(reason);
  }

  /** Why the connection closed, or `undefined` while it is open. */
  get closeReason(): string | undefined {
    return this.#closeReason;
  }

  /** The sessions attached now, the browser session excluded. */
  get sessions(): CdpSession[] {
    return [...this.#sessions.values()];
  }

  /** The attached session with this id, if any. */
  session(sessionId: string): CdpSession | undefined {
    return this.#sessions.get(sessionId);
  }

  send<M extends CommandName>(method: M, ...args: SendArgs<M>): Promise<CommandResult<M>> {
    return this._send(this.#root, method, args[0], args[1]);
  }

  on<E extends EventName>(event: E, listener: EventListener<E>): void {
    this.#root.on(event, listener);
  }

  off<E extends EventName>(event: E, listener: EventListener<E>): void {
    this.#root.off(event, listener);
  }

  waitForEvent<E extends EventName>(
    event: E,
    options?: { predicate?: (params: EventParams<E>) => boolean; timeoutMs?: number },
  ): Promise<EventParams<E>> {
    return this.#root.waitForEvent(event, options);
  }

  /**
   * Calls `listener` once when the connection closes; at once if it has.
   */
  onClose(listener: (reason: string) => void): void {
    this.#root.onClose(listener);
  }

  /**
   * Whether the connection closed because its client called `close()`, not
   * because the browser went away; `false` while it is open.
   */
  get closedByClient(): boolean {
    return this.#closedByClient;
  }

  /**
   * Closes the transport; every pending call rejects with a
   * {@linkcode ConnectionClosedError} marked `byClient`.
   */
  close(): void {
    // Marked before the transport reports the close (it may do so at once):
    // calls cut short now are a shutdown, not a lost browser.
    if (this.#closeReason === undefined) this.#closedByClient = true;
    this.#transport.close();
    // A transport that never reports the close must not leave calls pending.
    this.#onClose("connection closed by the client");
  }

  /** @internal */
  _send<M extends CommandName>(
    session: CdpSession,
    method: M,
    params: unknown,
    options: SendOptions | undefined,
  ): Promise<CommandResult<M>> {
    const sessionId = session.sessionId;
    const origin = new Error();
    const where = sessionId ? { method, sessionId } : { method };
    if (this.#closeReason !== undefined) {
      return Promise.reject(withStack(this.#closedError(this.#closeReason, where), origin));
    }
    if (session.closeReason !== undefined) {
      return Promise.reject(withStack(new TargetClosedError(session.closeReason, where), origin));
    }
    // An abandoned operation (see `abort_scope.ts`) sends nothing more.
    const signal = currentSignal();
    if (signal?.aborted) return Promise.reject(abortError(signal));
    const timeoutMs = options?.timeoutMs ?? this.timeoutMs;
    const id = this.#nextId++;
    const message: OutgoingMessage = { id, method };
    if (params !== undefined) message.params = params as Record<string, unknown>;
    if (sessionId !== undefined) message.sessionId = sessionId;
    const promise = new Promise<CommandResult<M>>((resolve, reject) => {
      const timer = setTimeout(() => {
        if (!this.#pending.delete(id)) return;
        reject(withStack(new CdpTimeoutError(method, timeoutMs, sessionId), origin));
      }, timeoutMs);
      this.#pending.set(id, {
        method,
        sessionId,
        resolve: resolve as (result: unknown) => void,
        reject,
        timer,
        origin,
      });
      this.#transport.send(message);
    });
    return signal ? this.#abortable(id, promise, signal) : promise;
  }

  /** Rejects the pending call `id` with the scope's reason when `signal` aborts. */
  #abortable<T>(id: number, promise: Promise<T>, signal: AbortSignal): Promise<T> {
    const onAbort = () => {
      const pending = this.#pending.get(id);
      if (!pending) return;
      this.#pending.delete(id);
      clearTimeout(pending.timer);
      pending.reject(abortError(signal));
    };
    signal.addEventListener("abort", onAbort, { once: true });
    const done = () => signal.removeEventListener("abort", onAbort);
    promise.then(done, done);
    return promise;
  }

  #onMessage(raw: unknown): void {
    const message = decode(raw);
    if (!message) {
      logFailure("decoding a CDP message", raw);
      return;
    }
    if (message.kind === "event") {
      this.#onEvent(message.method, message.params, message.sessionId);
      return;
    }
    const pending = this.#pending.get(message.id);
    if (!pending) return; // timed out or rejected on close already
    this.#pending.delete(message.id);
    clearTimeout(pending.timer);
    if (message.kind === "response") {
      pending.resolve(message.result);
      return;
    }
    const where = {
      method: pending.method,
      ...(pending.sessionId ? { sessionId: pending.sessionId } : {}),
    };
    const error = isTargetGone(message.message)
      ? new TargetClosedError(message.message, where)
      : new ProtocolError(message.message, {
        ...where,
        ...(message.code !== undefined ? { code: message.code } : {}),
      });
    pending.reject(withStack(error, pending.origin));
  }

  #onEvent(method: string, params: unknown, sessionId: string | undefined): void {
    if (method === "Target.attachedToTarget") {
      const attached = params as EventParams<"Target.attachedToTarget">;
      if (!this.#sessions.has(attached.sessionId)) {
        this.#sessions.set(
          attached.sessionId,
          new CdpSession(this, attached.sessionId, attached, sessionId),
        );
      }
    }
    const session = sessionId === undefined ? this.#root : this.#sessions.get(sessionId);
    session?._emit(method, params);
    if (method === "Target.detachedFromTarget") {
      const { sessionId: detached } = params as EventParams<"Target.detachedFromTarget">;
      this.#closeSession(detached, "Target detached");
    }
  }

  #closeSession(sessionId: string, reason: string): void {
    const session = this.#sessions.get(sessionId);
    if (!session) return;
    this.#sessions.delete(sessionId);
    for (const [id, pending] of this.#pending) {
      if (pending.sessionId !== sessionId) continue;
      this.#pending.delete(id);
      clearTimeout(pending.timer);
      pending.reject(
        withStack(
          new TargetClosedError(reason, { method: pending.method, sessionId }),
          pending.origin,
        ),
      );
    }
    // Children of a detached session go with it.
    for (const child of [...this.#sessions.values()]) {
      if (child.parentSessionId === sessionId) this.#closeSession(child.sessionId!, reason);
    }
    session._close(reason);
  }

  /** The error of a call on the closed connection, marked when its client closed it. */
  #closedError(reason: string, where: CdpErrorOptions): ConnectionClosedError {
    return new ConnectionClosedError(reason, { ...where, byClient: this.#closedByClient });
  }

  #onClose(reason: string): void {
    if (this.#closeReason !== undefined) return;
    this.#closeReason = `Connection closed: ${reason}`;
    for (const [id, pending] of this.#pending) {
      this.#pending.delete(id);
      clearTimeout(pending.timer);
      const where = {
        method: pending.method,
        ...(pending.sessionId ? { sessionId: pending.sessionId } : {}),
      };
      pending.reject(withStack(this.#closedError(this.#closeReason, where), pending.origin));
    }
    for (const session of [...this.#sessions.values()]) session._close(this.#closeReason);
    this.#sessions.clear();
    this.#root._close(this.#closeReason);
  }
}

/** Messages Chromium sends when the target of a call went away mid-call. */
function isTargetGone(message: string): boolean {
  return /Target closed|Session with given id not found|No target with given id/i
    .test(message);
}

function withStack<E extends Error>(error: E, origin: Error): E {
  error.stack = `${error.name}: ${error.message}${stackTail(origin)}`;
  return error;
}
