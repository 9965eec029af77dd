/**
 * The main-world document-start hook that counts pending short timers,
 * pending animation frames and DOM mutations for settling. Its contract and
 * invariants are in `engine/settle/_activity_hook.ts`; bundled by
 * `deno task build` into `ACTIVITY_HOOK`.
 *
 * @module
 */
import type { ActivityHookOptions } from "../settle/_activity_hook.ts";

// Minimal shapes of the browser globals the hook touches: it reads them as
// captured at install time, before any page script can replace them.
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
 * Frames in a row a chain may run without the DOM changing before its next
 * frames stop counting: about 100 ms at 60 frames a second, longer than any
 * measure-then-write a library spreads over frames.
 */
const IDLE_FRAMES = 6;

/**
 * Installs the hook.
 *
 * @param options the binding and thresholds
 */
export function activityHook(options: ActivityHookOptions): void {
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
  // Frame chains by start: the mutation count their last frame saw, and how
  // many frames in a row have run since without the DOM changing.
  const frameChains = new Map<number, { seen: number; idle: number }>();
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
        g.document?.visibilityState !== "hidden" &&
        (frameChains.get(start)?.idle ?? 0) < IDLE_FRAMES;
      let id = 0;
      const wrapped = function (this: unknown, time: unknown) {
        if (frames.delete(id)) schedule();
        // A loop of frames that change nothing (a popup library tracking its
        // anchor) is no activity once it has run a few frames idle; one that
        // changes the DOM counts again.
        const state = frameChains.get(start);
        if (!state) {
          if (frameChains.size > 256) frameChains.clear();
          frameChains.set(start, { seen: mutations, idle: 0 });
        } else if (state.seen === mutations) state.idle++;
        else {
          state.seen = mutations;
          state.idle = 0;
        }
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
