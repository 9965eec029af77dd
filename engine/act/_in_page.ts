/**
 * Functions run on an element with `Runtime.callFunctionOn` (`this` is the
 * element). They use only DOM APIs and run in whichever world the element's
 * handle lives in; the observer hands out handles from its isolated world,
 * so page scripts neither see these calls nor can fake their answers.
 *
 * Every function returns plain JSON; expected outcomes are values, not
 * exceptions.
 *
 * @module
 */

/** Shared helpers, inlined into each function. */
const HELPERS = `
  const visible = (e) => {
    const r = e.getBoundingClientRect();
    return r.width > 0 && r.height > 0 &&
      (typeof e.checkVisibility !== "function" || e.checkVisibility({ visibilityProperty: true }));
  };
  const toggle = (e) => e.localName === "input" && /^(checkbox|radio)$/.test((e.type || "").toLowerCase());
  // A checkbox or radio drawn by something else: 1 px, or clipped away.
  const styledAway = (e) => {
    const r = e.getBoundingClientRect();
    if (r.width < 2 || r.height < 2) return true;
    const cs = e.ownerDocument.defaultView.getComputedStyle(e);
    return (cs.clip && cs.clip !== "auto" && /absolute|fixed/.test(cs.position)) ||
      (cs.clipPath && cs.clipPath !== "none");
  };
  // The visible sibling that stands in for a hidden checkbox or radio (the
  // distiller's rule): the next, else previous, element sibling when it is a
  // label for no other control, or a span, i or div holding no control.
  const siblingStandIn = (input) => {
    for (const s of [input.nextElementSibling, input.previousElementSibling]) {
      if (!s) continue;
      const tag = s.localName;
      if (tag === "label") {
        if (s.control && s.control !== input) continue;
        if (s.hasAttribute("for") && !s.control) continue;
      } else if (tag !== "span" && tag !== "i" && tag !== "div") continue;
      if (s.querySelector("input,select,textarea,button,a[href]")) continue;
      const r = s.getBoundingClientRect();
      if (r.width >= 2 && r.height >= 2 && visible(s)) return s;
    }
    return null;
  };
  // What to aim at for an element, best first: itself when it shows; for a
  // labelable element hidden or styled away, its visible labels; for a
  // checkbox or radio, then its visible stand-in; the element last.
  const aimsOf = (e) => {
    const out = [];
    const away = !visible(e) || (toggle(e) && styledAway(e));
    if (!away) out.push(e);
    if (away || toggle(e)) {
      if (e.labels) for (const label of e.labels) if (visible(label)) out.push(label);
      if (toggle(e)) { const s = siblingStandIn(e); if (s && !out.includes(s)) out.push(s); }
    }
    if (!out.includes(e)) out.push(e);
    return out;
  };
  const proxyOf = (e) => aimsOf(e)[0];
  const within = (node, root) => {
    for (let n = node; n; n = n.parentNode || n.host) if (n === root) return true;
    return false;
  };
  const deepHit = (doc, x, y) => {
    let hit = doc.elementFromPoint(x, y);
    while (hit && hit.shadowRoot) {
      const inner = hit.shadowRoot.elementFromPoint(x, y);
      if (!inner || inner === hit) break;
      hit = inner;
    }
    return hit;
  };
  // Walks up same-origin frame owners from the document holding a point,
  // checking that each owner iframe receives the point in its parent.
  // Returns the covering element's description, or null when clear.
  const ancestorsCover = (frame, x, y) => {
    for (let owner = frame; owner; ) {
      [x, y] = reveal(owner, x, y);
      const hit = deepHit(owner.ownerDocument, x, y);
      if (hit !== owner) return hit ? describe(hit) : "the edge of the page";
      owner = owner.ownerDocument.defaultView.frameElement;
    }
    return null;
  };
  // A point of a frame's viewport, in its owner iframe's document.
  const inOwner = (owner, x, y) => {
    const r = owner.getBoundingClientRect();
    const cs = owner.ownerDocument.defaultView.getComputedStyle(owner);
    return [
      x + r.left + owner.clientLeft + (parseFloat(cs.paddingLeft) || 0),
      y + r.top + owner.clientTop + (parseFloat(cs.paddingTop) || 0),
    ];
  };
  // Scrolls an iframe within its document (every scrolling ancestor and the
  // viewport) until a point of its frame's viewport shows there; returns the
  // point in the owner's document. An element scrolled into view in its own
  // frame can still sit in a frame below the fold.
  const reveal = (owner, x, y) => {
    const doc = owner.ownerDocument;
    const html = doc.compatMode === "BackCompat" ? null : doc.documentElement;
    const vw = (html && html.clientWidth) || doc.defaultView.innerWidth;
    const vh = (html && html.clientHeight) || doc.defaultView.innerHeight;
    const shows = ([px, py]) => {
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
    scroller.scrollBy({ left: p[0] < 0 || p[0] >= vw ? p[0] - vw / 2 : 0, top: p[1] < 0 || p[1] >= vh ? p[1] - vh / 2 : 0, behavior: "instant" });
    return inOwner(owner, x, y);
  };
  // The element's box cut by every clipping ancestor (overflow other than
  // visible; shadow hosts and slots crossed) and by the viewport. A fixed
  // element escapes its ancestors' boxes; when the cut leaves nothing (an
  // absolutely placed popup escaping a clipping ancestor that is not its
  // containing block), the viewport alone cuts it, and hit-testing decides.
  const clipped = (e, r, vw, vh) => {
    let x0 = Math.max(r.left, 0), x1 = Math.min(r.right, vw);
    let y0 = Math.max(r.top, 0), y1 = Math.min(r.bottom, vh);
    const view = [x0, x1, y0, y1];
    const win = e.ownerDocument.defaultView;
    let fixed = win.getComputedStyle(e).position === "fixed";
    for (let a = e.assignedSlot || e.parentElement || (e.parentNode && e.parentNode.host); a && !fixed;
      a = a.assignedSlot || a.parentElement || (a.parentNode && a.parentNode.host)) {
      if (a === e.ownerDocument.documentElement || a === e.ownerDocument.body) break;
      const cs = win.getComputedStyle(a);
      if (cs.position === "fixed") fixed = true;
      const cx = cs.overflowX !== "visible", cy = cs.overflowY !== "visible";
      if (!cx && !cy) continue;
      const b = a.getBoundingClientRect();
      if (cx) { x0 = Math.max(x0, b.left + a.clientLeft); x1 = Math.min(x1, b.left + a.clientLeft + a.clientWidth); }
      if (cy) { y0 = Math.max(y0, b.top + a.clientTop); y1 = Math.min(y1, b.top + a.clientTop + a.clientHeight); }
    }
    if (x1 - x0 < 1 || y1 - y0 < 1) return { x0: view[0], x1: view[1], y0: view[2], y1: view[3], cut: true };
    return { x0, x1, y0, y1, cut: false };
  };
  // Whether a hit lands on the target: the element or its visible stand-in,
  // a descendant, or a label of it.
  const accepts = (hit, target, el) => {
    if (!hit) return false;
    if (within(hit, el) || within(hit, target)) return true;
    // A web component's own host: slotted text (its label's words) hit-tests as the host.
    if (hit.shadowRoot && (within(el, hit) || within(target, hit))) return true;
    const label = hit.closest ? hit.closest("label") : null;
    if (label && (label.control === target || label === el)) return true;
    if (target.localName === "label" && target.control && within(hit, target.control)) return true;
    return false;
  };
  const describe = (e) => {
    let out = e.localName;
    if (e.id) out += "#" + e.id;
    else if (typeof e.className === "string" && e.className.trim()) out += "." + e.className.trim().split(/\\s+/)[0];
    // Rendered text: an HTML element's \`textContent\` holds its scripts' source too.
    const text = (("innerText" in e ? e.innerText : e.textContent) || "").replace(/\\s+/g, " ").trim();
    if (text) out += ' "' + (text.length > 40 ? text.slice(0, 39) + "…" : text) + '"';
    return out;
  };
`;

/** What an element is, for choosing how to act on it. */
export interface ElementFacts {
  /** `stale` when detached, `hidden` without a visible box (or label), `disabled`, or `ok`. */
  state: "stale" | "hidden" | "disabled" | "ok";
  /** The element's local name. */
  tag: string;
  /** The `type` attribute, lowercased. */
  type: string;
  /** The `role` attribute. */
  role: string;
  /** Whether it takes text (typed, or set as a range's or a date's value) and is not read-only. */
  editable: boolean;
  /** Whether it is read-only. */
  readonly: boolean;
  /** Checked state of a checkbox, radio, switch or a label of one; `null` otherwise. */
  checked: boolean | null;
  /** Whether the checked state is shown (a native input's, or `aria-checked`), so it can be read back. */
  checkedShown: boolean;
  /** The described element. */
  name: string;
}

/** Facts about the element; see {@linkcode ElementFacts}. */
export const FACTS = `function () {
  ${HELPERS}
  const el = this;
  if (!el || !el.isConnected) return { state: "stale", tag: "", type: "", role: "", editable: false, readonly: false, checked: null, checkedShown: false, name: "" };
  const tag = el.localName;
  const type = (el.getAttribute("type") || "").toLowerCase();
  const role = (el.getAttribute("role") || "").trim().split(/\\s+/)[0] || "";
  const control = tag === "label" && el.control ? el.control : el;
  const disabled = control.matches(":disabled") || el.closest('[aria-disabled="true"]') !== null;
  const readonly = el.readOnly === true || el.getAttribute("aria-readonly") === "true";
  const textual = tag === "textarea" ||
    (tag === "input" && !/^(checkbox|radio|submit|button|reset|image|file|hidden)$/.test(type)) ||
    el.isContentEditable;
  let checked = null, checkedShown = true;
  const ctype = (control.getAttribute("type") || "").toLowerCase();
  if (control.localName === "input" && (ctype === "checkbox" || ctype === "radio")) checked = control.checked;
  else if (control.hasAttribute("aria-checked")) checked = control.getAttribute("aria-checked") === "true";
  else if (/^(checkbox|switch|radio|menuitemcheckbox|menuitemradio)$/.test(role)) { checked = false; checkedShown = false; }
  if (checked === null) checkedShown = false;
  const shown = visible(proxyOf(el));
  return {
    state: !shown ? "hidden" : disabled ? "disabled" : "ok",
    tag, type, role,
    editable: textual && !readonly,
    readonly,
    checked,
    checkedShown,
    name: describe(el),
  };
}`;

/** Where to press, after scrolling the element into view. */
export type PointResult =
  | {
    ok: true;
    /** The point, in the element's frame viewport. */
    x: number;
    y: number;
    /** The document element's box, to map frame coordinates to the page's. */
    docX: number;
    docY: number;
    /**
     * Whether the frame is the page's top frame, not pinch-zoomed or panned:
     * its viewport coordinates are the page's, with no offset to look up.
     */
    top: boolean;
  }
  | { ok: false; reason: "not-visible" | "covered"; cover?: string };

/**
 * Scrolls the element into view, within every scrolling ancestor and the
 * viewport, when it is not fully shown inside its clipping boxes; then
 * hit-tests points across the part of its box those boxes show (shadow roots
 * pierced) until one lands on it, a descendant, or its label, and also lands
 * on each same-origin frame owner up the chain (each scrolled so the point
 * shows in its document; content of a parent page over the iframe counts as
 * a cover). A hidden input is aimed at through its visible label; a checkbox
 * or radio styled away (1 px, clipped) or covered, through its label or the
 * visible sibling standing in for it.
 */
export const POINT = `function () {
  ${HELPERS}
  const target = this;
  const doc = target.ownerDocument;
  // In quirks mode the root's client box is the whole document, not the viewport.
  const html = doc.compatMode === "BackCompat" ? null : doc.documentElement;
  const vw = (html && html.clientWidth) || innerWidth;
  const vh = (html && html.clientHeight) || innerHeight;
  const frame = doc.defaultView ? doc.defaultView.frameElement : null;
  const spots = [[0.5, 0.5], [0.25, 0.25], [0.75, 0.25], [0.25, 0.75], [0.75, 0.75], [0.5, 0.15], [0.5, 0.85], [0.15, 0.5], [0.85, 0.5]];
  let cover, seen = false;
  // The element itself, else (a styled-away checkbox or radio) its label or
  // visible stand-in: the first that takes the pointer.
  for (const el of aimsOf(target)) {
    let r = el.getBoundingClientRect();
    let shown = clipped(el, r, vw, vh);
    const whole = (c) => !c.cut && c.x0 <= r.left + 0.5 && c.x1 >= r.right - 0.5 && c.y0 <= r.top + 0.5 && c.y1 >= r.bottom - 0.5;
    if (!whole(shown)) {
      el.scrollIntoView({ block: "center", inline: "center", behavior: "instant" });
      r = el.getBoundingClientRect();
      shown = clipped(el, r, vw, vh);
    }
    const { x0, x1, y0, y1 } = shown;
    if (x1 - x0 < 1 || y1 - y0 < 1) continue;
    seen = true;
    for (const [fx, fy] of spots) {
      const x = x0 + (x1 - x0) * fx, y = y0 + (y1 - y0) * fy;
      const hit = deepHit(doc, x, y);
      if (accepts(hit, target, el)) {
        const over = frame ? ancestorsCover(frame, x, y) : null;
        if (over === null) {
          // A mouse move this document gets from now on is one sent to this point (HOVERED).
          // Where the act library is not (a world of the caller's), the document's moves
          // are recorded from now on: a stale :hover (a fake move after a scroll) is no proof.
          if (globalThis.__webservMove !== undefined) globalThis.__webservMove = null;
          else {
            const moves = globalThis.__webservMoves || (globalThis.__webservMoves = new WeakMap());
            if (!moves.has(doc)) {
              doc.addEventListener("mousemove", (e) => moves.set(doc, [e.clientX, e.clientY]), true);
            }
            moves.set(doc, null);
          }
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
  if (!seen) return { ok: false, reason: "not-visible" };
  return { ok: false, reason: "covered", ...(cover ? { cover } : {}) };
}`;

/**
 * {@linkcode FACTS}, then {@linkcode POINT} when the element can take the
 * pointer (not stale, not hidden, enabled unless `allowDisabled`): a mouse
 * action's two questions in one round trip.
 */
export const FACTS_POINT = `function (allowDisabled) {
  const facts = (${FACTS}).call(this);
  const ready = facts.state !== "stale" && facts.state !== "hidden" &&
    (facts.state !== "disabled" || allowDisabled);
  return ready ? { facts, point: (${POINT}).call(this) } : { facts };
}`;

/**
 * Whether the last mouse move reached this document at `(x, y)`. The act
 * library records the document's last move and POINT clears it; without the
 * library, POINT records the document's moves itself (in the caller's world);
 * failing both, whether what lies at the point is `:hover`. The browser routes
 * mouse events between a page and its out-of-process frames by the
 * compositor's hit-test data, which can lag a scroll by a frame: a press
 * sent then lands in whichever frame was at that point before.
 */
const REACHED = `(x, y, doc) => {
  const moves = globalThis.__webservMoves;
  const move = globalThis.__webservMove !== undefined
    ? globalThis.__webservMove
    : moves && moves.has(doc) ? moves.get(doc) : undefined;
  if (move !== undefined) return move !== null && Math.abs(move[0] - x) <= 2 && Math.abs(move[1] - y) <= 2;
  const hit = doc.elementFromPoint(x, y);
  return !!hit && hit.matches(":hover");
}`;

/**
 * Called with the point aimed at after the pointer moved there: `"yes"` when
 * the move reached it, `"no"` when the act library saw no move there,
 * `"unknown"` without the library and nothing `:hover` there.
 */
export const HOVERED = `function (x, y) {
  const doc = this.ownerDocument;
  if ((${REACHED})(x, y, doc)) return "yes";
  const moves = globalThis.__webservMoves;
  return globalThis.__webservMove === undefined && !(moves && moves.has(doc)) ? "unknown" : "no";
}`;

/**
 * The body that arms a press on \`target\` (in {@linkcode CHECK_POINT}, just
 * before the press): records what of the press reaches it, in listeners on
 * the window (capturing, first) and on the target and its stand-ins (for a
 * target inside a closed shadow root), for {@linkcode CLICK_RECORD} to read.
 * Needs \`HELPERS\` and \`target\` in scope.
 */
const ARM = `
  const doc = target.ownerDocument;
  const win = doc.defaultView;
  if (globalThis.__webservClick) globalThis.__webservClick.stop();
  const aims = aimsOf(target);
  const record = { down: false, up: false, click: false, handled: false, press: [] };
  const hits = (e) => {
    const hit = (e.composedPath && e.composedPath()[0]) || e.target;
    return !!hit && hit.nodeType === 1 && aims.some((el) => accepts(hit, target, el));
  };
  // A change made while the press is dispatched (the page's pointerdown and
  // mousedown listeners, the focus it moves) is the page's answer to it: the
  // window's capturing listener opens that window and its bubbling one
  // closes it (the records come in the microtasks between listeners). Later
  // changes (a layout shift that puts another element under the pointer, a
  // timer) are not. A listener that stops the event leaves it open until the
  // release.
  let pressing = false;
  const changes = new MutationObserver(() => { if (pressing) record.handled = true; });
  const mark = (kind) => (e) => {
    if (kind === "down") {
      record.press.push(e);
      if (record.press.length === 1) {
        changes.observe(doc, { subtree: true, childList: true, attributes: true, characterData: true });
      }
      if (e.currentTarget === win) pressing = true;
    }
    if (kind === "up") closes();
    if (e.currentTarget === win ? hits(e) : true) record[kind] = true;
  };
  const opens = () => { if (record.press.length > 0 && !record.up) pressing = true; };
  // Records not delivered yet (a nested dispatch, such as a focus() in a
  // focus listener, closes the window before the microtasks run) count too.
  const closes = () => {
    if (pressing && changes.takeRecords().length > 0) record.handled = true;
    pressing = false;
  };
  const types = { pointerdown: "down", mousedown: "down", pointerup: "up", mouseup: "up", click: "click", auxclick: "click" };
  const added = [];
  const listen = (node, type, listener, capture) => {
    node.addEventListener(type, listener, capture);
    added.push([node, type, listener, capture]);
  };
  for (const node of [win, ...aims]) {
    for (const [type, kind] of Object.entries(types)) listen(node, type, mark(kind), true);
  }
  // The focus moves after mousedown: \`focus\` (which only the capture phase
  // sees at the window) comes first, then \`focusin\`.
  listen(win, "focus", opens, true);
  listen(win, "focusin", opens, true);
  for (const type of ["pointerdown", "mousedown", "focusin"]) listen(win, type, closes, false);
  record.stop = () => {
    for (const [node, type, listener, capture] of added) node.removeEventListener(type, listener, capture);
    changes.disconnect();
  };
  globalThis.__webservClick = record;
`;

/**
 * Whether a point aimed at still lands on the target, and whether the mouse
 * move reached its frame there; see {@linkcode CHECK_POINT}.
 */
export type CheckResult = { ok: true; reached: boolean } | { ok: false; gone: boolean };

/**
 * Called with a point (in the element's frame viewport) after the pointer
 * moved there: whether the hit test still lands on the element, a
 * descendant or its label, and whether the move reached the frame. With
 * `arm`, when it lands, the press that follows is recorded (see
 * {@linkcode CLICK_RECORD}). Hover
 * effects (a menu opening, an icon swapping, content pushed down) can move
 * the target between aiming and pressing.
 */
export const CHECK_POINT = `function (x, y, arm) {
  ${HELPERS}
  const target = this;
  if (!target.isConnected) return { ok: false, gone: true };
  const hit = deepHit(target.ownerDocument, x, y);
  if (!aimsOf(target).some((el) => accepts(hit, target, el))) return { ok: false, gone: false };
  if (arm) { ${ARM} }
  return { ok: true, reached: (${REACHED})(x, y, target.ownerDocument) };
}`;

/**
 * What the page received of one press of the pointer on a target (see
 * {@linkcode ARM_CLICK}): whether the press (`pointerdown` or `mousedown`),
 * the release (`pointerup` or `mouseup`) and the `click` (`auxclick` for
 * other buttons) reached the target, a descendant, its stand-in or a label
 * of it; and whether the page took the press itself: it prevented the
 * press's default, or changed the DOM while handling the press (a menu that
 * opens on `mousedown`, a field replaced as it takes focus).
 */
export interface ClickRecord {
  /** The press reached the target. */
  down: boolean;
  /** The release reached the target. */
  up: boolean;
  /** The click reached the target. */
  click: boolean;
  /** The page took the press itself. */
  handled: boolean;
}

/** Called after the release: what the armed press recorded; see {@linkcode ClickRecord}. */
export const CLICK_RECORD = `function () {
  const record = globalThis.__webservClick;
  if (!record) return null;
  record.stop();
  globalThis.__webservClick = null;
  const prevented = record.press.some((e) => e.defaultPrevented);
  return { down: record.down, up: record.up, click: record.click, handled: record.handled || prevented };
}`;

/** The page's locale: the document's `lang`, else the browser's language. */
export const PAGE_LOCALE = `function () {
  const doc = this.ownerDocument;
  return doc.documentElement.lang || doc.defaultView.navigator.language || "en-US";
}`;

/** What scrolling a container did; see {@linkcode SCROLL_BY}. */
export type ScrollByResult =
  | { kind: "scrolled"; container: string; x: number; y: number }
  | { kind: "at-end"; container: string }
  | { kind: "none" };

/**
 * Scrolls the element, or its nearest ancestor that scrolls on that axis, by
 * `amount` pixels (0: 80% of the container's visible size) in the direction
 * `sign` (1 down or right, -1 up or left). Returns `none` when nothing but the
 * page scrolls on that axis.
 */
export const SCROLL_BY = `function (vertical, sign, amount) {
  ${HELPERS}
  const doc = this.ownerDocument;
  const win = doc.defaultView;
  const scrolls = (e) => {
    const cs = win.getComputedStyle(e);
    if (vertical) return /(auto|scroll|overlay)/.test(cs.overflowY) && e.scrollHeight > e.clientHeight;
    return /(auto|scroll|overlay)/.test(cs.overflowX) && e.scrollWidth > e.clientWidth;
  };
  let box = this;
  while (box && box !== doc.documentElement && box !== doc.body && !scrolls(box)) {
    box = box.assignedSlot || box.parentElement || (box.parentNode && box.parentNode.host);
  }
  if (!box || box === doc.documentElement || box === doc.body) return { kind: "none" };
  const size = vertical ? box.clientHeight : box.clientWidth;
  const delta = sign * (amount > 0 ? amount : Math.round(size * 0.8));
  const ddx = vertical ? 0 : delta, ddy = vertical ? delta : 0;
  const short = (e) => e.localName + (e.id ? "#" + e.id
    : typeof e.className === "string" && e.className.trim() ? "." + e.className.trim().split(/\\s+/)[0] : "");
  const before = [box.scrollLeft, box.scrollTop];
  box.scrollBy({ left: ddx, top: ddy, behavior: "instant" });
  if (box.scrollLeft === before[0] && box.scrollTop === before[1]) return { kind: "at-end", container: short(box) };
  return { kind: "scrolled", container: short(box), x: Math.round(box.scrollLeft), y: Math.round(box.scrollTop) };
}`;

/** The document element of the element's document (for its CDP box). */
export const DOCUMENT_ELEMENT = `function () { return this.ownerDocument.documentElement; }`;

/** Focuses the element (or the focusable it labels); returns whether it has focus. */
export const FOCUS = `function () {
  const el = this.localName === "label" && this.control ? this.control : this;
  const active = () => {
    let a = el.ownerDocument.activeElement;
    while (a && a.shadowRoot && a.shadowRoot.activeElement) a = a.shadowRoot.activeElement;
    return a;
  };
  if (active() !== el && !el.contains(active())) el.focus({ preventScroll: true });
  const now = active();
  return now === el || el.contains(now);
}`;

/** Whether the focused editable holds any text. */
export const HAS_TEXT = `function () {
  const el = this.localName === "label" && this.control ? this.control : this;
  if ("value" in el && typeof el.value === "string") return el.value.length > 0;
  return (el.textContent || "").length > 0;
}`;

/** Puts the caret at the end of an editable. */
export const CARET_TO_END = `function () {
  const el = this.localName === "label" && this.control ? this.control : this;
  if (typeof el.setSelectionRange === "function" && typeof el.value === "string") {
    try { el.setSelectionRange(el.value.length, el.value.length); return; } catch {}
  }
  if (el.isContentEditable) {
    const selection = el.ownerDocument.getSelection();
    const range = el.ownerDocument.createRange();
    range.selectNodeContents(el);
    range.collapse(false);
    selection.removeAllRanges();
    selection.addRange(range);
  }
}`;

/** Outcome of choosing an option. */
export type SelectResult =
  | { kind: "done"; chosen: string }
  | { kind: "not-found"; options: string[] }
  | { kind: "not-select" };

/**
 * Chooses an option of a native `<select>` by label or value, as the browser
 * does when a person picks one: it sets the selection and fires `input` and
 * `change`. Headless Chromium cannot open a native select's popup, so real
 * input cannot do this.
 */
export const SELECT_NATIVE = `function (wanted, by) {
  const el = this.localName === "label" && this.control ? this.control : this;
  if (el.localName !== "select") return { kind: "not-select" };
  const fold = (s) => (s || "").replace(/\\s+/g, " ").trim();
  const options = Array.from(el.options).filter((o) => !o.disabled);
  const key = (o) => by === "value" ? o.value : fold(o.label || o.text);
  let option = options.find((o) => key(o) === wanted) ||
    options.find((o) => key(o).toLowerCase() === fold(wanted).toLowerCase());
  if (!option) return { kind: "not-found", options: options.slice(0, 20).map(key) };
  if (!option.selected || el.value !== option.value) {
    option.selected = true;
    el.dispatchEvent(new Event("input", { bubbles: true, composed: true }));
    el.dispatchEvent(new Event("change", { bubbles: true }));
  }
  return { kind: "done", chosen: key(option) };
}`;

/**
 * Finds an ARIA option by label or value: inside the element when it is a
 * listbox, else in the listbox it controls or owns, else any visible option
 * of the document. Returns the option element, or the labels seen.
 */
export const FIND_OPTION = `function (wanted, by) {
  ${HELPERS}
  const doc = this.ownerDocument;
  const fold = (s) => (s || "").replace(/\\s+/g, " ").trim();
  const scopes = [];
  if ((this.getAttribute("role") || "") === "listbox") scopes.push(this);
  for (const attr of ["aria-controls", "aria-owns"]) {
    for (const id of (this.getAttribute(attr) || "").split(/\\s+/)) {
      const scope = id && doc.getElementById(id);
      if (scope) scopes.push(scope);
    }
  }
  if (scopes.length === 0) scopes.push(doc);
  const options = [];
  for (const scope of scopes) {
    for (const o of scope.querySelectorAll('[role="option"]')) if (visible(o)) options.push(o);
  }
  const key = (o) => by === "value"
    ? (o.getAttribute("data-value") ?? o.getAttribute("value") ?? fold(o.textContent))
    : fold(o.getAttribute("aria-label") || o.textContent);
  const match = options.find((o) => key(o) === wanted) ||
    options.find((o) => key(o).toLowerCase() === fold(wanted).toLowerCase());
  return match || options.slice(0, 20).map(key);
}`;

/** Scrolls the element into view, centred. */
export const SCROLL_INTO_VIEW = `function () {
  const el = this;
  if (!el.isConnected) return false;
  el.scrollIntoView({ block: "center", inline: "center", behavior: "instant" });
  return true;
}`;

/** The element as a file input: itself, or the control of a label. */
export const FILE_INPUT = `function () {
  const el = this.localName === "label" && this.control ? this.control : this;
  return el.localName === "input" && (el.type || "").toLowerCase() === "file" ? el : null;
}`;

/** The viewport size of the element's (or the page's) document. */
export const VIEWPORT = `function () {
  const doc = this && this.ownerDocument ? this.ownerDocument : document;
  // In quirks mode the root's client box is the whole document, not the viewport.
  const html = doc.compatMode === "BackCompat" ? null : doc.documentElement;
  return { width: (html && html.clientWidth) || innerWidth, height: (html && html.clientHeight) || innerHeight };
}`;

/**
 * Called on an out-of-process iframe's owner element with a point in that
 * frame's viewport: scrolls the owner (and each same-origin owner above it)
 * until the point shows in its document, and tells whether it receives the
 * point there. Returns the cover's description, or null.
 */
export const OWNER_COVER = `function (x, y) {
  ${HELPERS}
  return ancestorsCover(this, x, y);
}`;
