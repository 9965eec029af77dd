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
 * the hook then dispatches `<secret>:c` (click-like) or `<secret>:h` (hover)
 * on every remembered element now in a document, composed so that the event
 * reaches `window` through shadow roots; the isolated world's capturing
 * listener records `composedPath()[0]`. Elements not yet in a document wait
 * for a later flush. An event dispatched from one world runs the listeners of
 * every world, which is what makes this work without touching the DOM.
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
];
const HOVER_TYPES = ["mouseenter", "mouseover", "pointerenter", "pointerover"];

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
  const clickTypes = new Set(CLICK_TYPES);
  const hoverTypes = new Set(HOVER_TYPES);
  const setHas = Set.prototype.has;
  const seen = new WeakSet<object>();
  let pending: [WeakRef<Element>, string][] = [];
  const disguised = new WeakMap<object, object>();

  function note(el: unknown, type: unknown): void {
    if (!(el instanceof ElementClass) || typeof type !== "string") return;
    const kind = apply(setHas, clickTypes, [type])
      ? "c"
      : apply(setHas, hoverTypes, [type])
      ? "h"
      : "";
    if (!kind) return;
    const key = kind === "c" ? el : hoverKey(el);
    if (apply(weakSetHas, seen, [key])) return;
    apply(weakSetAdd, seen, [key]);
    apply(arrayPush, pending, [[new WeakRefClass(el), kind]]);
  }

  const hoverKeys = new WeakMap<object, object>();
  function hoverKey(el: Element): object {
    let key = apply(weakMapGet, hoverKeys, [el]) as object | undefined;
    if (!key) {
      key = {};
      apply(weakMapSet, hoverKeys, [el, key]);
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

  apply(nativeAdd, win, [`${secret}:flush`, function flush(): void {
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
