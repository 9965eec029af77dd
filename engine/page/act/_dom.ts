/**
 * The helpers the actions' in-page functions share: visibility, what to aim
 * at for an element (the stand-in rule comes from `../stand_in.ts`, the
 * observer's own), clipping, hit tests through shadow roots and frames.
 *
 * @module
 */
import { DOM_PROBE, siblingStandIn, thumbStandIn } from "../stand_in.ts";
import { shadowOf } from "../shadow_roots.ts";

/** The element's window; every element the actions touch is in a document with one. */
export function viewOf(e: Element): Window & typeof globalThis {
  return e.ownerDocument.defaultView as Window & typeof globalThis;
}

/** Whether the element has a box and is not `visibility: hidden`. */
export function visible(e: Element): boolean {
  const r = e.getBoundingClientRect();
  return r.width > 0 && r.height > 0 &&
    (typeof e.checkVisibility !== "function" || e.checkVisibility({ visibilityProperty: true }));
}

/** Whether the element is a checkbox or radio input. */
export function toggle(e: Element): boolean {
  return e.localName === "input" &&
    /^(checkbox|radio)$/.test(((e as HTMLInputElement).type || "").toLowerCase());
}

/** A checkbox, radio or range drawn by something else: 1 px, or clipped away. */
function styledAway(e: Element): boolean {
  const r = e.getBoundingClientRect();
  if (r.width < 2 || r.height < 2) return true;
  const cs = viewOf(e).getComputedStyle(e);
  return (!!cs.clip && cs.clip !== "auto" && /absolute|fixed/.test(cs.position)) ||
    (!!cs.clipPath && cs.clipPath !== "none");
}

/**
 * What to aim at for an element, best first: itself when it shows; for a
 * labelable element hidden or styled away, its visible labels; for a
 * checkbox or radio, then its visible stand-in (the observer's rule); the
 * element last.
 */
export function aimsOf(e: Element): Element[] {
  // A range input hidden inside its thumb: the thumb, which a person drags.
  const range = e.localName === "input" && (e as HTMLInputElement).type === "range";
  const thumb = range ? thumbStandIn(DOM_PROBE, e, styledAway(e)) : null;
  if (thumb) return [thumb, e];
  const out: Element[] = [];
  const away = !visible(e) || (toggle(e) && styledAway(e));
  if (!away) out.push(e);
  if (away || toggle(e)) {
    const labels = (e as HTMLInputElement).labels;
    if (labels) { for (const label of Array.from(labels)) if (visible(label)) out.push(label); }
    if (toggle(e)) {
      const s = siblingStandIn(DOM_PROBE, e);
      if (s && !out.includes(s)) out.push(s);
    }
  }
  if (!out.includes(e)) out.push(e);
  return out;
}

/** The element to test an element's visibility on: the first of {@linkcode aimsOf}. */
export function proxyOf(e: Element): Element {
  return aimsOf(e)[0] ?? e;
}

/** The parent of a node, crossing out of shadow roots to their hosts. */
function up(n: Node): Node | null {
  return n.parentNode ?? (n as ShadowRoot).host ?? null;
}

/** Whether `node` is `root` or inside it, shadow roots crossed. */
export function within(node: Node | null, root: Node): boolean {
  for (let n = node; n; n = up(n)) if (n === root) return true;
  return false;
}

/** The topmost element at a point, through shadow roots (closed ones the driver handed over). */
export function deepHit(doc: Document, x: number, y: number): Element | null {
  let hit = doc.elementFromPoint(x, y);
  for (let root = hit && shadowOf(hit); hit && root; root = shadowOf(hit)) {
    const inner = root.elementFromPoint(x, y);
    if (!inner || inner === hit) break;
    hit = inner;
  }
  return hit;
}

/**
 * Walks up same-origin frame owners from the document holding a point,
 * checking that each owner iframe receives the point in its parent.
 * Returns the covering element's description, or null when clear.
 */
export function ancestorsCover(frame: Element | null, x: number, y: number): string | null {
  for (let owner = frame; owner;) {
    [x, y] = reveal(owner, x, y);
    const hit = deepHit(owner.ownerDocument, x, y);
    if (hit !== owner) return hit ? describe(hit) : "the edge of the page";
    owner = viewOf(owner).frameElement;
  }
  return null;
}

/** A point of a frame's viewport, in its owner iframe's document. */
function inOwner(owner: Element, x: number, y: number): [number, number] {
  const r = owner.getBoundingClientRect();
  const cs = viewOf(owner).getComputedStyle(owner);
  return [
    x + r.left + owner.clientLeft + (parseFloat(cs.paddingLeft) || 0),
    y + r.top + owner.clientTop + (parseFloat(cs.paddingTop) || 0),
  ];
}

/** The viewport size of a document (in quirks mode the root's client box is the whole document). */
export function viewportOf(doc: Document): { width: number; height: number } {
  const html = doc.compatMode === "BackCompat" ? null : doc.documentElement;
  const win = doc.defaultView as Window;
  return {
    width: (html && html.clientWidth) || win.innerWidth,
    height: (html && html.clientHeight) || win.innerHeight,
  };
}

/**
 * Scrolls an iframe within its document (every scrolling ancestor and the
 * viewport) until a point of its frame's viewport shows there; returns the
 * point in the owner's document. An element scrolled into view in its own
 * frame can still sit in a frame below the fold.
 */
function reveal(owner: Element, x: number, y: number): [number, number] {
  const doc = owner.ownerDocument;
  const { width: vw, height: vh } = viewportOf(doc);
  const shows = ([px, py]: [number, number]) => {
    const c = clipped(owner, owner.getBoundingClientRect(), vw, vh);
    return !c.cut && px >= c.x0 && px < c.x1 && py >= c.y0 && py < c.y1;
  };
  let p = inOwner(owner, x, y);
  if (shows(p)) return p;
  owner.scrollIntoView({ block: "center", inline: "center", behavior: "instant" });
  p = inOwner(owner, x, y);
  if (shows(p)) return p;
  // A frame taller or wider than the viewport: bring the point to the middle.
  const scroller = doc.scrollingElement || doc.documentElement;
  scroller.scrollBy({
    left: p[0] < 0 || p[0] >= vw ? p[0] - vw / 2 : 0,
    top: p[1] < 0 || p[1] >= vh ? p[1] - vh / 2 : 0,
    behavior: "instant",
  });
  return inOwner(owner, x, y);
}

/** A box cut by clipping ancestors; `cut` when nothing was left and the viewport alone cut it. */
export interface Clip {
  x0: number;
  x1: number;
  y0: number;
  y1: number;
  cut: boolean;
}

/** The next ancestor for clipping: the slot it is assigned to, its parent, or its shadow host. */
function clipParent(a: Element): Element | null {
  return a.assignedSlot || a.parentElement || ((a.parentNode as ShadowRoot | null)?.host ?? null);
}

/**
 * The element's box cut by every clipping ancestor (overflow other than
 * visible; shadow hosts and slots crossed) and by the viewport. A fixed
 * element escapes its ancestors' boxes; when the cut leaves nothing (an
 * absolutely placed popup escaping a clipping ancestor that is not its
 * containing block), the viewport alone cuts it, and hit-testing decides.
 */
export function clipped(e: Element, r: DOMRect, vw: number, vh: number): Clip {
  let x0 = Math.max(r.left, 0), x1 = Math.min(r.right, vw);
  let y0 = Math.max(r.top, 0), y1 = Math.min(r.bottom, vh);
  const view = [x0, x1, y0, y1] as const;
  const win = viewOf(e);
  let fixed = win.getComputedStyle(e).position === "fixed";
  for (let a = clipParent(e); a && !fixed; a = clipParent(a)) {
    if (a === e.ownerDocument.documentElement || a === e.ownerDocument.body) break;
    const cs = win.getComputedStyle(a);
    if (cs.position === "fixed") fixed = true;
    const cx = cs.overflowX !== "visible", cy = cs.overflowY !== "visible";
    if (!cx && !cy) continue;
    const b = a.getBoundingClientRect();
    if (cx) {
      x0 = Math.max(x0, b.left + a.clientLeft);
      x1 = Math.min(x1, b.left + a.clientLeft + a.clientWidth);
    }
    if (cy) {
      y0 = Math.max(y0, b.top + a.clientTop);
      y1 = Math.min(y1, b.top + a.clientTop + a.clientHeight);
    }
  }
  if (x1 - x0 < 1 || y1 - y0 < 1) {
    return { x0: view[0], x1: view[1], y0: view[2], y1: view[3], cut: true };
  }
  return { x0, x1, y0, y1, cut: false };
}

/**
 * Whether a hit lands on the target: the element or its visible stand-in,
 * a descendant, or a label of it.
 */
export function accepts(hit: Element | null, target: Element, el: Element): boolean {
  if (!hit) return false;
  if (within(hit, el) || within(hit, target)) return true;
  // A web component's own host: slotted text (its label's words) hit-tests as the host.
  if (shadowOf(hit) && (within(el, hit) || within(target, hit))) return true;
  const label = hit.closest ? hit.closest("label") : null;
  if (label && (label.control === target || label === el)) return true;
  if (target.localName === "label") {
    const control = (target as HTMLLabelElement).control;
    if (control && within(hit, control)) return true;
  }
  return false;
}

/** A short description of an element for messages: tag, id or first class, rendered text. */
export function describe(e: Element): string {
  let out = e.localName;
  if (e.id) out += "#" + e.id;
  else if (typeof e.className === "string" && e.className.trim()) {
    out += "." + e.className.trim().split(/\s+/)[0];
  }
  // Rendered text: an HTML element's `textContent` holds its scripts' source too.
  const text = (("innerText" in e ? (e as HTMLElement).innerText : e.textContent) || "")
    .replace(/\s+/g, " ").trim();
  if (text) out += ' "' + (text.length > 40 ? text.slice(0, 39) + "…" : text) + '"';
  return out;
}

/** The element itself, or the control a label is for. */
export function controlOf(e: Element): Element {
  return e.localName === "label" && (e as HTMLLabelElement).control
    ? (e as HTMLLabelElement).control as Element
    : e;
}

/** The focused element of the element's document, through open shadow roots. */
export function activeOf(doc: Document): Element | null {
  let a = doc.activeElement;
  for (let root = a && shadowOf(a); a && root?.activeElement; root = shadowOf(a)) {
    a = root.activeElement;
  }
  return a;
}
