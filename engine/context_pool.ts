/**
 * A warm pool of ready pages per browser: contexts made ahead, each with its
 * first tab attached and set up (see `_ready_page.ts`), so that an episode
 * that starts (a fork above all) loads its page at once instead of waiting
 * for a context and a renderer.
 *
 * Invariants:
 * - a ready page is made from a spec (origin policy, viewport, settle
 *   options) and is handed only to an episode whose spec has the same key;
 * - a ready page is handed out at most once: `take()` removes it in the
 *   same turn it returns it, and nothing uses it before then;
 * - at most `size` ready pages (made or being made) per kind, and at most
 *   {@linkcode MAX_KINDS} kinds; the least recently warmed kind goes first;
 * - a ready page of a browser connection that closed is never handed out,
 *   and the browser closes every pooled context with its own (they are its
 *   contexts): nothing pooled outlives the browser.
 *
 * A context's origin policy is fixed when Chromium creates it (a proxy per
 * context), so a fork, whose origin is its site copy's, takes a ready page
 * made on a spare origin: an origin the site's gateway reserved ahead, which
 * the copy then takes as its own (see {@linkcode OriginReserve}).
 *
 * @module
 */
import type { Browser } from "./browser/browser.ts";
import { browserInternals } from "./browser/browser.ts";
import type { Connection } from "./cdp/connection.ts";
import { logFailure } from "./log.ts";
import { closeContext, openReadyPage, type ReadyPage, type ReadySpec } from "./_ready_page.ts";

/** The most kinds of ready pages a pool keeps at once. */
export const MAX_KINDS = 4;

/** How many ready pages a pool keeps per kind unless told otherwise. */
export const DEFAULT_POOL_SIZE = 2;

/** An origin reserved ahead for a site copy that is not made yet. */
export interface SpareOrigin {
  /** The origin, such as `"http://env-ab12cd34.localhost:8800"`. */
  readonly origin: string;
  /** Gives the origin back, unless a site copy took it (then the copy owns it). */
  release(): void;
}

/**
 * Reserves origins for site copies not made yet: a sandbox gateway's
 * routes. A site that offers one lets the pool make a fork's context before
 * the fork is asked for; the fork's copy is then made on the reserved origin.
 */
export interface OriginReserve {
  /**
   * Reserves an origin that answers nothing until a site copy takes it.
   *
   * @returns the spare origin
   */
  reserve(): SpareOrigin;
}

/** A ready page the pool hands out, with the spare origin it was made on, if any. */
export interface PooledPage extends ReadyPage {
  /** The spare origin the context may reach, for a fork's site copy to take. */
  spare?: SpareOrigin;
}

/** One ready page waiting in the pool. */
interface Entry {
  pooled: PooledPage;
  connection: Connection;
}

/** Ready pages of one kind, and how to make another. */
interface Kind {
  make: () => Promise<PooledPage>;
  ready: Entry[];
  filling: number;
}

const pools = new WeakMap<Browser, ContextPool>();

/**
 * The warm pool of ready pages of one browser.
 *
 * @example Size a browser's pool, or turn it off
 * ```ts ignore
 * import { Browser, ContextPool } from "@webserv/webserv/engine";
 * await using browser = await Browser.launch();
 * ContextPool.of(browser).size = 4; // 0 turns it off
 * ```
 */
export class ContextPool {
  #browser: Browser;
  #size = DEFAULT_POOL_SIZE;
  #kinds = new Map<string, Kind>();
  #reserves = new WeakMap<OriginReserve, number>();
  #nextReserve = 0;

  private constructor(browser: Browser) {
    this.#browser = browser;
    this.size = browserInternals(browser).contextPool ?? DEFAULT_POOL_SIZE;
    // Contexts of a closed connection are gone with it: forget them.
    browser.on("disconnected", () => this.#drain(false));
  }

  /**
   * The pool of a browser, made on first use.
   *
   * @param browser the browser
   * @returns its pool
   */
  static of(browser: Browser): ContextPool {
    let pool = pools.get(browser);
    if (!pool) pools.set(browser, pool = new ContextPool(browser));
    return pool;
  }

  /** How many ready pages the pool keeps per kind; 0 turns it off and closes those it holds. */
  get size(): number {
    return this.#size;
  }

  set size(size: number) {
    if (!Number.isInteger(size) || size < 0) {
      throw new RangeError(`Cannot size the context pool: "${size}" is not an integer >= 0`);
    }
    this.#size = size;
    if (size === 0) this.#drain(true);
    else {
      for (const kind of this.#kinds.values()) {
        for (const entry of kind.ready.splice(size)) discard(entry.pooled);
      }
    }
  }

  /** How many ready pages wait in the pool now, every kind together. */
  get ready(): number {
    let n = 0;
    for (const kind of this.#kinds.values()) n += kind.ready.length;
    return n;
  }

  /** How many ready pages are being made now, every kind together. */
  get filling(): number {
    let n = 0;
    for (const kind of this.#kinds.values()) n += kind.filling;
    return n;
  }

  /**
   * The key of the kind of ready page a spec makes, on spare origins of
   * `reserve` when given (the spec's own origin policy is then ignored).
   *
   * @param key the spec's key (`readyKey`)
   * @param reserve the gateway that reserves spare origins
   * @returns the kind's key
   */
  kindOf(key: string, reserve?: OriginReserve): string {
    if (!reserve) return key;
    let id = this.#reserves.get(reserve);
    if (id === undefined) this.#reserves.set(reserve, id = this.#nextReserve++);
    return `spare ${id} ${key}`;
  }

  /**
   * Hands out a ready page of a kind, if one waits: removed from the pool
   * before it is returned, so it goes to one caller only.
   *
   * @param kind the kind's key
   * @returns the ready page, or undefined when none waits (make one then)
   */
  take(kind: string): PooledPage | undefined {
    const ready = this.#kinds.get(kind)?.ready;
    const connection = browserInternals(this.#browser).connection;
    while (ready && ready.length > 0) {
      const entry = ready.shift()!;
      const { pooled } = entry;
      if (
        entry.connection === connection && connection.closeReason === undefined &&
        !pooled.context.closed && !pooled.page.closed && !pooled.page.crash
      ) {
        return pooled;
      }
      discard(pooled);
    }
    return undefined;
  }

  /**
   * Fills a kind up to the pool's size in the background.
   *
   * @param kind the kind's key
   * @param spec what its ready pages are made from
   * @param reserve the gateway that reserves their spare origins, if the kind has one
   */
  warm(kind: string, spec: ReadySpec, reserve?: OriginReserve): void {
    if (this.#size === 0) return;
    let entry = this.#kinds.get(kind);
    if (entry) this.#kinds.delete(kind);
    entry ??= { make: () => make(this.#browser, spec, reserve), ready: [], filling: 0 };
    // Most recently warmed last: the first kind is the one to drop.
    this.#kinds.set(kind, entry);
    while (this.#kinds.size > MAX_KINDS) {
      const [oldest, dropped] = this.#kinds.entries().next().value!;
      this.#kinds.delete(oldest);
      for (const ready of dropped.ready.splice(0)) discard(ready.pooled);
    }
    while (entry.ready.length + entry.filling < this.#size) this.#fill(kind, entry);
  }

  #fill(key: string, kind: Kind): void {
    kind.filling++;
    const connection = browserInternals(this.#browser).connection;
    kind.make().then((pooled) => {
      kind.filling--;
      const kept = this.#kinds.get(key) === kind && kind.ready.length < this.#size &&
        connection === browserInternals(this.#browser).connection &&
        connection.closeReason === undefined;
      if (kept) kind.ready.push({ pooled, connection });
      else discard(pooled);
    }, (error: unknown) => {
      kind.filling--;
      // A browser that is closing or gone is not a failure of the pool.
      if (connection.closeReason === undefined) logFailure("warming a context", error);
    });
  }

  /** Lets go of every ready page; `close` closes their contexts (else they are gone already). */
  #drain(close: boolean): void {
    for (const kind of this.#kinds.values()) {
      for (const entry of kind.ready.splice(0)) {
        entry.pooled.spare?.release();
        if (close) void closeContext(entry.pooled.context);
      }
    }
  }
}

/** Makes one ready page of a kind: on a spare origin first when the kind has a reserve. */
async function make(
  browser: Browser,
  spec: ReadySpec,
  reserve: OriginReserve | undefined,
): Promise<PooledPage> {
  if (!reserve) return await openReadyPage(browser, spec);
  const spare = reserve.reserve();
  try {
    const ready = await openReadyPage(browser, { ...spec, onlyOrigins: [spare.origin] });
    return { ...ready, spare };
  } catch (error) {
    spare.release();
    throw error;
  }
}

/** Closes a ready page nobody will use, and gives back its spare origin. */
export function discard(pooled: PooledPage): void {
  pooled.spare?.release();
  void closeContext(pooled.context);
}
