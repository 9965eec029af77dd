/**
 * The server's one browser: launched (or reached at a `ws://` endpoint)
 * when first needed, and started again as soon as it dies.
 *
 * @module
 */
import { Browser } from "../../mod.ts";
import { logFailure, settled } from "../../engine/log.ts";

/** What the holder launches or connects with. */
export interface BrowserHolderOptions {
  /** A running browser's DevTools WebSocket URL; a browser is launched when absent. */
  browserUrl?: string;
  /**
   * Whether the launched browser installs its own SIGINT/SIGTERM handlers.
   *
   * @default {true}
   */
  browserHandlesSignals?: boolean;
  /** The size of the browser's warm pool of contexts; the browser's default when absent. */
  contextPool?: number;
}

/** One browser at a time; a dead one is replaced on the next use. */
export class BrowserHolder {
  #options: BrowserHolderOptions;
  #browser: Browser | undefined;
  #starting: Promise<Browser> | undefined;
  #closed = false;

  constructor(options: BrowserHolderOptions) {
    this.#options = options;
  }

  get current(): Browser | undefined {
    return this.#browser;
  }

  get connected(): boolean {
    return this.#browser?.connected ?? false;
  }

  get(): Promise<Browser> {
    if (this.#closed) return Promise.reject(new Error("The server is shutting down"));
    const browser = this.#browser;
    if (browser?.connected) return Promise.resolve(browser);
    return this.#starting ??= this.#start().finally(() => this.#starting = undefined);
  }

  async close(): Promise<void> {
    this.#closed = true;
    if (this.#starting) await settled(this.#starting); // its failure was its callers'
    await this.#browser?.close().catch((error) => logFailure("close the browser", error));
  }

  async #start(): Promise<Browser> {
    const old = this.#browser;
    if (old) await old.close().catch((error) => logFailure("close the dead browser", error));
    const url = this.#options.browserUrl;
    const pool = this.#options.contextPool;
    const sized = pool === undefined ? {} : { contextPool: pool };
    const browser = url ? await Browser.connect(url, sized) : await Browser.launch({
      handleSignals: this.#options.browserHandlesSignals ?? true,
      ...sized,
    });
    this.#browser = browser;
    // Start the next browser as soon as this one dies, not on the next request.
    browser.on("disconnected", () => {
      if (this.#closed || this.#browser !== browser) return;
      this.get().catch((error) => logFailure("start a new browser", error));
    });
    return browser;
  }
}
