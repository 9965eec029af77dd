/**
 * A CDP transport over puppeteer-core, for a user who already has a
 * puppeteer `Browser` or `Page` and wants to hand that browser to the engine.
 *
 * @example Hand a puppeteer browser to the engine
 * ```ts ignore
 * import puppeteer from "puppeteer-core";
 * import { Browser, newContext } from "@webserv/webserv/engine";
 * import { PuppeteerTransport } from "@webserv/webserv/adapters/puppeteer";
 * const pptr = await puppeteer.connect({ browserWSEndpoint: "ws://…", defaultViewport: null });
 * const browser = await Browser.connect(await PuppeteerTransport.create(pptr));
 * const page = await (await newContext(browser)).newPage();
 * await browser.close(); // puppeteer stays connected
 * await pptr.disconnect();
 * ```
 *
 * @module
 */
import {
  type Browser as PuppeteerBrowser,
  type CDPSession,
  CDPSessionEvent,
  type Page as PuppeteerPage,
} from "puppeteer-core";
import type { OutgoingMessage, Transport } from "../engine/cdp/mod.ts";
import { bestEffort } from "../engine/log.ts";

/** How this transport calls a puppeteer session: by method name, untyped. */
interface RawSession {
  send(
    method: string,
    params?: Record<string, unknown>,
    options?: { timeout: number },
  ): Promise<unknown>;
}

/** A handler of puppeteer's wildcard event, which mitt calls with the event's name too. */
type WildcardHandler = (type: unknown, params: unknown) => void;

/** How this transport listens to every event of a puppeteer session. */
interface WildcardEmitter {
  on(type: "*", handler: WildcardHandler): unknown;
  off(type: "*", handler: WildcardHandler): unknown;
}

/** A puppeteer error as it reaches a caller of `CDPSession.send()`. */
interface PuppeteerProtocolError {
  message: string;
  originalMessage?: string;
  code?: number;
}

/**
 * Puppeteer's "session closed" event (also fired for every session when the
 * connection drops): a runtime value that its public typings leave out.
 */
const DISCONNECTED: symbol | undefined =
  (CDPSessionEvent as unknown as { Disconnected?: symbol }).Disconnected;

/** Chromium's JSON-RPC error codes (crdtp `DispatchCode`). */
const SERVER_ERROR = -32000;
const SESSION_NOT_FOUND = -32001;

/**
 * A {@linkcode Transport} over a browser-level puppeteer-core `CDPSession`.
 *
 * The transport drives its own DevTools session attached to the browser
 * target (what `browser.target().createCDPSession()` makes), not puppeteer's
 * root session, so the engine's auto-attach, target discovery and contexts
 * stay apart from puppeteer's. Commands without a `sessionId` go
 * to that browser session; flat commands go to
 * `session.connection().session(sessionId)`, the `CDPSession` puppeteer's
 * `Connection` creates for every attached target. Events are heard on every
 * session of the transport's tree (the browser session and each target it
 * attaches, recursively) through puppeteer's wildcard listener, and handed on
 * with their `sessionId`; events of puppeteer's own sessions are not.
 *
 * Limits, from how puppeteer-core 25 works:
 * - puppeteer drops the JSON-RPC error code of a failed command, so the code
 *   handed on is rebuilt from Chromium's message (-32601 for an unknown
 *   method, -32602 for bad params, -32001 for a missing session, -32000
 *   otherwise); the message and its data are passed unchanged;
 * - commands are sent with puppeteer's timeout off (the engine times out its
 *   own calls); a command the browser never answers stays in puppeteer's
 *   registry until the session or connection closes;
 * - puppeteer also attaches every new page on its own root session, runs its
 *   own setup there, and applies its `defaultViewport` to the page: connect
 *   puppeteer with `defaultViewport: null` (and a `targetFilter` if puppeteer
 *   should leave the engine's pages alone entirely);
 * - closing is heard through puppeteer's `CDPSessionEvent.Disconnected`, a
 *   runtime event its public typings omit (the constructor checks it is there);
 * - `close()` detaches the transport's browser session, which disposes the
 *   contexts the engine created, but leaves puppeteer connected.
 *
 * @example Wrap a browser-level session
 * ```ts ignore
 * import { Browser } from "@webserv/webserv";
 * import type { Browser as PuppeteerBrowser } from "puppeteer-core";
 * import { PuppeteerTransport } from "@webserv/webserv/adapters/puppeteer";
 * declare const pptrBrowser: PuppeteerBrowser;
 * const session = await pptrBrowser.target().createCDPSession();
 * const browser = await Browser.connect(new PuppeteerTransport(session));
 * ```
 */
export class PuppeteerTransport implements Transport {
  #root: CDPSession;
  #closed = false;
  /** Sessions whose events are handed on, with their wildcard handlers. */
  #tree = new Map<
    CDPSession,
    { wildcard: WildcardHandler; attached: (child: CDPSession) => void }
  >();
  /** Receives every incoming message, as parsed objects. */
  onmessage: ((message: unknown) => void) | undefined;
  /** Called once when the transport has closed. */
  onclose: ((reason: string) => void) | undefined;

  /**
   * Attaches a new browser-level session to the browser of a puppeteer
   * `Browser` or `Page` and wraps it.
   *
   * @param source a connected puppeteer browser, or one of its pages
   * @returns the transport; closing it detaches the session it made
   * @throws {Error} when puppeteer cannot attach to the browser target
   *
   * @example From a puppeteer page
   * ```ts ignore
   * import type { Page } from "puppeteer-core";
   * import { PuppeteerTransport } from "@webserv/webserv/adapters/puppeteer";
   * declare const pptrPage: Page;
   * const transport = await PuppeteerTransport.create(pptrPage);
   * transport.close();
   * ```
   */
  static async create(source: PuppeteerBrowser | PuppeteerPage): Promise<PuppeteerTransport> {
    const browser = "browser" in source ? source.browser() : source;
    const session = await browser.target().createCDPSession();
    return new PuppeteerTransport(session);
  }

  /**
   * Wraps a browser-level session; the transport takes it over and detaches
   * it when it closes.
   *
   * @param session a `CDPSession` attached to the browser target
   * @throws {TypeError} when the session has no connection or is detached
   */
  constructor(session: CDPSession) {
    if (DISCONNECTED === undefined) {
      throw new TypeError(
        'Cannot create transport: this puppeteer-core has no "CDPSessionEvent.Disconnected"',
      );
    }
    if (session.detached || !session.connection()) {
      throw new TypeError(
        `Cannot create transport: session "${session.id()}" is detached or has no connection`,
      );
    }
    this.#root = session;
    this.#adopt(session);
    session.once(DISCONNECTED, this.#onRootDisconnected);
  }

  /**
   * Sends one command. Never throws: a failure is answered as a CDP error,
   * a closed connection is reported through `onclose`.
   *
   * @param message the command, with its connection id and optional `sessionId`
   */
  send(message: OutgoingMessage): void {
    if (this.#closed) return;
    const { id, method } = message;
    const session = message.sessionId === undefined
      ? this.#root
      : this.#root.connection()?.session(message.sessionId);
    if (!session || session.detached) {
      queueMicrotask(() =>
        this.#deliver({
          id,
          error: { code: SESSION_NOT_FOUND, message: "Session with given id not found." },
        })
      );
      return;
    }
    (session as unknown as RawSession).send(method, message.params, { timeout: 0 }).then(
      (result) => this.#deliver({ id, result }),
      (error: unknown) => this.#deliver({ id, error: toCdpError(method, error) }),
    );
  }

  /** Stops listening, detaches the browser session and calls `onclose`. */
  close(): void {
    if (this.#closed) return;
    const root = this.#root;
    this.#finish("transport closed");
    if (root.detached) return;
    // A root session puppeteer closed meanwhile (its browser or its
    // connection going away) has nothing left to detach: no failure.
    bestEffort(
      "detaching the puppeteer session",
      root.detach().catch((error: unknown) => {
        // Puppeteer's `TargetCloseError`, which its typings do not export.
        if (!(error instanceof Error && error.name === "TargetCloseError")) throw error;
      }),
    );
  }

  #deliver(message: unknown): void {
    if (!this.#closed) this.onmessage?.(message);
  }

  /** Hands on the events of `session` and, recursively, of every target it attaches. */
  #adopt(session: CDPSession): void {
    if (this.#tree.has(session)) return;
    const sessionId = session === this.#root ? undefined : session.id();
    const wildcard: WildcardHandler = (type, params) => {
      // CDP events are named "Domain.event"; puppeteer's own are not.
      if (typeof type !== "string" || !type.includes(".")) return;
      this.#deliver(
        sessionId === undefined ? { method: type, params } : { method: type, params, sessionId },
      );
    };
    // Puppeteer emits this on the parent before the parent's
    // Target.attachedToTarget event, so no event of the child is missed.
    const attached = (child: CDPSession) => this.#adopt(child);
    this.#tree.set(session, { wildcard, attached });
    (session as unknown as WildcardEmitter).on("*", wildcard);
    session.on(CDPSessionEvent.SessionAttached, attached);
    if (session !== this.#root) {
      session.once(DISCONNECTED!, () => this.#release(session));
    }
  }

  #release(session: CDPSession): void {
    const handlers = this.#tree.get(session);
    if (!handlers) return;
    this.#tree.delete(session);
    (session as unknown as WildcardEmitter).off("*", handlers.wildcard);
    session.off(CDPSessionEvent.SessionAttached, handlers.attached);
  }

  #onRootDisconnected = (): void => {
    this.#finish("puppeteer session closed: detached, or its connection was lost");
  };

  #finish(reason: string): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#root.off(DISCONNECTED!, this.#onRootDisconnected);
    for (const session of [...this.#tree.keys()]) this.#release(session);
    this.onclose?.(reason);
  }
}

/**
 * Rebuilds a CDP error object from what puppeteer rejected with. Puppeteer
 * words it `Protocol error (Method): message data` and keeps the browser's
 * message as `originalMessage`, but drops the code.
 */
function toCdpError(
  method: string,
  error: unknown,
): { code: number; message: string; data?: string } {
  const { message = String(error), originalMessage, code } =
    (error ?? {}) as PuppeteerProtocolError;
  const prefix = `Protocol error (${method}): `;
  const full = message.startsWith(prefix) ? message.slice(prefix.length) : message;
  const text = originalMessage || full;
  const data = full.startsWith(text) ? full.slice(text.length).trim() : "";
  return {
    code: typeof code === "number" ? code : inferCode(text),
    message: text,
    ...(data ? { data } : {}),
  };
}

/**
 * Chromium's dispatcher words each JSON-RPC error code its own way; see
 * `third_party/inspector_protocol/crdtp/dispatch.cc`.
 */
function inferCode(message: string): number {
  if (/wasn't found$/.test(message)) return -32601;
  if (/^Invalid parameters/.test(message)) return -32602;
  if (/^Session with given id not found/.test(message)) return SESSION_NOT_FOUND;
  if (/^Target closed/.test(message)) return SESSION_NOT_FOUND;
  if (/^Invalid request|^Message must/.test(message)) return -32600;
  if (/^Internal error/.test(message)) return -32603;
  return SERVER_ERROR;
}

// The transport contract this class implements, so this entry point's
// documentation stands alone.
export type { OutgoingMessage, Transport } from "../engine/cdp/mod.ts";
