/**
 * A browser driven over raw CDP: launched here or connected to, with isolated
 * contexts, pages, popups and out-of-process iframes reached by auto-attach.
 *
 * @module
 */
import { Emitter } from "../_emitter.ts";
import { bestEffort, logFailure, observed } from "../log.ts";
import { type CdpSession, Connection, type ConnectionOptions } from "../cdp/connection.ts";
import type { CommandResult, EventParams } from "../cdp/protocol.ts";
import type { Transport } from "../cdp/transport.ts";
import { connectTransport, launchAndConnect } from "./_connect.ts";
import { checkViewport, networkPolicy, viewportInitializer } from "./_context_options.ts";
import { type PageWaiter, waitForPage } from "./_page_waiters.ts";
import { BrowserContext } from "./browser_context.ts";
import type { BrowserExit, BrowserProcess, BrowserProcessOptions } from "./browser_process.ts";
import { Page } from "./page.ts";

/**
 * Options for {@linkcode Browser.launch}: how to start the process, how long
 * to wait for it, and the default timeout of CDP commands afterwards.
 */
export interface LaunchOptions extends Omit<BrowserProcessOptions, "timeoutMs"> {
  /**
   * How long to wait for the browser to start and give its DevTools endpoint,
   * in milliseconds.
   *
   * @default {30000}
   */
  launchTimeoutMs?: number;
  /**
   * Default timeout of every CDP command on the connection, in milliseconds
   * (a call can override it with `SendOptions.timeoutMs`).
   *
   * @default {30000}
   */
  commandTimeoutMs?: number;
  /**
   * How many ready contexts the browser's warm pool keeps per kind (see
   * `ContextPool` in `./engine`); 0 turns the pool off.
   *
   * @default {2}
   */
  contextPool?: number;
}

/** Options for {@linkcode Browser.connect}. */
export interface ConnectOptions extends ConnectionOptions {
  /**
   * How many ready contexts the browser's warm pool keeps per kind (see
   * `ContextPool` in `./engine`); 0 turns the pool off.
   *
   * @default {2}
   */
  contextPool?: number;
}

/** Events a {@linkcode Browser} emits. */
export interface BrowserEvents extends Record<string, unknown> {
  /** The connection to the browser closed. */
  disconnected: { reason: string };
  /** The launched browser process exited. */
  exit: BrowserExit;
}

/** Options of {@linkcode Browser.newContext}. */
export interface NewContextOptions {
  /**
   * The only origins the context's pages may reach, such as
   * `["http://env-3.localhost:8800"]`: every other request fails, loopback
   * included. `data:`, `blob:` and `about:` documents still work.
   *
   * @default {every origin}
   */
  onlyOrigins?: string[];
  /**
   * The viewport of every page of the context, popups included, in CSS
   * pixels (`Emulation.setDeviceMetricsOverride`). Without it a page gets
   * the window size headless Chromium gives a new window (780 × 493).
   *
   * @default {the window's size}
   */
  viewport?: Viewport;
}

/** A viewport in CSS pixels. */
export interface Viewport {
  /** Width, at least 1. */
  width: number;
  /** Height, at least 1. */
  height: number;
}

/** Throws the caller's mistake before anything starts: a pool size is a whole number. */
function checkPoolSize(size: number | undefined): void {
  if (size !== undefined && (!Number.isInteger(size) || size < 0)) {
    throw new RangeError(
      `Cannot start the browser: "contextPool" must be an integer >= 0, got ${size}`,
    );
  }
}

/** Settings every attached page and frame gets: run paused, attach children. */
const AUTO_ATTACH = { autoAttach: true, waitForDebuggerOnStart: true, flatten: true } as const;

/**
 * The engine beneath a {@linkcode Browser}: its connection, process and
 * contexts. Kept off the class so the root entry point, which exports
 * `Browser` for launching and connecting, documents no CDP types.
 */
export interface BrowserInternals {
  /** The CDP connection to the browser; a new one after {@linkcode Browser.relaunch}. */
  readonly connection: Connection;
  /** The browser process, when this browser was launched here; a new one after a relaunch. */
  readonly process: BrowserProcess | undefined;
  /** The contexts this browser created that are still open. */
  readonly contexts: BrowserContext[];
  /** The size its warm pool starts with (`contextPool` of the launch or connect options). */
  readonly contextPool: number | undefined;
  /**
   * The browser's product and protocol versions.
   *
   * @returns `Browser.getVersion`'s answer
   */
  version(): Promise<CommandResult<"Browser.getVersion">>;
  /**
   * Creates an isolated context: cookies, storage and cache of its own.
   *
   * @param options which origins the context may reach, and its viewport
   * @returns the new context
   * @throws {TypeError} when an entry of `onlyOrigins` is not an http(s) origin
   */
  newContext(options?: NewContextOptions): Promise<BrowserContext>;
}

/** Set by `Browser`'s static block, which alone reaches its private state. */
let internalsOf: (browser: Browser) => BrowserInternals;

/**
 * The engine beneath a browser: its CDP connection, process, contexts and
 * version.
 *
 * @param browser the browser
 * @returns its internals; each getter reads the current connection and process
 *
 * @example Ask the browser its version
 * ```ts ignore
 * import { Browser, browserInternals } from "@webserv/webserv/engine";
 * await using browser = await Browser.launch();
 * console.log((await browserInternals(browser).version()).product);
 * ```
 */
export function browserInternals(browser: Browser): BrowserInternals {
  return internalsOf(browser);
}

/**
 * Creates an isolated context in a browser: cookies, storage and cache of its own.
 *
 * @param browser the browser
 * @param options which origins the context may reach, and its viewport
 * @returns the new context
 * @throws {TypeError} when an entry of `onlyOrigins` is not an http(s) origin
 *
 * @example Open a page in a fresh context
 * ```ts ignore
 * import { Browser, newContext } from "@webserv/webserv/engine";
 * await using browser = await Browser.launch();
 * const context = await newContext(browser);
 * const page = await context.newPage("data:text/html,<h1>Hi</h1>");
 * ```
 */
export function newContext(
  browser: Browser,
  options: NewContextOptions = {},
): Promise<BrowserContext> {
  return internalsOf(browser).newContext(options);
}

/**
 * A browser: one CDP connection, many isolated contexts.
 *
 * A launched browser that died (killed, crashed, out of memory) can be
 * started again in place with {@linkcode Browser.relaunch}: the same
 * `Browser` object gets a new process and connection, so whatever holds it
 * (a trainer, an `Env`) keeps working; contexts and pages of the old process
 * are closed, and an `Env` recovers with `reset()`.
 *
 * Its contexts, connection and process are the engine's:
 * {@linkcode newContext} and {@linkcode browserInternals} in `./engine`.
 *
 * @example Open an env in a launched browser
 * ```ts ignore
 * import { Browser, Env } from "@webserv/webserv";
 * await using browser = await Browser.launch();
 * await using env = await Env.create(browser, { startUrl: "data:text/html,<h1>Hi</h1>" });
 * ```
 */
export class Browser implements AsyncDisposable {
  #connection: Connection;
  #process: BrowserProcess | undefined;
  #launchOptions: LaunchOptions | undefined;
  #relaunching: Promise<void> | undefined;
  #contexts = new Map<string, BrowserContext>();
  #pages = new Map<string, Page>();
  #pageWaiters = new Map<string, PageWaiter>();
  #events = new Emitter<BrowserEvents>();
  #closing: Promise<void> | undefined;
  #contextPool: number | undefined;

  private constructor(connection: Connection, process?: BrowserProcess) {
    this.#connection = connection;
    this.#process = process;
    this.#wire(connection, process);
  }

  // One object per browser, so a test's spy on one of its methods sees every call.
  #internals: BrowserInternals | undefined;

  static {
    internalsOf = (browser) =>
      browser.#internals ??= {
        get connection() {
          return browser.#connection;
        },
        get process() {
          return browser.#process;
        },
        get contexts() {
          return [...browser.#contexts.values()];
        },
        get contextPool() {
          return browser.#contextPool;
        },
        version: () => browser.#connection.send("Browser.getVersion"),
        newContext: (options = {}) => browser.#newContext(options),
      };
  }

  /**
   * Whether the launched Chromium runs with its sandbox (see
   * {@linkcode BrowserProcess.sandbox} for the user and the reason);
   * undefined for a browser connected to.
   */
  get sandboxed(): boolean | undefined {
    return this.#process?.sandbox.sandboxed;
  }

  #wire(connection: Connection, process: BrowserProcess | undefined): void {
    connection.onClose((reason) => {
      if (connection !== this.#connection) return;
      for (const waiter of [...this.#pageWaiters.values()]) {
        waiter.reject(new Error(`Cannot open a page: ${reason}`));
      }
      this.#pageWaiters.clear();
      this.#events.emit("disconnected", { reason });
    });
    process?.exited.then((exit) => {
      if (process === this.#process) this.#events.emit("exit", exit);
    });
  }

  /**
   * Launches a browser with a fresh profile and connects to it.
   *
   * @param options the executable, flags and timeouts
   * @returns the connected browser
   * @throws {BrowserNotFoundError} when no browser executable is found
   * @throws {BrowserLaunchError} when the browser does not start
   * @throws {RangeError} when `contextPool` is not an integer >= 0
   */
  static async launch(options: LaunchOptions = {}): Promise<Browser> {
    checkPoolSize(options.contextPool);
    const { process, connection } = await launchAndConnect(options);
    try {
      const browser = await Browser.#start(connection, process);
      browser.#launchOptions = options;
      browser.#contextPool = options.contextPool;
      return browser;
    } catch (error) {
      await process.kill();
      throw error;
    }
  }

  /**
   * Connects to a running browser: a `ws://` DevTools endpoint (a remote or
   * hosted browser) or any {@linkcode Transport} (see `adapters/`).
   *
   * @param endpoint a browser-level `ws://` URL or an open transport
   * @param options command timeouts
   * @returns the connected browser; `close()` leaves the browser running
   * @throws {TypeError} when the URL is not a WebSocket URL
   * @throws {RangeError} when `contextPool` is not an integer >= 0
   */
  static async connect(
    endpoint: string | Transport,
    options: ConnectOptions = {},
  ): Promise<Browser> {
    checkPoolSize(options.contextPool);
    const transport = typeof endpoint === "string" ? await connectTransport(endpoint) : endpoint;
    const browser = await Browser.#start(new Connection(transport, options));
    browser.#contextPool = options.contextPool;
    return browser;
  }

  static async #start(connection: Connection, process?: BrowserProcess): Promise<Browser> {
    const browser = new Browser(connection, process);
    try {
      await browser.#init();
    } catch (error) {
      connection.close();
      throw error;
    }
    return browser;
  }

  async #init(): Promise<void> {
    const connection = this.#connection;
    connection.on("Target.attachedToTarget", (event) => this.#onAttached(event));
    connection.on("Target.targetCrashed", ({ targetId, status, errorCode }) => {
      this.#pages.get(targetId)?._markCrashed({ status, errorCode });
    });
    await connection.send("Target.setDiscoverTargets", { discover: true });
    await connection.send("Target.setAutoAttach", AUTO_ATTACH);
  }

  /** Whether the connection is still open. */
  get connected(): boolean {
    return this.#connection.closeReason === undefined;
  }

  /** Adds a listener. */
  on<K extends keyof BrowserEvents>(event: K, listener: (payload: BrowserEvents[K]) => void): void {
    this.#events.on(event, listener);
  }

  /** Removes a listener. */
  off<K extends keyof BrowserEvents>(
    event: K,
    listener: (payload: BrowserEvents[K]) => void,
  ): void {
    this.#events.off(event, listener);
  }

  async #newContext(options: NewContextOptions): Promise<BrowserContext> {
    const viewport = options.viewport;
    if (viewport) checkViewport(viewport);
    const { browserContextId } = await this.#connection.send("Target.createBrowserContext", {
      disposeOnDetach: true,
      ...networkPolicy(options),
    });
    const context = new BrowserContext(this, browserContextId);
    if (viewport) context.addInitializer(viewportInitializer(viewport));
    this.#contexts.set(browserContextId, context);
    return context;
  }

  /**
   * Closes the browser. A launched browser is killed with its whole process
   * tree and its profile removed; a connected one has the contexts this
   * browser created disposed and the connection closed.
   */
  close(): Promise<void> {
    this.#closing ??= this.#close();
    return this.#closing;
  }

  /** Closes the browser. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  /**
   * Starts a launched browser again in place, with the options it was
   * launched with: the old process is killed (if it still runs) and its
   * profile removed, every context and page of it is closed, and a new
   * process and connection take their place in this object. Listeners added
   * with `on()` stay. Concurrent calls share one relaunch.
   *
   * @returns once the new browser is connected
   * @throws {TypeError} when the browser was connected to, not launched here
   * @throws {Error} when the browser was closed
   * @throws {BrowserLaunchError} when the new process does not start
   *
   * @example Recover from a dead browser
   * ```ts ignore
   * import { Browser, Env, EnvError } from "@webserv/webserv";
   * await using browser = await Browser.launch();
   * const env = await Env.create(browser, { startUrl: "data:text/html,<p>Hi</p>" });
   * try {
   *   await env.observe();
   * } catch (error) {
   *   if (!(error instanceof EnvError && error.code === "browser-gone")) throw error;
   *   await browser.relaunch();
   *   await env.reset(); // a fresh episode in the new browser
   * }
   * ```
   */
  relaunch(): Promise<void> {
    const options = this.#launchOptions;
    if (!options) {
      return Promise.reject(
        new TypeError("Cannot relaunch: the browser was connected to, not launched here"),
      );
    }
    if (this.#closing) return Promise.reject(new Error("Cannot relaunch: the browser is closed"));
    this.#relaunching ??= this.#relaunch(options).finally(() => this.#relaunching = undefined);
    return this.#relaunching;
  }

  async #relaunch(options: LaunchOptions): Promise<void> {
    this.#connection.close();
    await this.#process?.kill();
    this.#forgetTargets("Browser relaunched");
    const { process, connection } = await launchAndConnect(options);
    try {
      this.#connection = connection;
      this.#process = process;
      this.#wire(connection, process);
      await this.#init();
    } catch (error) {
      this.#connection.close();
      await process.kill();
      throw error;
    }
  }

  /** Marks every page of this browser's contexts closed and forgets them. */
  #forgetTargets(reason: string): void {
    for (const context of this.#contexts.values()) {
      for (const page of context.pages) page._markClosed(reason);
    }
    this.#contexts.clear();
    this.#pages.clear();
  }

  async #close(): Promise<void> {
    if (this.#process) {
      this.#connection.close();
      await this.#process.kill();
    } else {
      await Promise.allSettled([...this.#contexts.values()].map((context) => context.close()));
      this.#connection.close();
    }
    this.#forgetTargets("Browser closed");
  }

  /** @internal */
  async _newPage(context: BrowserContext, url: string): Promise<Page> {
    // A window of its own: a background tab in a shared window answers no
    // input or screenshot until it is brought to the front.
    const { targetId } = await this.#connection.send("Target.createTarget", {
      url: "about:blank",
      browserContextId: context.id,
      newWindow: true,
    });
    const page = this.#pages.get(targetId) ??
      await waitForPage(this.#pageWaiters, targetId, this.#connection.timeoutMs);
    if (url !== "about:blank") {
      const loaded = page.session.waitForEvent("Page.loadEventFired");
      // Handled now: when `Page.navigate` fails or times out, nothing awaits
      // `loaded`, and its own timeout would reject it unhandled later.
      observed(loaded);
      const { errorText } = await page.session.send("Page.navigate", { url });
      if (errorText) throw new Error(`Cannot open "${url}": ${errorText}`);
      await loaded;
    }
    return page;
  }

  /** @internal */
  _shareFiles(paths: string[]): Promise<string[]> {
    return this.#process?.shareFiles(paths) ?? Promise.resolve(paths);
  }

  /** @internal */
  async _disposeContext(context: BrowserContext): Promise<void> {
    // A context of a process that was relaunched since is gone with it.
    if (!this.#contexts.delete(context.id)) return;
    if (!this.connected) return;
    await this.#connection.send("Target.disposeBrowserContext", { browserContextId: context.id });
  }

  #onAttached(event: EventParams<"Target.attachedToTarget">): void {
    const session = this.#connection.session(event.sessionId);
    if (!session) return;
    bestEffort(`preparing target "${event.targetInfo.url}"`, this.#prepare(session, event));
  }

  async #prepare(
    session: CdpSession,
    event: EventParams<"Target.attachedToTarget">,
  ): Promise<void> {
    const { targetInfo } = event;
    const owner = this.#ownerPage(session);
    const context = targetInfo.browserContextId === undefined
      ? undefined
      : (this.#contexts.get(targetInfo.browserContextId) ?? owner?.context);
    const kind = targetInfo.type === "page" && !session.parentSessionId
      ? "page"
      : targetInfo.type === "iframe"
      ? "iframe"
      : undefined;
    let resumed = false;
    const resume = () => {
      if (resumed || !event.waitingForDebugger) return;
      resumed = true;
      bestEffort("resuming a target", session.send("Runtime.runIfWaitingForDebugger"));
    };
    try {
      if (kind && context) {
        // Children (out-of-process iframes, workers) attach paused too.
        session.on("Target.attachedToTarget", (child) => this.#onAttached(child));
        // Send every setup command, then resume without waiting for answers:
        // a paused popup's renderer answers nothing until it runs. A session
        // processes commands in order, so they all apply before any script.
        const setup = [
          session.send("Target.setAutoAttach", AUTO_ATTACH),
          session.send("Page.enable"),
          ...context.initializers.map((initializer) =>
            initializer({ kind, session }).catch((error) =>
              logFailure(`initializer on "${targetInfo.url}"`, error)
            )
          ),
        ];
        resume();
        await Promise.all(setup);
      }
    } finally {
      resume();
    }
    if (!context || session.closeReason !== undefined) return;
    if (kind === "page") {
      const page = new Page(session, context);
      this.#pages.set(page.targetId, page);
      page.on("close", () => this.#pages.delete(page.targetId));
      context._addPage(page);
      if (page.openerId) this.#pages.get(page.openerId)?._emit("popup", page);
      const waiter = this.#pageWaiters.get(page.targetId);
      this.#pageWaiters.delete(page.targetId);
      waiter?.resolve(page);
    } else if (kind === "iframe") {
      owner?._addFrame(session);
    }
  }

  /** The page an iframe session belongs to, found by walking up its parents. */
  #ownerPage(session: CdpSession): Page | undefined {
    let parentId = session.parentSessionId;
    while (parentId) {
      const parent = this.#connection.session(parentId);
      if (!parent) return undefined;
      const page = parent.targetInfo && this.#pages.get(parent.targetInfo.targetId);
      if (page && page.session === parent) return page;
      parentId = parent.parentSessionId;
    }
    return undefined;
  }
}
