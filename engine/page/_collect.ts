/**
 * The distiller's first pass: one walk of the rendered DOM that reads one
 * computed style per element and records the interactivity signals that
 * cost no layout.
 *
 * @module
 */

import {
  clippedAway,
  type Layout,
  LISTEN_CLICK,
  LISTEN_HOVER,
  LISTEN_KEY,
  type StyleFacts,
} from "./layout.ts";
import {
  fold,
  INTERACTIVE_ROLES,
  isNativeControl,
  roleOf,
  STRUCTURE_ROLES,
  svgName,
} from "./roles.ts";
import {
  type DFrame,
  type DNode,
  F_ARIA_DISABLED,
  F_ARIA_HIDDEN,
  F_IN_DISABLED_FIELDSET,
  F_INERT,
  type Inherited,
  isHidden,
  LEAF_TAGS,
  NEVER_SCROLLS,
  ON_ATTRS,
  type Pass,
  S_DELEGATED,
  S_EDITABLE,
  S_HOVER,
  S_ITEM,
  S_LISTENER,
  S_NATIVE,
  S_ONATTR,
  S_POINTER,
  S_PROXY,
  S_ROLE,
  S_SCROLL,
  S_TABINDEX,
  SKIP_TAGS,
  STRONG,
  WEAK,
} from "./_tree.ts";
import type { FrameVeto } from "../observe/wire.ts";
import { collectRuns, countActionable } from "./_runs.ts";
import { noteSuspect, shadowOf } from "./shadow_roots.ts";
import { thumbStandIn } from "./stand_in.ts";
import { pointerOnHover } from "./_hover_reveal.ts";

/** The nodes rendered as the children of `el`: shadow root first, slots flattened. */
function childNodes(el: Element): ArrayLike<Node> {
  const shadow = shadowOf(el);
  if (shadow) return shadow.childNodes;
  if (el.localName === "slot" && typeof (el as HTMLSlotElement).assignedNodes === "function") {
    const assigned = (el as HTMLSlotElement).assignedNodes({ flatten: true });
    if (assigned.length) return assigned;
  }
  return el.childNodes;
}

/**
 * The node whose children are rendered as `el`'s, when that is a plain
 * parent (no slot): the shadow root for a host, else the element itself.
 * Walking it by `firstChild`/`nextSibling` is much cheaper than indexing a
 * live `NodeList`.
 */
function plainParent(el: Element): Node | undefined {
  const shadow = shadowOf(el);
  if (shadow) return shadow;
  // A custom element with no root to see may hold a closed one: the driver looks.
  if (el.localName.includes("-")) noteSuspect(el);
  return el.localName === "slot" ? undefined : el;
}

function isEditableHost(el: Element): boolean {
  const attr = el.getAttribute("contenteditable");
  if (attr === null || attr === "false") return false;
  const parent = el.parentElement;
  if (!parent) return true;
  const up = parent.closest("[contenteditable]");
  return !up || up.getAttribute("contenteditable") === "false";
}

/** Walks `el` and what it renders: the node of the working tree, or `null` when not rendered. */
export function collect(pass: Pass, el: Element, inh: Inherited): DNode | null {
  const tag = el.localName;
  if (SKIP_TAGS.has(tag)) return null;
  const { layout, req } = pass;
  const style = layout.style(el);
  const display = style.display;
  if (display === "none") return null;
  let inside = inh.inside;
  if (!inside) {
    const r = layout.rect(el);
    const top = -req.margin, bottom = pass.vp.h + req.margin;
    const fixed = style.position === "fixed" || style.position === "sticky";
    if (r.w > 0 || r.h > 0) {
      if (r.y >= top && r.y + r.h <= bottom) inside = true;
      else if (!fixed && (r.y + r.h < top || r.y > bottom)) {
        const more = r.y > bottom ? pass.below : pass.above;
        more.n += 1;
        more.a += countActionable(el);
        return null;
      }
    }
  }
  // Style reads are the walk's main cost: every element needs `display`;
  // `visibility` is read only where text or a line depends on it,
  // `pointer-events` only in vet, and `cursor` only outside strong candidates.
  let flags = inh.flags;
  const attributed = el.hasAttributes();
  let role: string;
  let sig = 0;
  if (attributed) {
    // One pass over the attribute names instead of a lookup per attribute.
    const names = el.getAttributeNames();
    let roleAttribute: string | null = null;
    for (let i = 0; i < names.length; i++) {
      const name = names[i]!;
      switch (name) {
        case "aria-hidden":
          if (el.getAttribute(name) === "true") flags |= F_ARIA_HIDDEN;
          break;
        case "inert":
          flags |= F_INERT;
          break;
        case "aria-disabled":
          if (el.getAttribute(name) === "true") flags |= F_ARIA_DISABLED;
          break;
        case "disabled":
          if (tag === "fieldset") flags |= F_IN_DISABLED_FIELDSET;
          break;
        case "contenteditable":
          if (isEditableHost(el)) sig |= S_EDITABLE;
          break;
        case "role":
          roleAttribute = el.getAttribute(name);
          break;
        case "draggable":
          // Something a person drags (a kanban card): a target as much as an `on*` handler.
          if (el.getAttribute(name) === "true" && tag !== "img" && tag !== "a") sig |= S_ONATTR;
          break;
        case "tabindex": {
          const tabindex = Number(el.getAttribute(name));
          if (tabindex >= 0 && tag !== "iframe") sig |= S_TABINDEX;
          break;
        }
        default:
          if (name.charCodeAt(0) === 111 && ON_ATTRS.has(name)) sig |= S_ONATTR; // "o"
      }
    }
    role = roleOf(el, tag, roleAttribute);
    if (isNativeControl(el, tag)) sig |= S_NATIVE;
  } else {
    role = roleOf(el, tag, null);
    if (isNativeControl(el, tag)) sig |= S_NATIVE;
  }
  if (role && INTERACTIVE_ROLES.has(role)) sig |= S_ROLE;
  const listened = layout.listened(el);
  if (listened & LISTEN_CLICK) sig |= S_LISTENER;
  // Keys reach only what has focus: a key listener is a signal on a focusable
  // element (a custom widget), not on a panel that hears its children's keys.
  let keysOnly = false;
  if (listened & LISTEN_KEY && sig & S_TABINDEX && !(sig & S_LISTENER)) {
    sig |= S_LISTENER;
    keysOnly = true;
  }
  if (listened & LISTEN_HOVER) sig |= S_HOVER;
  let pointer = inh.pointer, grabbing = inh.grab, grab = false;
  if (!inh.inStrong || sig & STRONG) {
    // A pointer cursor is a signal where it starts, not where it is inherited.
    // A move or grab cursor is as much one: something a person drags (a card
    // of a list whose library listens on the document, as dragula does).
    const cursor = style.cursor;
    pointer = cursor === "pointer";
    grabbing = cursor === "move" || cursor === "grab";
    if (tag !== "label" && (pointer && !inh.pointer || grabbing && !inh.grab)) {
      sig |= S_POINTER;
      grab = !pointer;
    }
  }
  const delegation = inh.delegation || (listened & LISTEN_CLICK) !== 0;
  // The body is the page, not a target, unless the page is an editor: a
  // rich-text editor's frame (TinyMCE's body is contenteditable, an older
  // editor's document in design mode) is the field a person types into.
  if (tag === "body" && (sig & S_EDITABLE || el.ownerDocument.designMode === "on")) {
    sig = S_EDITABLE;
  } else if (tag === "body" || tag === "html") sig = 0;
  // Inside a strong candidate (a link, a button) weak signals belong to it.
  if (!(sig & STRONG) && inh.inStrong) sig = 0;
  else if (
    inh.delegation && !inh.inStrong && pass.probes > 0 && el.firstChild !== null
  ) {
    // Inside a listened ancestor: is this element a delegated target itself? Asked of
    // controls too (React's own `onclick` no-op on them hides nothing): a hit marks the
    // ancestor as a delegation root, not a target.
    pass.probes--;
    if (layout.delegated(el)) sig |= S_DELEGATED;
  }
  if (sig && TABLE_PARTS.has(role) && !(sig & STRONG)) sig &= tablePartSignals(el, role, sig);
  // A data grid's cell (Vaadin's grid, ARIA's data grid pattern) is a
  // `gridcell` for keyboard navigation only: its role is a target's no more
  // than a table cell's is. A calendar's day keeps its id by its own pointer
  // cursor; a control inside a cell gets an id of its own.
  if (role === "gridcell" && !(sig & (STRONG & ~S_ROLE))) sig &= tablePartSignals(el, role, sig);
  // A scroll container gets an id so the agent can scroll it; its content
  // keeps its own ids (it is not a candidate that covers its children).
  let clips = false, scrolls = false;
  if (!NEVER_SCROLLS.has(tag) && !LEAF_TAGS.has(tag) && style.overflow !== "visible") {
    clips = true;
    scrolls = el.childElementCount > 0 && isScrollable(el, style);
    if (scrolls) sig |= S_SCROLL;
  }
  if (tag === "legend" && inh.flags & F_IN_DISABLED_FIELDSET) {
    // The first legend of a disabled fieldset stays enabled (HTML 4.10.19).
    const fieldset = el.parentElement;
    if (fieldset?.localName === "fieldset" && fieldset.querySelector("legend") === el) {
      flags &= ~F_IN_DISABLED_FIELDSET;
    }
  }
  const node: DNode = {
    el,
    tag,
    role,
    sig,
    flags,
    kids: [],
    keep: 0,
    style,
    up: inh.weak,
    clipper: inh.clipper,
  };
  if (clips) node.scrolls = scrolls;
  if (keysOnly) node.keysOnly = true;
  if (grab) node.grab = true;
  if (display === "inline" || display === "math" || display === "inline math") node.inline = true;
  // `font-size: 0` is asked only where text is met (`collectKid`).
  if (style.overflow !== "visible" && isVisuallyHidden(layout, el, style)) node.unseen = true;
  if (sig && style.pointerEvents === "none") node.noPointer = true;
  // Structure lines need to know later whether they are painted.
  if (STRUCTURE_ROLES.has(role)) isHidden(node);
  if (sig) pass.candidates.push(node);
  const position = style.position;
  if (position === "absolute" || position === "fixed" || position === "sticky") {
    pass.occluders.push(el);
  }
  if (tag === "label") {
    pass.labels.set(el, node);
    const control = (el as HTMLLabelElement).control;
    if (
      control && control.localName === "input" &&
      (control as HTMLInputElement).type === "file" && !layout.visible(control)
    ) {
      // The styled "Choose a file" label of a file input the page hides (`display: none`
      // leaves it no box to stand in for): the label is the control a person clicks.
      node.proxy = control;
      node.role = "button";
      node.sig |= S_PROXY;
      if (!sig) pass.candidates.push(node);
    }
  }
  if (
    (tag === "input" &&
        /^(checkbox|radio|file)$/.test((el.getAttribute("type") ?? "").toLowerCase()) ||
      tag === "button") &&
    isStyledAway(layout, el, style)
  ) {
    // A native toggle, or a button (Carbon's switch, Ionic's select), drawn by its label.
    pass.proxies.push(node);
  } else if (tag === "input" && (el as HTMLInputElement).type === "range") {
    // A range input hidden inside the thumb that moves it (React Aria's slider).
    const thumb = thumbStandIn(layout, el, isStyledAway(layout, el, style));
    if (thumb) {
      node.standIn = thumb;
      pass.proxies.push(node);
    }
  }
  if (LEAF_TAGS.has(tag)) {
    if (tag === "iframe" || tag === "frame") {
      if (!isHidden(node)) node.kids.push(frameOf(el, flags, style));
    } else if (tag === "svg") {
      node.ownText = svgName(el);
    } else if (tag === "img") {
      node.ownText = fold(el.getAttribute("alt") ?? "");
    } else if (tag === "math") {
      // MathML is content: kept as linear text (`π·r^2`, `(a)/(b)`).
      const text = fold(el.getAttribute("alttext") ?? el.getAttribute("aria-label") ?? "") ||
        mathText(el);
      if (text && !isHidden(node)) node.kids.push(text);
    }
    node.style = undefined;
    return node;
  }
  const weakOnly = (sig & WEAK) !== 0 && !(sig & STRONG);
  const next: Inherited = {
    flags,
    pointer,
    grab: grabbing,
    inStrong: inh.inStrong || (sig & STRONG) !== 0,
    weak: weakOnly ? node : inh.weak,
    delegation,
    clipper: clips ? node : inh.clipper,
    inside,
  };
  const before = pass.candidates.length;
  const closedDetails = tag === "details" && !el.hasAttribute("open");
  const parent = plainParent(el);
  const many = req.summariseAfter > 0 && !closedDetails &&
    (parent === el ? el.childElementCount : Number.POSITIVE_INFINITY) >= req.summariseAfter;
  if (parent && !many) {
    for (let kid = parent.firstChild; kid; kid = kid.nextSibling) {
      collectShown(pass, node, kid, next, closedDetails);
    }
  } else {
    const kids = childNodes(el);
    if (kids.length >= req.summariseAfter && req.summariseAfter > 0 && !closedDetails) {
      collectRuns(pass, node, kids, next);
    } else {
      for (let i = 0; i < kids.length; i++) collectShown(pass, node, kids[i]!, next, closedDetails);
    }
  }
  // Holding thousands of live style declarations makes the walk slower.
  node.style = undefined;
  if (weakOnly && pass.candidates.length === before) leafItems(pass, node);
  return node;
}

/** Roles of a table's rows and cells (a grid's `gridcell` is weighed apart, in `collect`). */
const TABLE_PARTS = new Set(["row", "cell", "columnheader", "rowheader"]);

/**
 * The signals that count on a table's row or cell. Data-table libraries put
 * hover styling, click and resize handlers and delegated row handlers on
 * every row, cell and header whether or not they do anything: those are no
 * reason for an id (a table would be all ids). A cell is a target through a
 * pointer cursor of its own, an `on*` attribute, (a header) an announced
 * sort order, or a click listener of its own while it is in the tab order
 * (Tabulator's editable cell: `tabindex="0"`, edited on click or focus),
 * unless it is a roving tab stop ({@linkcode roving}); what it holds (links, controls) gets
 * ids of its own.
 */
function tablePartSignals(el: Element, role: string, sig: number): number {
  if (role !== "cell" && role !== "row" && el.hasAttribute("aria-sort")) return ~0;
  const reached = sig & S_TABINDEX && sig & S_LISTENER && !roving(el) ? S_TABINDEX | S_LISTENER : 0;
  return S_POINTER | S_ONATTR | S_SCROLL | reached;
}

/**
 * Whether a cell is the one of a roving tab stop: a grid that keeps one cell
 * in the tab order and its others at `tabindex="-1"` moves focus between
 * them with the keys (Vaadin's grid); it says nothing of what a click does.
 */
function roving(el: Element): boolean {
  for (
    let sibling = el.parentElement?.firstElementChild;
    sibling;
    sibling = sibling.nextElementSibling
  ) {
    if (sibling !== el && sibling.getAttribute("tabindex") === "-1") return true;
  }
  return false;
}

/** An iframe's slot, with why nobody can act in it when the walk can tell. */
function frameOf(el: Element, flags: number, style: StyleFacts): DFrame {
  const veto: FrameVeto | undefined = flags & F_INERT
    ? "inert"
    : flags & F_ARIA_HIDDEN
    ? "aria-hidden"
    : style.pointerEvents === "none"
    ? "no-pointer"
    : undefined;
  return veto ? { k: "f", el, veto } : { k: "f", el };
}

/**
 * A listened element with no candidate inside but several items of one
 * kind (a delegated list: menu entries, suggestions, tree rows) stands for
 * each item, not for the whole list: the items become the candidates. Only
 * click-like listeners count (a hover listener on a list is not a click).
 */
function leafItems(pass: Pass, node: DNode): void {
  if (!(node.sig & (S_LISTENER | S_ONATTR)) || node.sig & S_POINTER) return;
  markItems(pass, node, node, 2, 0);
}

/**
 * Marks the items of `list` (through single wrappers, `div > ul > li`) as
 * candidates when there are at least `least` of one tag, each with text;
 * nested lists inside an item (the branches of a tree) get the same, under
 * their item.
 */
function markItems(pass: Pass, list: DNode, owner: DNode, least: number, depth: number): void {
  let items: DNode[] = [];
  let holder = list;
  for (let hop = 0; hop < 3; hop++) {
    items = holder.kids.filter((kid): kid is DNode => typeof kid !== "string" && !("k" in kid));
    if (items.length !== 1 || holder.kids.some((kid) => typeof kid === "string")) break;
    holder = items[0]!;
  }
  if (items.length < least) return;
  if (depth === 0 && markHoverPointers(pass, items, owner)) return;
  const tag = items[0]!.tag;
  // A table's rows under a listened table are no items: a library's delegated row handler.
  if (tag === "tr" || tag === "td" || tag === "th") return;
  if (items.some((item) => item.tag !== tag || !fold(item.el.textContent ?? ""))) return;
  for (const item of items) {
    if (item.sig & STRONG) continue;
    item.sig |= S_ITEM;
    item.up = owner;
    pass.candidates.push(item);
    if (depth >= 4) continue;
    for (const kid of item.kids) {
      if (typeof kid === "string" || "k" in kid) continue;
      if (kid.tag === "ul" || kid.tag === "ol" || kid.role === "group") {
        markItems(pass, kid, item, 1, depth + 1);
      }
    }
  }
}

/**
 * Items that are lists themselves (a calendar's weekday names and its grid
 * of days, both under the one listener of vanillajs-datepicker's panel):
 * the parts the page's style gives a pointer cursor on hover
 * (`.datepicker-cell:hover`) are what a person clicks, each a target
 * served by that listener; the rest (the weekday names) stays text.
 *
 * @returns whether any was marked
 */
function markHoverPointers(pass: Pass, lists: DNode[], owner: DNode): boolean {
  const parts = (node: DNode) =>
    node.kids.filter((kid): kid is DNode => typeof kid !== "string" && !("k" in kid));
  if (lists.some((list) => parts(list).length < 3)) return false;
  let marked = false;
  for (const list of lists) {
    const items = parts(list).filter((item) =>
      !(item.sig & STRONG) && fold(item.el.textContent ?? "") && pointerOnHover(item.el)
    );
    if (items.length < 2) continue;
    for (const item of items) {
      // A pointer cursor a person sees, served by the listener around it: the listener's box
      // delegates and is structure, its own text (the weekday names) text.
      item.sig |= S_POINTER;
      item.up = owner;
      pass.candidates.push(item);
    }
    marked = true;
  }
  return marked;
}

/**
 * Whether a native checkbox, radio or file input is styled out of sight
 * while it stays the real control: transparent or hidden, at most 1 px,
 * or clipped away.
 */
function isStyledAway(layout: Layout, el: Element, style: StyleFacts): boolean {
  if (!layout.visible(el)) return true;
  const clipStyle = style.clip;
  if (clipStyle && clipStyle !== "auto") return true;
  const clipPath = style.clipPath;
  if (clipPath && clipPath !== "none") return true;
  const r = layout.rect(el);
  return r.w < 2 || r.h < 2;
}

/**
 * The visually hidden pattern (`sr-only`, `visually-hidden`,
 * `ui-helper-hidden-accessible`): clipped away, or a box of at most 1 px
 * that hides its overflow.
 */
function isVisuallyHidden(layout: Layout, el: Element, style: StyleFacts): boolean {
  // Asked only of a box that clips its overflow, whose size then decides.
  const r = layout.rect(el);
  return clippedAway(style, r.w, r.h);
}

/** Linear text of a MathML subtree: scripts as `^`/`_`, fractions and roots bracketed. */
function mathText(el: Element): string {
  const parts: string[] = [];
  for (let kid = el.firstChild; kid; kid = kid.nextSibling) {
    if (kid.nodeType === 3) parts.push(fold((kid as Text).data));
    else if (kid.nodeType === 1) {
      const child = kid as Element;
      const tag = child.localName;
      if (tag === "annotation" || tag === "annotation-xml") continue;
      parts.push(mathText(child));
    }
  }
  const kids = parts.filter(Boolean);
  switch (el.localName) {
    case "msup":
      return kids.length === 2 ? `${kids[0]}^${kids[1]}` : kids.join(" ");
    case "msub":
      return kids.length === 2 ? `${kids[0]}_${kids[1]}` : kids.join(" ");
    case "msubsup":
      return kids.length === 3 ? `${kids[0]}_${kids[1]}^${kids[2]}` : kids.join(" ");
    case "mfrac":
      return kids.length === 2 ? `(${kids[0]})/(${kids[1]})` : kids.join(" ");
    case "msqrt":
      return `√(${kids.join(" ")})`;
    case "mroot":
      return kids.length === 2 ? `root${kids[1]}(${kids[0]})` : kids.join(" ");
    case "semantics":
      return kids[0] ?? "";
    default:
      return kids.join(" ");
  }
}

/** The document's origin, or `""` where it has none to compare with. */
export function originOf(doc: Document): string {
  try {
    return new URL(doc.URL).origin;
  } catch {
    return "";
  }
}

/** Whether the element scrolls its content: overflow auto or scroll, with more content than room. */
function isScrollable(el: Element, style: StyleFacts): boolean {
  // One read of the shorthand rules out the common case.
  if (style.overflow === "visible") return false;
  const y = style.overflowY;
  if ((y === "auto" || y === "scroll") && el.scrollHeight > el.clientHeight + 2) return true;
  const x = style.overflowX;
  return (x === "auto" || x === "scroll") && el.scrollWidth > el.clientWidth + 2;
}

/** Text made of zero-width spaces, joiners and byte-order marks only. */
const ZERO_WIDTH = /^[\u200B-\u200D\u2060\uFEFF]+$/;

/** {@linkcode collectKid}, but of a closed `<details>` only its summary is shown. */
function collectShown(
  pass: Pass,
  node: DNode,
  kid: Node,
  next: Inherited,
  closedDetails: boolean,
): void {
  if (closedDetails && !(kid.nodeType === 1 && (kid as Element).localName === "summary")) return;
  collectKid(pass, node, kid, next);
}

/** Adds one child node to `node`: its text (folded, edges kept as one space) or the walked element. */
export function collectKid(pass: Pass, node: DNode, kid: Node, next: Inherited): void {
  if (kid.nodeType === 3) {
    const data = (kid as Text).data;
    let text = fold(data);
    // Zero-width characters alone hold a line open (an empty select's placeholder): no text.
    if (text.length < 4 && ZERO_WIDTH.test(text)) text = "";
    if (!text) {
      // White space between inline boxes is a word break.
      const last = node.kids[node.kids.length - 1];
      if (typeof last === "string") {
        if (!last.endsWith(" ")) node.kids[node.kids.length - 1] = `${last} `;
      } else if (last && !("k" in last)) last.spaceAfter = true;
      return;
    }
    if (isHidden(node)) return;
    if (!node.unseen && node.style && !node.sized) {
      node.sized = true;
      if (node.style.fontSize === "0px") node.unseen = true;
      // Decoration hidden from assistive tech and drawn transparent (the copy of a
      // floating label in an outlined field's border) is not seen either.
      else if (node.flags & F_ARIA_HIDDEN && !pass.layout.visible(node.el)) node.unseen = true;
    }
    // Edges keep one space where the source has white space, so inline runs join as they read.
    const lead = /^\s/.test(data) ? " " : "", trail = /\s$/.test(data) ? " " : "";
    node.kids.push(lead + text + trail);
  } else if (kid.nodeType === 1) {
    if ((kid as Element).localName === "br") {
      // A line break parts the words around it ("Kristy Turner<br>kristy@…").
      const last = node.kids[node.kids.length - 1];
      if (typeof last === "string") {
        if (!last.endsWith(" ")) node.kids[node.kids.length - 1] = `${last} `;
      } else if (last && !("k" in last)) last.spaceAfter = true;
      return;
    }
    const child = collect(pass, kid as Element, next);
    if (child) node.kids.push(child);
  }
}
