/**
 * An isolated browser context: its own cookies, storage and cache.
 *
 * @module
 */
import { Emitter } from "../_emitter.ts";
import type { CdpSession } from "../cdp/connection.ts";
import type { Page } from "./page.ts";

/** What a target initializer is told about the target it prepares. */
export interface AttachedTarget {
  /** `"page"` for a tab or popup, `"iframe"` for an out-of-process frame. */
  kind: "page" | "iframe";
  /** The target's session, paused before its first script runs. */
  session: CdpSession;
}

/**
 * Prepares a target before its first script runs (the browser attaches every
 * target paused). Install document-start scripts and enable domains here.
 * The commands it sends before its first `await` are sent before the target
 * resumes (a paused popup answers nothing until it runs, so the target is not
 * kept paused until the initializer settles).
 */
export type TargetInitializer = (target: AttachedTarget) => Promise<void>;

/** Events a {@linkcode BrowserContext} emits. */
export interface BrowserContextEvents extends Record<string, unknown> {
  /** A page opened in this context, by `newPage()` or by the page itself. */
  page: Page;
  /** The context closed. */
  close: undefined;
}

/** What a context needs from its browser. */
export interface ContextHost {
  /** Creates a page target in a context and resolves once it is attached. */
  _newPage(context: BrowserContext, url: string): Promise<Page>;
  /** Disposes a context. */
  _disposeContext(context: BrowserContext): Promise<void>;
  /** Paths of the same files that the browser can read (see {@linkcode BrowserContext.shareFiles}). */
  _shareFiles?(paths: string[]): Promise<string[]>;
}

/**
 * One isolated browser context (CDP `Target.createBrowserContext`). Cookies,
 * storage and cache are not shared with any other context. Create one with
 * `newContext(Browser)`.
 */
export class BrowserContext implements AsyncDisposable {
  /** The CDP browser context id. */
  readonly id: string;
  #host: ContextHost;
  #pages = new Set<Page>();
  #initializers: TargetInitializer[] = [];
  #events = new Emitter<BrowserContextEvents>();
  #closed = false;

  /** @internal Contexts are created by the browser. */
  constructor(host: ContextHost, id: string) {
    this.#host = host;
    this.id = id;
  }

  /** The open pages of this context, popups included. */
  get pages(): Page[] {
    return [...this.#pages];
  }

  /** Whether the context has closed. */
  get closed(): boolean {
    return this.#closed;
  }

  /** The initializers every new target of this context runs, in order. */
  get initializers(): readonly TargetInitializer[] {
    return this.#initializers;
  }

  /**
   * Adds an initializer that runs on every page and out-of-process iframe
   * attached from now on, before its first script.
   *
   * @param initializer the function to run; a rejection is logged and the target still starts
   */
  addInitializer(initializer: TargetInitializer): void {
    this.#initializers.push(initializer);
  }

  /** Adds a listener. */
  on<K extends keyof BrowserContextEvents>(
    event: K,
    listener: (payload: BrowserContextEvents[K]) => void,
  ): void {
    this.#events.on(event, listener);
  }

  /** Removes a listener. */
  off<K extends keyof BrowserContextEvents>(
    event: K,
    listener: (payload: BrowserContextEvents[K]) => void,
  ): void {
    this.#events.off(event, listener);
  }

  /**
   * Opens a new page in this context.
   *
   * @param url what to load
   * @returns the page, attached and initialized
   * @throws {Error} when the context is closed
   */
  newPage(url = "about:blank"): Promise<Page> {
    if (this.#closed) {
      return Promise.reject(new Error(`Cannot open a page: context "${this.id}" is closed`));
    }
    return this.#host._newPage(this, url);
  }

  /**
   * Paths of the same files that the browser can read: for a Chromium that
   * runs as another user (launched from root), copies in its profile owned
   * by that user; otherwise the paths as given. For `DOM.setFileInputFiles`.
   *
   * @param paths real paths of regular files
   * @returns the paths to hand the browser
   */
  shareFiles(paths: string[]): Promise<string[]> {
    return this.#host._shareFiles?.(paths) ?? Promise.resolve(paths);
  }

  /** Closes the context and every page in it. Safe to call more than once. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#host._disposeContext(this);
    for (const page of this.#pages) page._markClosed("Context closed");
    this.#pages.clear();
    this.#events.emit("close", undefined);
    this.#events.clear();
  }

  /** Closes the context. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  /** @internal */
  _addPage(page: Page): void {
    this.#pages.add(page);
    page.on("close", () => this.#pages.delete(page));
    this.#events.emit("page", page);
  }
}
