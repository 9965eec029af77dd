/**
 * The main-world document-start hook that counts what the Network domain
 * cannot see: pending short timers, pending animation frames and DOM
 * mutations.
 *
 * {@linkcode activityHook} is serialized with `.toString()` and installed by
 * `Page.addScriptToEvaluateOnNewDocument`, so it runs in every document of a
 * target before the page's own scripts. Invariants:
 * - page scripts cannot see it: the CDP binding it reports through is taken
 *   off the global object before any page script runs, the wrapped
 *   `setTimeout`, `clearTimeout`, `requestAnimationFrame` and
 *   `cancelAnimationFrame` keep their native `name`, `length` and
 *   `toString()`, and `Function.prototype.toString` itself still reads native;
 * - it never changes when or how page callbacks run: every call goes to the
 *   native function captured at install time with the same arguments (and
 *   `attachShadow` returns the native root);
 * - a timer or frame callback that schedules the next one inherits its chain's
 *   start time; once a chain is older than `chainMs` its timers and frames no
 *   longer count, so polling loops and endless animations do not hold settling;
 * - a report (`timers|frames|mutations`) is sent at most once per task, from a
 *   microtask, and only when a count crossed zero or the DOM changed;
 * - DOM changes count in the document and in every shadow root: each root
 *   `attachShadow` returns (open or closed; the wrapper reads native like the
 *   timers) and each open root already attached to a node a mutation adds.
 *
 * @module
 */

/** The options the hook is installed with, passed as JSON. */
export interface ActivityHookOptions {
  /** Name of the `Runtime.addBinding` binding to report through. */
  binding: string;
  /** Timers longer than this, in milliseconds, do not count. */
  timerMs: number;
  /** Chains of timers or frames older than this, in milliseconds, stop counting. */
  chainMs: number;
}

/** A report the hook sends: counts now and how many DOM changes so far. */
export interface ActivityReport {
  /** Short timers pending now. */
  timers: number;
  /** Animation frames pending now. */
  frames: number;
  /** DOM mutation batches observed since the document started. */
  mutations: number;
}

/**
 * Decodes one report; the only place the hook's payload is parsed.
 *
 * @param payload the string the hook sent
 * @returns the report, or `undefined` when the payload is not one
 */
export function decodeActivityReport(payload: string): ActivityReport | undefined {
  const parts = payload.split("|").map(Number);
  if (parts.length !== 3 || parts.some((part) => !Number.isInteger(part) || part < 0)) {
    return undefined;
  }
  const [timers = 0, frames = 0, mutations = 0] = parts;
  return { timers, frames, mutations };
}

/**
 * Builds the script source that installs the hook with `options`.
 *
 * @param options the binding and thresholds
 * @returns a self-contained script
 */
export function activityHookSource(options: ActivityHookOptions): string {
  return `(${activityHook.toString()})(${JSON.stringify(options)});`;
}

// Minimal shapes of the browser globals the hook touches; the engine is type
// checked against Deno's libs, not the DOM's.
type Callback = (...args: unknown[]) => unknown;
interface HookGlobal {
  [key: string]: unknown;
  setTimeout(handler: unknown, timeout?: unknown, ...args: unknown[]): number;
  clearTimeout(id?: unknown): void;
  requestAnimationFrame(callback: unknown): number;
  cancelAnimationFrame(id?: unknown): void;
  queueMicrotask(callback: () => void): void;
  performance: { now(): number };
  document: { visibilityState: string } | undefined;
  MutationObserver: new (callback: (records: MutationRecordLike[]) => void) => {
    observe(target: unknown, options: Record<string, boolean>): void;
  };
  Element?: { prototype: { attachShadow?: Callback } };
}
interface MutationRecordLike {
  addedNodes: ArrayLike<{ shadowRoot?: unknown }>;
}

/**
 * The hook itself. Self-contained: it is serialized and run in the page.
 *
 * @param options the binding and thresholds
 */
function activityHook(options: ActivityHookOptions): void {
  const g = globalThis as unknown as HookGlobal;
  const send = g[options.binding];
  if (typeof send !== "function") return;
  delete g[options.binding];
  const report = send as (payload: string) => void;

  const nativeToString = Function.prototype.toString;
  const nativeSetTimeout = g.setTimeout;
  const nativeClearTimeout = g.clearTimeout;
  const nativeRaf = g.requestAnimationFrame;
  const nativeCaf = g.cancelAnimationFrame;
  const nativeMicrotask = g.queueMicrotask.bind(g);
  const now = g.performance.now.bind(g.performance);
  const apply = Reflect.apply;
  const disguised = new WeakMap<object, string>();

  const timers = new Map<number, number>(); // id -> chain start, counted only
  const frames = new Map<number, number>();
  let mutations = 0;
  let chain: number | undefined; // chain start of the callback running now
  let queued = false;
  let sentTimers = false;
  let sentFrames = false;
  let sentMutations = 0;

  function flush(): void {
    queued = false;
    const t = timers.size > 0;
    const f = frames.size > 0;
    if (t === sentTimers && f === sentFrames && mutations === sentMutations) return;
    sentTimers = t;
    sentFrames = f;
    sentMutations = mutations;
    try {
      report(`${timers.size}|${frames.size}|${mutations}`);
    } catch {
      // The binding is gone (context torn down); nothing to tell.
    }
  }
  function schedule(): void {
    if (queued) return;
    queued = true;
    nativeMicrotask(flush);
  }
  function disguise<F extends Callback>(fake: F, real: Callback): F {
    disguised.set(fake, apply(nativeToString, real, []) as string);
    Object.defineProperty(fake, "length", { value: real.length });
    return fake;
  }
  function startOf(): number {
    return chain ?? now();
  }

  const hooks = {
    setTimeout(handler: unknown, timeout?: unknown, ...args: unknown[]): number {
      if (typeof handler !== "function") {
        return apply(nativeSetTimeout, g, [handler, timeout, ...args]) as number;
      }
      const delay = Number(timeout) || 0;
      const start = startOf();
      const counted = delay <= options.timerMs && now() - start < options.chainMs;
      let id = 0;
      const wrapped = function (this: unknown) {
        if (timers.delete(id)) schedule();
        const outer = chain;
        chain = start;
        try {
          return apply(handler as Callback, this, args);
        } finally {
          chain = outer;
        }
      };
      id = apply(nativeSetTimeout, g, [wrapped, timeout]) as number;
      if (counted) {
        timers.set(id, start);
        schedule();
      }
      return id;
    },
    clearTimeout(id?: unknown): void {
      apply(nativeClearTimeout, g, [id]);
      if (timers.delete(id as number)) schedule();
    },
    requestAnimationFrame(callback: unknown): number {
      if (typeof callback !== "function") {
        return apply(nativeRaf, g, [callback]) as number;
      }
      const start = startOf();
      const counted = now() - start < options.chainMs &&
        g.document?.visibilityState !== "hidden";
      let id = 0;
      const wrapped = function (this: unknown, time: unknown) {
        if (frames.delete(id)) schedule();
        const outer = chain;
        chain = start;
        try {
          return apply(callback as Callback, this, [time]);
        } finally {
          chain = outer;
        }
      };
      id = apply(nativeRaf, g, [wrapped]) as number;
      if (counted) {
        frames.set(id, start);
        schedule();
      }
      return id;
    },
    cancelAnimationFrame(id?: unknown): void {
      apply(nativeCaf, g, [id]);
      if (frames.delete(id as number)) schedule();
    },
    toString(this: unknown): string {
      const fake = typeof this === "function" ? disguised.get(this) : undefined;
      return fake ?? (apply(nativeToString, this, []) as string);
    },
  };

  g.setTimeout = disguise(hooks.setTimeout, nativeSetTimeout as Callback);
  g.clearTimeout = disguise(hooks.clearTimeout, nativeClearTimeout as Callback);
  g.requestAnimationFrame = disguise(hooks.requestAnimationFrame, nativeRaf as Callback);
  g.cancelAnimationFrame = disguise(hooks.cancelAnimationFrame, nativeCaf as Callback);
  Function.prototype.toString = disguise(hooks.toString, nativeToString as Callback);

  // One observer watches the document and every shadow root: roots made by
  // script through the wrapped `attachShadow` (open and closed alike), and
  // open roots that arrive already attached (declarative shadow DOM) on the
  // nodes a mutation adds.
  const watched = new WeakSet<object>();
  const watch = (target: unknown): void => {
    if (typeof target !== "object" || target === null || watched.has(target)) return;
    watched.add(target);
    observer.observe(target, {
      childList: true,
      subtree: true,
      attributes: true,
      characterData: true,
    });
  };
  const observer = new g.MutationObserver((records) => {
    mutations++;
    schedule();
    for (const record of records) {
      const added = record.addedNodes;
      for (let i = 0; i < added.length; i++) {
        const root = added[i]?.shadowRoot;
        if (root) watch(root);
      }
    }
  });
  if (g.document) watch(g.document);
  const proto = g.Element?.prototype;
  const nativeAttachShadow = proto?.attachShadow;
  if (proto && typeof nativeAttachShadow === "function") {
    const shadowHooks = {
      attachShadow(this: unknown, ...args: unknown[]): unknown {
        const root = apply(nativeAttachShadow, this, args);
        watch(root);
        return root;
      },
    };
    Object.defineProperty(proto, "attachShadow", {
      value: disguise(shadowHooks.attachShadow, nativeAttachShadow),
      writable: true,
      configurable: true,
      enumerable: false,
    });
  }
}
