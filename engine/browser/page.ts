/**
 * A page (tab or popup) attached in flat session mode, with the sessions of
 * its out-of-process iframes.
 *
 * @module
 */
import { Emitter } from "../_emitter.ts";
import type { CdpSession } from "../cdp/connection.ts";
import type { BrowserContext } from "./browser_context.ts";

/** The renderer of a page crashed. */
export interface PageCrash {
  /** Chromium's termination status, such as `"crashed"` or `"killed"`. */
  status: string;
  /** Chromium's error code for the termination. */
  errorCode: number;
}

/** Events a {@linkcode Page} emits. */
export interface PageEvents extends Record<string, unknown> {
  /** The renderer crashed; the page stays open but shows nothing. */
  crash: PageCrash;
  /** The page closed; its session is gone. */
  close: { reason: string };
  /** The page opened another page (a popup or a new tab). */
  popup: Page;
  /** An out-of-process iframe attached; its session is ready to use. */
  frameattached: CdpSession;
}

/**
 * One page target. Created by the browser when the target attaches; use
 * {@linkcode BrowserContext.newPage} to make one.
 */
export class Page {
  /** The CDP target id. */
  readonly targetId: string;
  /** The flat session attached to the page's main frame. */
  readonly session: CdpSession;
  /** The context the page belongs to. */
  readonly context: BrowserContext;
  /** The target id of the page that opened this one, if any. */
  readonly openerId: string | undefined;
  #events = new Emitter<PageEvents>();
  #frames = new Set<CdpSession>();
  #closed: string | undefined;
  #crash: PageCrash | undefined;

  /** @internal Pages are created by the browser. */
  constructor(session: CdpSession, context: BrowserContext) {
    const info = session.targetInfo;
    if (!info) throw new TypeError("Cannot create page: the session has no target info");
    this.session = session;
    this.targetId = info.targetId;
    this.context = context;
    this.openerId = info.openerId;
    session.onClose((reason) => this._markClosed(reason));
  }

  /** Sessions of the page's out-of-process iframes attached now. */
  get frameSessions(): CdpSession[] {
    return [...this.#frames];
  }

  /** Whether the page has closed. */
  get closed(): boolean {
    return this.#closed !== undefined;
  }

  /**
   * How the page's renderer crashed, or `undefined` while it runs. A crashed
   * page answers no command that needs its renderer; close it or its context.
   */
  get crash(): PageCrash | undefined {
    return this.#crash;
  }

  /** Adds a listener. */
  on<K extends keyof PageEvents>(event: K, listener: (payload: PageEvents[K]) => void): void {
    this.#events.on(event, listener);
  }

  /** Removes a listener. */
  off<K extends keyof PageEvents>(event: K, listener: (payload: PageEvents[K]) => void): void {
    this.#events.off(event, listener);
  }

  /**
   * Closes the page and waits until its session is gone.
   *
   * @returns once the page is closed; at once if it already was
   */
  async close(): Promise<void> {
    if (this.closed) return;
    const gone = new Promise<void>((resolve) => this.session.onClose(() => resolve()));
    try {
      await this.session.connection.send("Target.closeTarget", { targetId: this.targetId });
    } catch (error) {
      if (!this.closed) throw error;
    }
    await gone;
  }

  /** @internal */
  _emit<K extends keyof PageEvents>(event: K, payload: PageEvents[K]): void {
    this.#events.emit(event, payload);
  }

  /** @internal The browser saw `Target.targetCrashed` for this page. */
  _markCrashed(crash: PageCrash): void {
    if (this.#crash !== undefined || this.closed) return;
    this.#crash = crash;
    this.#events.emit("crash", crash);
  }

  /** @internal */
  _addFrame(session: CdpSession): void {
    this.#frames.add(session);
    session.onClose(() => this.#frames.delete(session));
    this.#events.emit("frameattached", session);
  }

  /** @internal */
  _markClosed(reason: string): void {
    if (this.#closed !== undefined) return;
    this.#closed = reason;
    this.#events.emit("close", { reason });
    this.#events.clear();
  }
}
