/**
 * The actions' pointer functions in the page: what an element is, where to
 * press on it, whether the pointer reached it, and what the page received of
 * a press. See `ActFunctions` in `engine/act/_in_page.ts` for each contract.
 *
 * @module
 */
import type {
  CheckResult,
  ClickRecord,
  ElementFacts,
  FactsPoint,
  PointResult,
} from "../../act/_in_page.ts";
import {
  accepts,
  aimsOf,
  ancestorsCover,
  type Clip,
  clipped,
  controlOf,
  deepHit,
  describe,
  proxyOf,
  viewOf,
  viewportOf,
  visible,
} from "./_dom.ts";
import { revealerOf } from "../_hover_reveal.ts";
import { checkedAsShown } from "../roles.ts";

/** The globals the act functions keep in their world. */
interface ActGlobals {
  /** The last mouse move of the library's document (`null`: none since the last aim). */
  __webservMove?: [number, number] | null;
  /** Without the library: each document's last move, recorded from the first aim on. */
  __webservMoves?: WeakMap<Document, [number, number] | null>;
  /** The armed press, read by `CLICK_RECORD`. */
  __webservClick?: ArmedPress | null;
}

/** The world's globals, as the act functions use them. */
export function actGlobals(): ActGlobals {
  return globalThis as unknown as ActGlobals;
}

/** Facts about the element. */
export function facts(this: Element): ElementFacts {
  return factsOf(this);
}

function factsOf(el: Element): ElementFacts {
  if (!el || !el.isConnected) {
    return {
      state: "stale",
      tag: "",
      type: "",
      role: "",
      editable: false,
      readonly: false,
      checked: null,
      checkedShown: false,
      name: "",
    };
  }
  const tag = el.localName;
  const type = (el.getAttribute("type") || "").toLowerCase();
  const role = (el.getAttribute("role") || "").trim().split(/\s+/)[0] || "";
  const control = tag === "label" ? controlOf(el) : el;
  const disabled = control.matches(":disabled") || el.closest('[aria-disabled="true"]') !== null;
  const readonly = (el as HTMLInputElement).readOnly === true ||
    el.getAttribute("aria-readonly") === "true";
  const textual = tag === "textarea" ||
    (tag === "input" && !/^(checkbox|radio|submit|button|reset|image|file|hidden)$/.test(type)) ||
    (el as HTMLElement).isContentEditable;
  let checked: boolean | null = null, checkedShown = true;
  const ctype = (control.getAttribute("type") || "").toLowerCase();
  if (control.localName === "input" && (ctype === "checkbox" || ctype === "radio")) {
    checked = checkedAsShown(control as HTMLInputElement);
  } else if (control.hasAttribute("aria-checked")) {
    checked = control.getAttribute("aria-checked") === "true";
  } else if (/^(checkbox|switch|radio|menuitemcheckbox|menuitemradio)$/.test(role)) {
    checked = false;
    checkedShown = false;
  }
  if (checked === null) checkedShown = false;
  // Hidden until the pointer is over its container (a row's actions): shown by hovering there.
  const shown = visible(proxyOf(el)) || revealerOf(el) !== null;
  return {
    state: !shown ? "hidden" : disabled ? "disabled" : "ok",
    tag,
    type,
    role,
    editable: !!textual && !readonly,
    readonly,
    checked,
    checkedShown,
    name: describe(el),
  };
}

/** Points tried across the shown part of a box, as fractions of its size, best first. */
const SPOTS: ReadonlyArray<readonly [number, number]> = [
  [0.5, 0.5],
  [0.25, 0.25],
  [0.75, 0.25],
  [0.25, 0.75],
  [0.75, 0.75],
  [0.5, 0.15],
  [0.5, 0.85],
  [0.15, 0.5],
  [0.85, 0.5],
];

/** Where to press on the element, after scrolling it into view. */
export function point(this: Element): PointResult {
  return pointOf(this);
}

function pointOf(target: Element): PointResult {
  const doc = target.ownerDocument;
  const { width: vw, height: vh } = viewportOf(doc);
  const frame = doc.defaultView ? doc.defaultView.frameElement : null;
  let cover: string | undefined, seen = false;
  // The spots of the element's boxes (each line's, then the whole) that land on it.
  const aim = (el: Element, shown: Clip): PointResult | undefined => {
    for (const { x0, x1, y0, y1 } of [...fragments(el, vw, vh), shown]) {
      if (x1 - x0 < 1 || y1 - y0 < 1) continue;
      for (const [fx, fy] of SPOTS) {
        const x = x0 + (x1 - x0) * fx, y = y0 + (y1 - y0) * fy;
        const hit = deepHit(doc, x, y);
        if (accepts(hit, target, el)) {
          const over = frame ? ancestorsCover(frame, x, y) : null;
          if (over === null) {
            clearMoves(doc);
            const box = doc.documentElement.getBoundingClientRect();
            const win = doc.defaultView, vv = win && win.visualViewport;
            const top = !!win && win.parent === win &&
              (!vv || (vv.scale === 1 && vv.offsetLeft === 0 && vv.offsetTop === 0));
            return { ok: true, x, y, docX: box.left, docY: box.top, top };
          }
          if (cover === undefined) cover = over;
          continue;
        }
        if (cover === undefined && hit) cover = describe(hit);
      }
    }
    return undefined;
  };
  // The element itself, else (a styled-away checkbox or radio) its label or
  // visible stand-in: the first that takes the pointer.
  for (const el of aimsOf(target)) {
    let r = el.getBoundingClientRect();
    let shown = clipped(el, r, vw, vh);
    const whole = (c: typeof shown) =>
      !c.cut && c.x0 <= r.left + 0.5 && c.x1 >= r.right - 0.5 && c.y0 <= r.top + 0.5 &&
      c.y1 >= r.bottom - 0.5;
    const centre = () => {
      el.scrollIntoView({ block: "center", inline: "center", behavior: "instant" });
      r = el.getBoundingClientRect();
      shown = clipped(el, r, vw, vh);
    };
    const scrolled = !whole(shown);
    if (scrolled) centre();
    if (shown.x1 - shown.x0 < 1 || shown.y1 - shown.y0 < 1) continue;
    seen = true;
    const found = aim(el, shown);
    if (found) return found;
    // In view but under something, such as a bar fixed to the viewport's edge: a person
    // scrolls it to the middle and tries again.
    if (scrolled) continue;
    const before = r;
    centre();
    if (r.top === before.top && r.left === before.left) continue;
    const again = aim(el, shown);
    if (again) return again;
  }
  if (!seen) return revealPoint(target) ?? { ok: false, reason: "not-visible" };
  // Laid out but not drawn until its container is hovered (`visibility: hidden`
  // until `.card:hover`): hit tests pass through it to the container, no cover.
  if (!visible(target)) {
    const reveal = revealPoint(target);
    if (reveal) return reveal;
  }
  return { ok: false, reason: "covered", ...(cover ? { cover } : {}) };
}

/**
 * The boxes of an inline element broken over lines (a link that wraps), each
 * cut like the whole: its bounding box spans the lines' full width, so spots
 * aimed in it can all fall between the fragments, on the paragraph around
 * them. None for an element drawn in one box.
 */
function fragments(el: Element, vw: number, vh: number): Clip[] {
  const rects = el.getClientRects();
  if (rects.length < 2) return [];
  return Array.from(rects, (rect) => clipped(el, rect, vw, vh)).filter((c) => !c.cut);
}

/**
 * For an element the page shows only while the pointer is over its
 * container (`_hover_reveal.ts`), a point on that container to hover first.
 */
function revealPoint(target: Element): PointResult | undefined {
  const trigger = revealerOf(target);
  if (!trigger) return undefined;
  const doc = target.ownerDocument;
  const { width: vw, height: vh } = viewportOf(doc);
  let r = trigger.getBoundingClientRect();
  let shown = clipped(trigger, r, vw, vh);
  if (shown.x1 - shown.x0 < 1 || shown.y1 - shown.y0 < 1) {
    trigger.scrollIntoView({ block: "center", inline: "nearest", behavior: "instant" });
    r = trigger.getBoundingClientRect();
    shown = clipped(trigger, r, vw, vh);
  }
  const { x0, x1, y0, y1 } = shown;
  if (x1 - x0 < 1 || y1 - y0 < 1) return undefined;
  for (const [fx, fy] of SPOTS) {
    const x = x0 + (x1 - x0) * fx, y = y0 + (y1 - y0) * fy;
    const hit = deepHit(doc, x, y);
    if (!hit || !composedWithin(trigger, hit)) continue;
    const box = doc.documentElement.getBoundingClientRect();
    const win = doc.defaultView, vv = win && win.visualViewport;
    const top = !!win && win.parent === win &&
      (!vv || (vv.scale === 1 && vv.offsetLeft === 0 && vv.offsetTop === 0));
    return {
      ok: false,
      reason: "hover-first",
      hover: { x, y, docX: box.left, docY: box.top, top },
    };
  }
  return undefined;
}

/** Whether `node` is `container` or inside it, across shadow roots. */
function composedWithin(container: Element, node: Element): boolean {
  for (let n: Node | null = node; n; n = (n.getRootNode() as ShadowRoot).host ?? null) {
    if (container.contains(n)) return true;
  }
  return false;
}

/**
 * A mouse move this document gets from now on is one sent to the point just
 * aimed at (see {@linkcode hovered}). Where the act library is not (a world
 * of the caller's), the document's moves are recorded from now on: a stale
 * `:hover` (a fake move after a scroll) is no proof.
 */
function clearMoves(doc: Document): void {
  const g = actGlobals();
  if (g.__webservMove !== undefined) {
    g.__webservMove = null;
    return;
  }
  const moves = g.__webservMoves || (g.__webservMoves = new WeakMap());
  if (!moves.has(doc)) {
    doc.addEventListener("mousemove", (e) => moves.set(doc, [e.clientX, e.clientY]), true);
  }
  moves.set(doc, null);
}

/** `facts`, then `point` when the element can take the pointer. */
export function factsPoint(this: Element, allowDisabled: boolean): FactsPoint {
  const found = factsOf(this);
  const ready = found.state !== "stale" && found.state !== "hidden" &&
    (found.state !== "disabled" || allowDisabled);
  return ready ? { facts: found, point: pointOf(this) } : { facts: found };
}

/**
 * Whether the last mouse move reached this document at `(x, y)`. The act
 * library records the document's last move and `point` clears it; without
 * the library, `point` records the document's moves itself (in the caller's
 * world); failing both, whether what lies at the point is `:hover`. The
 * browser routes mouse events between a page and its out-of-process frames
 * by the compositor's hit-test data, which can lag a scroll by a frame: a
 * press sent then lands in whichever frame was at that point before.
 */
function reached(x: number, y: number, doc: Document): boolean {
  const g = actGlobals();
  const moves = g.__webservMoves;
  const move = g.__webservMove !== undefined
    ? g.__webservMove
    : moves && moves.has(doc)
    ? moves.get(doc)
    : undefined;
  if (move !== undefined) {
    return move !== null && Math.abs(move[0] - x) <= 2 && Math.abs(move[1] - y) <= 2;
  }
  const hit = doc.elementFromPoint(x, y);
  return !!hit && hit.matches(":hover");
}

/** Whether the pointer's move reached the point aimed at. */
export function hovered(this: Element, x: number, y: number): "yes" | "no" | "unknown" {
  const doc = this.ownerDocument;
  if (reached(x, y, doc)) return "yes";
  const g = actGlobals();
  const moves = g.__webservMoves;
  return g.__webservMove === undefined && !(moves && moves.has(doc)) ? "unknown" : "no";
}

/** A press being recorded; see {@linkcode arm}. */
interface ArmedPress {
  down: boolean;
  up: boolean;
  click: boolean;
  /** The page changed the DOM while handling the press. */
  changed: boolean;
  /** The page changed the DOM while handling the release. */
  released: boolean;
  /** The press events seen (`pointerdown`, `mousedown`), for `defaultPrevented`. */
  press: Event[];
  /** Removes the listeners and the observer. */
  stop(): void;
}

type Kind = "down" | "up" | "click";

const KINDS: Record<string, Kind> = {
  pointerdown: "down",
  mousedown: "down",
  pointerup: "up",
  mouseup: "up",
  click: "click",
  auxclick: "click",
};

/**
 * Arms a press on `target` (just before the press): records what of the
 * press reaches it, in listeners on the window (capturing, first) and on the
 * target and its stand-ins (for a target inside a closed shadow root), for
 * `clickRecord` to read.
 */
function arm(target: Element): void {
  const doc = target.ownerDocument;
  const win = viewOf(target);
  const g = actGlobals();
  if (g.__webservClick) g.__webservClick.stop();
  const aims = aimsOf(target);
  const added: Array<[EventTarget, string, EventListener, boolean]> = [];
  const record: ArmedPress = {
    down: false,
    up: false,
    click: false,
    changed: false,
    released: false,
    press: [],
    stop: () => {
      for (const [node, type, listener, capture] of added) {
        node.removeEventListener(type, listener, capture);
      }
      changes.disconnect();
    },
  };
  const hits = (e: Event) => {
    const hit = (e.composedPath && e.composedPath()[0]) || e.target;
    return !!hit && (hit as Node).nodeType === 1 &&
      aims.some((el) => accepts(hit as Element, target, el));
  };
  // A change made while the press is dispatched (the page's pointerdown and
  // mousedown listeners, the focus it moves) is the page's answer to it: the
  // window's capturing listener opens that window and its bubbling one
  // closes it (the records come in the microtasks between listeners). Later
  // changes (a layout shift that puts another element under the pointer, a
  // timer) are not. A listener that stops the event leaves it open until the
  // release.
  // The release has a window of its own, opened and closed the same way: a
  // picker that chooses on `mouseup` and removes its list (select2) leaves
  // no click to read, but its change is the page's answer to the release.
  let pressing = false, releasing = false;
  const changes = new MutationObserver(() => {
    if (pressing) record.changed = true;
    if (releasing) record.released = true;
  });
  const mark = (kind: Kind) => (e: Event) => {
    if (kind === "down") {
      record.press.push(e);
      if (record.press.length === 1) {
        changes.observe(doc, {
          subtree: true,
          childList: true,
          attributes: true,
          characterData: true,
        });
      }
      if (e.currentTarget === win) pressing = true;
    }
    if (kind === "up") closes();
    if (e.currentTarget === win ? hits(e) : true) record[kind] = true;
    if (kind === "up" && e.currentTarget === win && record.up && record.press.length > 0) {
      releasing = true;
    }
  };
  const released = () => {
    if (releasing && changes.takeRecords().length > 0) record.released = true;
    releasing = false;
  };
  const opens = () => {
    if (record.press.length > 0 && !record.up) pressing = true;
  };
  // Records not delivered yet (a nested dispatch, such as a focus() in a
  // focus listener, closes the window before the microtasks run) count too.
  const closes = () => {
    if (pressing && changes.takeRecords().length > 0) record.changed = true;
    pressing = false;
  };
  const listen = (node: EventTarget, type: string, listener: EventListener, capture: boolean) => {
    node.addEventListener(type, listener, capture);
    added.push([node, type, listener, capture]);
  };
  for (const node of [win, ...aims]) {
    for (const [type, kind] of Object.entries(KINDS)) listen(node, type, mark(kind), true);
  }
  // The focus moves after mousedown: `focus` (which only the capture phase
  // sees at the window) comes first, then `focusin`.
  listen(win, "focus", opens, true);
  listen(win, "focusin", opens, true);
  for (const type of ["pointerdown", "mousedown", "focusin"]) listen(win, type, closes, false);
  for (const type of ["pointerup", "mouseup"]) listen(win, type, released, false);
  g.__webservClick = record;
}

/** Whether the point still lands on the target; with `arm`, records the press that follows. */
export function checkPoint(this: Element, x: number, y: number, armIt: boolean): CheckResult {
  return checkAt(this, x, y, armIt);
}

function checkAt(target: Element, x: number, y: number, armIt: boolean): CheckResult {
  if (!target.isConnected) return { ok: false, gone: true };
  const hit = deepHit(target.ownerDocument, x, y);
  if (!aimsOf(target).some((el) => accepts(hit, target, el))) return { ok: false, gone: false };
  if (armIt) arm(target);
  return { ok: true, reached: reached(x, y, target.ownerDocument) };
}

/** Whether the armed press reached the target so far; `null` when nothing was armed. */
export function pressSeen(): boolean | null {
  const record = actGlobals().__webservClick;
  return record ? record.down : null;
}

/** What the armed press recorded; `null` when nothing was armed in this world. */
export function clickRecord(): ClickRecord | null {
  const g = actGlobals();
  const record = g.__webservClick;
  if (!record) return null;
  record.stop();
  g.__webservClick = null;
  const prevented = record.press.some((e) => e.defaultPrevented);
  return {
    down: record.down,
    up: record.up,
    click: record.click,
    handled: record.changed || prevented,
    prevented,
    changed: record.changed,
    released: record.released,
  };
}

/** The cover of an out-of-process frame's point in its owner's document, or `null`. */
export function ownerCover(this: Element, x: number, y: number): string | null {
  return ancestorsCover(this, x, y);
}
