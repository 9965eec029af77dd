/**
 * The main-world hook, installed at document start before any page script.
 *
 * It wraps `EventTarget.prototype.addEventListener` and the `on*` handler
 * setters so that elements given click-like or hover listeners by script are
 * remembered, and reports them to the isolated world on request. Page
 * scripts observe no difference: the wrappers keep the native names, lengths
 * and `toString()` text, and nothing is written to the DOM.
 *
 * Protocol (`secret` is random per driver, so page scripts cannot guess the
 * event types): the isolated world dispatches `<secret>:flush` on `window`;
 * the hook then dispatches `<secret>:c` (click-like), `<secret>:k` (keys) or `<secret>:h` (hover)
 * on every remembered element now in a document, composed so that the event
 * reaches `window` through shadow roots; the isolated world's capturing
 * listener records `composedPath()[0]`. Elements not yet in a document wait
 * for a later flush. An event dispatched from one world runs the listeners of
 * every world, which is what makes this work without touching the DOM.
 *
 * Delegated handlers leave no listener on their target: React 17+ and
 * Svelte 5 listen on the root and keep each element's handlers in expando
 * properties (`__reactProps$…` with `onClick`; `__click` in early Svelte 5,
 * now `{ click }` under its own `Symbol("events")`), jQuery keeps
 * `.on(type, selector, fn)` handlers in `jQuery._data(root, "events")`.
 * Those properties live in the main world, out of the isolated world's
 * reach, so the isolated world asks: it dispatches a cancelable
 * `<secret>:p` on a candidate, and the hook calls `preventDefault()` when
 * the element has a click-like handler of its own in one of those forms.
 *
 * Page code: DOM APIs only. Everything it uses is captured at install time,
 * before page scripts can replace it.
 *
 * @module
 */

const CLICK_TYPES = [
  "click",
  "dblclick",
  "auxclick",
  "contextmenu",
  "mousedown",
  "mouseup",
  "pointerdown",
  "pointerup",
  "touchstart",
  "touchend",
  "keydown",
  "keyup",
  "keypress",
  // A drop zone takes files or dragged items: a target of `upload` and `drag`.
  "drop",
];
const HOVER_TYPES = ["mouseenter", "mouseover", "pointerenter", "pointerover"];
/** Key listeners: an element hears keys only while it or something inside it has focus. */
const KEY_TYPES = ["keydown", "keyup", "keypress"];
/** React props that make an element the target of a click-like action (keyboard handlers do not). */
const REACT_HANDLERS = [
  "onClick",
  "onClickCapture",
  "onDoubleClick",
  "onMouseDown",
  "onMouseUp",
  "onPointerDown",
  "onPointerUp",
  "onTouchStart",
  "onContextMenu",
  "onDrop",
];
/** Svelte 5 delegated-handler expandos, one per event type (before 5.x moved them under a symbol). */
const SVELTE_HANDLERS = ["__click", "__mousedown", "__pointerdown", "__dblclick"];
/** The event types of Svelte 5's delegated handlers that make a click target. */
const SVELTE_CLICKS = ["click", "mousedown", "pointerdown", "dblclick", "mouseup", "pointerup"];

/**
 * Installs the hook in the current (main) world.
 *
 * @param secret the random prefix of the event types shared with the isolated world
 * @returns nothing
 */
export function installHook(secret: string): void {
  const win = globalThis as unknown as Window & typeof globalThis;
  const apply = Reflect.apply;
  const defineProperty = Object.defineProperty;
  const getDescriptor = Object.getOwnPropertyDescriptor;
  const ElementClass = win.Element;
  const CustomEventClass = win.CustomEvent;
  const WeakRefClass = WeakRef;
  const target = win.EventTarget.prototype;
  const nativeAdd = target.addEventListener;
  const nativeDispatch = target.dispatchEvent;
  const isConnected = getDescriptor(win.Node.prototype, "isConnected")!.get!;
  const nativeToString = Function.prototype.toString;
  const weakSetHas = WeakSet.prototype.has;
  const weakSetAdd = WeakSet.prototype.add;
  const weakMapGet = WeakMap.prototype.get;
  const weakMapSet = WeakMap.prototype.set;
  const arrayPush = Array.prototype.push;
  const deref = WeakRef.prototype.deref;
  const objectKeys = Object.keys;
  const ownSymbols = Object.getOwnPropertySymbols;
  const symbolDescription = getDescriptor(Symbol.prototype, "description")!.get!;
  const stringStartsWith = String.prototype.startsWith;
  const matches = win.Element.prototype.matches;
  const composedPath = win.Event.prototype.composedPath;
  const preventDefault = win.Event.prototype.preventDefault;
  const parentElementOf = getDescriptor(win.Node.prototype, "parentElement")!.get!;
  const clickTypes = new Set(CLICK_TYPES);
  const hoverTypes = new Set(HOVER_TYPES);
  const keyTypes = new Set(KEY_TYPES);
  const setHas = Set.prototype.has;
  const seen = new WeakSet<object>();
  let pending: [WeakRef<Element>, string][] = [];
  const disguised = new WeakMap<object, object>();

  function note(el: unknown, type: unknown): void {
    if (!(el instanceof ElementClass) || typeof type !== "string") return;
    const kind = apply(setHas, keyTypes, [type])
      ? "k"
      : apply(setHas, clickTypes, [type])
      ? "c"
      : apply(setHas, hoverTypes, [type])
      ? "h"
      : "";
    if (!kind) return;
    const key = kind === "c" ? el : kindKey(kind === "h" ? hoverKeys : keyKeys, el);
    if (apply(weakSetHas, seen, [key])) return;
    apply(weakSetAdd, seen, [key]);
    // React 17+ listens for every event on its root's container and hands each
    // to the element's own props (found by the probe): the container is where
    // the app lives, not a target. Unmarked, a widget mounted in a small box
    // became one clickable named by all its text.
    if (reactRoot(el)) return;
    apply(arrayPush, pending, [[new WeakRefClass(el), kind]]);
  }

  /** Whether `el` is the container of a React root (React marks it before it listens). */
  function reactRoot(el: Element): boolean {
    const keys = apply(objectKeys, Object, [el]) as string[];
    for (let i = 0; i < keys.length; i++) {
      if (apply(stringStartsWith, keys[i]!, ["__reactContainer$"])) return true;
    }
    return false;
  }

  const hoverKeys = new WeakMap<object, object>();
  const keyKeys = new WeakMap<object, object>();
  /** A stand-in key per element and kind, so each kind is reported once. */
  function kindKey(keys: WeakMap<object, object>, el: Element): object {
    let key = apply(weakMapGet, keys, [el]) as object | undefined;
    if (!key) {
      key = {};
      apply(weakMapSet, keys, [el, key]);
    }
    return key;
  }

  function disguise(fake: object, real: object): void {
    apply(weakMapSet, disguised, [fake, real]);
  }

  const wrappers = {
    addEventListener(this: EventTarget, type: string, _listener: unknown): unknown {
      try {
        note(this, type);
      } catch {
        // never break the page
      }
      return apply(nativeAdd, this, arguments as unknown as unknown[]);
    },
    toString(this: unknown): string {
      const real = typeof this === "function" || typeof this === "object"
        ? apply(weakMapGet, disguised, [this as object]) as object | undefined
        : undefined;
      return apply(nativeToString, real ?? this, []);
    },
  };
  const addDescriptor = getDescriptor(target, "addEventListener")!;
  defineProperty(target, "addEventListener", {
    ...addDescriptor,
    value: wrappers.addEventListener,
  });
  disguise(wrappers.addEventListener, nativeAdd);
  const toStringDescriptor = getDescriptor(Function.prototype, "toString")!;
  defineProperty(Function.prototype, "toString", {
    ...toStringDescriptor,
    value: wrappers.toString,
  });
  disguise(wrappers.toString, nativeToString);

  // `el.onclick = fn` does not show as an attribute; wrap the setters.
  const handlerNames = [
    "onclick",
    "onmousedown",
    "onpointerdown",
    "onmouseup",
    "ondblclick",
    "onkeydown",
    "onmouseenter",
    "onmouseover",
  ];
  for (const proto of [win.HTMLElement.prototype, win.SVGElement.prototype]) {
    for (const name of handlerNames) {
      const descriptor = getDescriptor(proto, name);
      if (!descriptor || !descriptor.set || !descriptor.get) continue;
      const nativeSet = descriptor.set;
      const type = name.slice(2);
      const holder = {
        set [name](value: unknown) {
          try {
            // deno-lint-ignore no-this-alias
            const self: unknown = this;
            if (typeof value === "function") note(self, type);
          } catch {
            // never break the page
          }
          apply(nativeSet, this, [value]);
        },
      };
      const fakeSet = getDescriptor(holder, name)!.set!;
      disguise(fakeSet, nativeSet);
      defineProperty(proto, name, { ...descriptor, set: fakeSet });
    }
  }

  /** Whether `el` has a delegated click-like handler of its own (see the module comment). */
  function delegated(el: Element): boolean {
    const own = el as unknown as Record<string, unknown>;
    for (let i = 0; i < SVELTE_HANDLERS.length; i++) {
      if (typeof own[SVELTE_HANDLERS[i]!] === "function") return true;
    }
    // Svelte 5 now keeps them by type under a symbol of its own, `Symbol("events")`.
    const symbols = apply(ownSymbols, Object, [el]) as symbol[];
    for (let i = 0; i < symbols.length; i++) {
      if (apply(symbolDescription, symbols[i]!, []) !== "events") continue;
      const handlers = (own as unknown as Record<symbol, unknown>)[symbols[i]!] as
        | Record<string, unknown>
        | null;
      if (!handlers || typeof handlers !== "object") continue;
      for (let j = 0; j < SVELTE_CLICKS.length; j++) {
        if (typeof handlers[SVELTE_CLICKS[j]!] === "function") return true;
      }
    }
    const keys = apply(objectKeys, Object, [el]) as string[];
    for (let i = 0; i < keys.length; i++) {
      if (!apply(stringStartsWith, keys[i]!, ["__reactProps$"])) continue;
      const props = own[keys[i]!] as Record<string, unknown> | null;
      if (!props || typeof props !== "object") continue;
      for (let j = 0; j < REACT_HANDLERS.length; j++) {
        if (typeof props[REACT_HANDLERS[j]!] === "function") return true;
      }
    }
    const jq = jQueryOf();
    if (!jq) return false;
    // Ancestors that jQuery listens on (through addEventListener, so seen), and the document.
    for (
      let up = apply(parentElementOf, el, []) as Element | null;
      up;
      up = apply(parentElementOf, up, []) as Element | null
    ) {
      if (apply(weakSetHas, seen, [up]) && matchesDelegated(jq, up, el)) return true;
    }
    return matchesDelegated(jq, win.document, el);
  }

  type JQuery = { _data: (owner: object, key: string) => unknown };
  /** The page's jQuery, when it has one with its private data reader. */
  function jQueryOf(): JQuery | undefined {
    const jq = (win as unknown as { jQuery?: Partial<JQuery> }).jQuery;
    return jq && typeof jq._data === "function" ? jq as JQuery : undefined;
  }

  /** Whether `owner` has a jQuery handler delegated to a selector that `el` matches (any when `el` is null). */
  function matchesDelegated(jq: JQuery, owner: object, el: Element | null): boolean {
    const events = jq._data(owner, "events") as Record<string, { selector?: string }[]> | undefined;
    if (!events) return false;
    for (let t = 0; t < CLICK_TYPES.length; t++) {
      const handlers = events[CLICK_TYPES[t]!];
      if (!handlers) continue;
      for (let h = 0; h < handlers.length; h++) {
        const selector = handlers[h]!.selector;
        if (selector && (el === null || apply(matches, el, [selector]))) return true;
      }
    }
    return false;
  }

  apply(nativeAdd, win, [`${secret}:p`, function probe(event: Event): void {
    try {
      const path = apply(composedPath, event, []) as EventTarget[];
      const el = path[0];
      if (el instanceof ElementClass && delegated(el)) apply(preventDefault, event, []);
    } catch {
      // a page's odd jQuery or selector: not delegated
    }
  }, true]);

  apply(nativeAdd, win, [`${secret}:flush`, function flush(): void {
    try {
      // jQuery handlers delegated from the document: its element is then a delegation root.
      const jq = jQueryOf();
      const root = win.document.documentElement;
      if (jq && root && matchesDelegated(jq, win.document, null)) {
        apply(nativeDispatch, root, [new CustomEventClass(`${secret}:c`, { composed: true })]);
      }
    } catch {
      // an odd jQuery: no document delegation
    }
    const waiting: [WeakRef<Element>, string][] = [];
    const list = pending;
    pending = waiting;
    for (let i = 0; i < list.length; i++) {
      const entry = list[i]!;
      const el = apply(deref, entry[0], []) as Element | undefined;
      if (!el) continue;
      if (!apply(isConnected, el, [])) {
        apply(arrayPush, waiting, [entry]);
        continue;
      }
      const event = new CustomEventClass(`${secret}:${entry[1]}`, { composed: true });
      apply(nativeDispatch, el, [event]);
    }
  }, true]);
}
