/**
 * The distiller: turns one frame's DOM into a small tree of what an agent
 * needs, with stable ids on what it can act on.
 *
 * A chain of small passes over one tree:
 *
 * 1. `collect` walks the rendered DOM once (open shadow roots and slots
 *    included, `display:none` subtrees pruned), reading one computed style per
 *    element, and records interactivity signals that cost no layout. Inside
 *    an element with a click listener, elements are probed for delegated
 *    handlers of their own; a listened list without candidates inside makes
 *    its items the candidates.
 * 2. `vet` measures boxes only for candidates and applies the vetoes
 *    (aria-hidden, inert, hidden, disabled, pointer-events, zero size,
 *    off-document, outside an open modal, cut away by a clipping box, fully
 *    covered); a hidden native checkbox takes its visible stand-in's box. A
 *    weak-only candidate (listener, hover, tabindex) with candidates inside
 *    that keep ids is a container: it loses its own id, they keep theirs.
 * 3. `assign` hands out ids: an element keeps its id for its whole life and
 *    an id is never handed out twice (the driver owns the counter).
 * 4. `describe` computes roles, names, values, states and cues.
 * 5. `emit` writes the plain JSON tree: generic wrappers collapse, text read
 *    into a name is not repeated, inline runs join as they read, visually
 *    hidden text shows only in names, runs of similar siblings are
 *    summarised (prose and article tables never are).
 *
 * Invariants: the distiller writes nothing to the page (no attributes, no
 * nodes, no properties on page objects); everything it remembers lives in
 * the closure made by {@linkcode createDistiller}. Per-element scratch data
 * lives in the tree of one pass and is dropped when the pass ends.
 *
 * @module
 */
import {
  type Layout,
  LISTEN_CLICK,
  LISTEN_HOVER,
  LISTEN_KEY,
  type Rect,
  type StyleFacts,
} from "./layout.ts";
import {
  clip,
  fold,
  INTERACTIVE_ROLES,
  isDisabled,
  isNativeControl,
  NAME_FROM_CONTENT,
  nameFromAttributes,
  roleOf,
  statesOf,
  STRUCTURE_ROLES,
  svgName,
  valueOf,
} from "./roles.ts";
import type {
  DistillRequest,
  DistillResult,
  WireBox,
  WireElement,
  WireFacts,
  WireFrame,
  WireMore,
  WireNode,
  WireText,
} from "../observe/wire.ts";
import { formatNodes } from "../observe/format_observation.ts";

// Interactivity signals.
const S_NATIVE = 1;
const S_ROLE = 2;
const S_EDITABLE = 4;
const S_TABINDEX = 8;
const S_ONATTR = 16;
const S_LISTENER = 32;
const S_HOVER = 64;
const S_POINTER = 128;
const S_PROXY = 256;
const S_SCROLL = 512;
/** A delegated handler of its own, found by the hook's probe (React, Svelte, jQuery). */
const S_DELEGATED = 1024;
/** An item of a listened list without signals of its own: the leaf the listener serves. */
const S_ITEM = 2048;
const STRONG = S_NATIVE | S_ROLE | S_EDITABLE | S_PROXY;
/** Signals that make an element a target by its own doing, not through an ancestor. */
const OWN_TARGET = S_POINTER | S_DELEGATED | S_ITEM;
/** Weak signals: an element with only these may be a container of the real targets. */
const WEAK = S_TABINDEX | S_ONATTR | S_LISTENER | S_HOVER | S_POINTER | S_DELEGATED | S_ITEM;
/** Most elements probed for delegated handlers in one pass (each probe is one event). */
const MAX_PROBES = 3000;

// Inherited and own flags.
const F_ARIA_HIDDEN = 2;
const F_INERT = 4;
const F_ARIA_DISABLED = 8;
const F_IN_DISABLED_FIELDSET = 16;
/** Elements whose content is not walked: controls and replaced content. */
const LEAF_TAGS = new Set([
  "select",
  "textarea",
  "input",
  "img",
  "canvas",
  "video",
  "audio",
  "iframe",
  "frame",
  "object",
  "embed",
  "svg",
  "math",
  "progress",
  "meter",
]);

/** Tags that are not scroll containers in practice; their overflow is not read. */
const NEVER_SCROLLS = new Set([
  "html",
  "body",
  "a",
  "span",
  "b",
  "i",
  "em",
  "strong",
  "small",
  "label",
  "button",
  "p",
  "h1",
  "h2",
  "h3",
  "h4",
  "h5",
  "h6",
  ...LEAF_TAGS,
]);
const FORM_TAGS = new Set([
  "button",
  "input",
  "select",
  "textarea",
  "option",
  "optgroup",
  "fieldset",
]);

const SKIP_TAGS = new Set([
  "script",
  "style",
  "noscript",
  "template",
  "head",
  "meta",
  "link",
  "base",
  "datalist",
]);
const ON_ATTRS = new Set([
  "onclick",
  "onmousedown",
  "onmouseup",
  "onpointerdown",
  "onpointerup",
  "ontouchstart",
  "onkeydown",
  "ondblclick",
]);
/** Cheap selector for counting what looks actionable in left-out content. */
const ACTIONABLE_SELECTOR =
  "a[href],button,input:not([type=hidden]),select,textarea,summary,[role=button],[role=link]," +
  "[role=checkbox],[role=tab],[role=menuitem],[role=option],[tabindex],[onclick],[contenteditable]";

/** One element of the working tree. */
interface DNode {
  el: Element;
  tag: string;
  role: string;
  sig: number;
  flags: number;
  kids: DKid[];
  /** 0 no line, 1 line without id, 2 line with id. */
  keep: 0 | 1 | 2;
  rect?: Rect;
  inView?: boolean;
  id?: number;
  isNew?: boolean;
  name?: string;
  value?: string;
  states?: string[];
  cues?: string[];
  /** The hidden input a label stands in for. */
  proxy?: Element;
  /** Whether the element is disabled, as `vet` found. */
  disabled?: boolean;
  /** Whether `pointer-events: none` applies to a candidate. */
  noPointer?: boolean;
  /** Name of an svg icon or alt of an image, read into an ancestor's name. */
  ownText?: string;
  /** Option labels of a select. */
  options?: string[];
  /** The element's computed style, kept only while its children are walked. */
  style?: StyleFacts | undefined;
  /** Whether the element's own `visibility` hides it, once asked. */
  hidden?: boolean;
  /**
   * Text a screen reader reads but the page does not show: visually hidden
   * (clipped to a pixel, the `sr-only` pattern) or `font-size: 0`. It counts
   * in names, never as text of its own.
   */
  unseen?: boolean;
  /** Whether `font-size` was read for the element's text. */
  sized?: boolean;
  /** Whether the element is laid out inline, so its text runs on with its neighbours'. */
  inline?: boolean;
  /** Whether white space follows the element before the next text. */
  spaceAfter?: boolean;
  /** The nearest weak-only candidate around this one (a possible delegation container). */
  up?: DNode | undefined;
  /** Whether a candidate inside this one keeps an id. */
  inner?: boolean;
  /** Whether a candidate inside this one was found by the delegation probe. */
  delegates?: boolean;
  /** The nearest ancestor that clips its content (overflow other than visible). */
  clipper?: DNode | undefined;
  /** Whether this element scrolls (rather than only clips) its overflow. */
  scrolls?: boolean;
  /** The clipping box of a clipper, once measured. */
  clipBox?: Rect;
  /** A compact link target, for links. */
  href?: string;
  /** Whether the name already says where the link goes (the text leaves the target out). */
  quietHref?: boolean;
  /** The id of the nearest container with an id, filled in by `emit`. */
  container?: number;
  /** A sibling that stands in visibly for a hidden native input. */
  standIn?: Element;
  /** Whether the name was read from the element's content (that text is not shown again). */
  named?: boolean;
  /** A `title` that differs from the name, shown as a description. */
  description?: string;
}

/**
 * Whether the element's text is not painted: `visibility` other than
 * visible. (Candidates get the full `checkVisibility` test in `vet`, which
 * also sees `opacity: 0` on ancestors.)
 */
function isHidden(node: DNode): boolean {
  node.hidden ??= node.style ? node.style.visibility !== "visible" : false;
  return node.hidden;
}

interface DFrame {
  k: "f";
  el: Element;
}

type DKid = DNode | string | WireMore | DFrame;

interface Inherited {
  flags: number;
  pointer: boolean;
  /** Inside a candidate with a strong signal: weak signals there are the candidate's. */
  inStrong: boolean;
  /** The nearest weak-only candidate around. */
  weak: DNode | undefined;
  /** Inside an element with a click listener: descendants are probed for delegated handlers. */
  delegation: boolean;
  /** The nearest clipping ancestor. */
  clipper: DNode | undefined;
  inside: boolean;
}

interface Pass {
  req: DistillRequest;
  layout: Layout;
  candidates: DNode[];
  labels: Map<Element, DNode>;
  proxies: DNode[];
  vp: { x: number; y: number; w: number; h: number; sw: number; sh: number };
  above: WireMore;
  below: WireMore;
  /** Elements that got a line of their own (labels naming them stay quiet). */
  kept: Set<Element>;
  /** Visible stand-ins of hidden inputs: their text is the input's name. */
  standIns: Set<Element>;
  /** Probes for delegated handlers left in this pass. */
  probes: number;
  /** The document's origin, for compact link targets. */
  origin: string;
  /** Characters of left-out items' text the summary lines may still carry. */
  summaryText: number;
  /** The document's URL without its fragment: links to it show only their fragment. */
  here: string;
  /** Positioned elements (absolute, fixed, sticky): the only ones that can lie over another. */
  occluders: Element[];
  /** Their boxes with overflow, measured when the first candidate needs them. */
  occluderBoxes?: Rect[];
}

/** A distiller for one document, keeping ids for the document's life. */
export interface Distiller {
  /**
   * Distills the document.
   *
   * @param req what to produce and the next free id
   * @param owners the iframe elements the driver knows child frames of; frame nodes point into this list
   * @returns the distilled tree
   */
  observe(req: DistillRequest, owners?: readonly Element[]): DistillResult;
  /**
   * The element that has `id`, if it is still in the document.
   *
   * @param id an id from an earlier observation of this document
   * @returns the element, or `null` when it is gone or was never in this document
   */
  element(id: number): Element | null;
}

/**
 * Makes a distiller for `doc`.
 *
 * @param doc the document to distill
 * @param layout the layout-dependent facts (the browser's, or a stand-in in tests)
 * @returns the distiller, holding the id map for the document's life
 *
 * @example Distill a document under linkedom
 * ```ts ignore
 * const distiller = createDistiller(document, fakeLayout);
 * const result = distiller.observe({ nextId: 1, mode: "page", margin: 0, summariseAfter: 20, keepItems: 5, maxText: 80 });
 * ```
 */
export function createDistiller(doc: Document, layout: Layout): Distiller {
  const ids = new WeakMap<Element, number>();
  const byId = new Map<number, WeakRef<Element>>();
  let observed = false;

  function observe(req: DistillRequest, owners: readonly Element[] = []): DistillResult {
    const start = layout.now();
    const vp = layout.viewport();
    const pass: Pass = {
      req,
      layout,
      candidates: [],
      labels: new Map(),
      proxies: [],
      vp,
      above: { k: "m", n: 0, a: 0, why: "above" },
      below: { k: "m", n: 0, a: 0, why: "below" },
      kept: new Set(),
      standIns: new Set(),
      probes: MAX_PROBES,
      origin: originOf(doc),
      summaryText: MAX_SUMMARY_TEXT,
      here: (doc.URL ?? "").replace(/#.*$/, ""),
      occluders: [],
    };
    // Chromium's own error page (a frame the context's origin rule blocked, or
    // one that failed to load) is not the site's content: say so, no more.
    const failed = (doc.URL ?? "").startsWith("chrome-error:");
    const root = failed ? null : doc.body ?? doc.documentElement;
    const top: DNode | null = root
      ? collect(pass, root, {
        flags: 0,
        pointer: false,
        inStrong: false,
        weak: undefined,
        // The walk starts at the body: a listener on the root element counts from here.
        delegation: doc.documentElement !== null &&
          (layout.listened(doc.documentElement) & LISTEN_CLICK) !== 0,
        clipper: undefined,
        inside: req.mode === "page",
      })
      : null;
    const passes: Record<string, number> = {};
    let mark = start;
    const lap = (name: string) => {
      const now = layout.now();
      passes[name] = Math.round((now - mark) * 10) / 10;
      mark = now;
    };
    lap("collect");
    let nextId = req.nextId;
    if (top) {
      vet(pass, doc);
      lap("vet");
      nextId = assign(pass, ids, byId, nextId);
      describe(pass);
      lap("describe");
    }
    const nodes: WireNode[] = [];
    if (failed) nodes.push({ k: "t", t: BLOCKED_TEXT });
    if (pass.above.n) nodes.push(pass.above);
    if (top) nodes.push(...tidy(emit(pass, top, owners)));
    if (pass.below.n) nodes.push(pass.below);
    lap("emit");
    // `*new` marks only once this document has been observed before.
    const lines = formatNodes(nodes, { showNew: observed });
    observed = true;
    const elements: WireFacts[] = [];
    const frames: DistillResult["frames"] = [];
    facts(nodes, elements, frames);
    lap("format");
    const result: DistillResult = {
      title: fold(doc.title ?? ""),
      url: doc.URL ?? "",
      scroll: {
        x: Math.round(vp.x),
        y: Math.round(vp.y),
        width: Math.round(vp.sw),
        height: Math.round(vp.sh),
        vw: Math.round(vp.w),
        vh: Math.round(vp.h),
      },
      lines,
      elements,
      frames,
      nextId,
      ms: Math.round((layout.now() - start) * 10) / 10,
      passes,
    };
    if (req.tree) result.nodes = nodes;
    return result;
  }

  function element(id: number): Element | null {
    const el = byId.get(id)?.deref();
    if (!el) return null;
    if (!el.isConnected) return null;
    return el;
  }

  return { observe, element };
}

/** What a frame shows instead of Chromium's error page. */
const BLOCKED_TEXT = "(blocked frame: its page did not load or is outside the allowed origins)";

// ---------------------------------------------------------------- collect

/** The nodes rendered as the children of `el`: shadow root first, slots flattened. */
function childNodes(el: Element): ArrayLike<Node> {
  const shadow = (el as HTMLElement).shadowRoot;
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
  const shadow = (el as HTMLElement).shadowRoot;
  if (shadow) return shadow;
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

function collect(pass: Pass, el: Element, inh: Inherited): DNode | null {
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
  if (listened & LISTEN_KEY && sig & S_TABINDEX) sig |= S_LISTENER;
  if (listened & LISTEN_HOVER) sig |= S_HOVER;
  let pointer = inh.pointer;
  if (!inh.inStrong || sig & STRONG) {
    // A pointer cursor is a signal where it starts, not where it is inherited.
    pointer = style.cursor === "pointer";
    if (pointer && !inh.pointer && tag !== "label") sig |= S_POINTER;
  }
  const delegation = inh.delegation || (listened & LISTEN_CLICK) !== 0;
  if (tag === "body" || tag === "html") sig = 0;
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
  if (tag === "label") pass.labels.set(el, node);
  if (
    tag === "input" &&
    /^(checkbox|radio|file)$/.test((el.getAttribute("type") ?? "").toLowerCase()) &&
    isStyledAway(layout, el, style)
  ) {
    pass.proxies.push(node);
  }
  if (LEAF_TAGS.has(tag)) {
    if (tag === "iframe" || tag === "frame") {
      if (!isHidden(node)) node.kids.push({ k: "f", el });
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
      if (closedDetails && !(kid.nodeType === 1 && (kid as Element).localName === "summary")) {
        continue;
      }
      collectKid(pass, node, kid, next);
    }
    node.style = undefined;
    if (weakOnly && pass.candidates.length === before) leafItems(pass, node);
    return node;
  }
  const kids = childNodes(el);
  if (kids.length >= req.summariseAfter && req.summariseAfter > 0 && !closedDetails) {
    collectRuns(pass, node, kids, next);
  } else {
    for (let i = 0; i < kids.length; i++) {
      const kid = kids[i]!;
      if (closedDetails && !(kid.nodeType === 1 && (kid as Element).localName === "summary")) {
        continue;
      }
      collectKid(pass, node, kid, next);
    }
  }
  // Holding thousands of live style declarations makes the walk slower.
  node.style = undefined;
  if (weakOnly && pass.candidates.length === before) leafItems(pass, node);
  return node;
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
  const tag = items[0]!.tag;
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
  const clipStyle = style.clip;
  if (clipStyle && clipStyle !== "auto" && /rect\(\s*0/.test(clipStyle)) return true;
  const clipPath = style.clipPath;
  if (clipPath && /inset\(\s*50%|circle\(\s*0/.test(clipPath)) return true;
  if (style.position !== "absolute" && style.position !== "fixed") return false;
  const r = layout.rect(el);
  return r.w <= 1 && r.h <= 1;
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
function originOf(doc: Document): string {
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

function collectKid(pass: Pass, node: DNode, kid: Node, next: Inherited): void {
  if (kid.nodeType === 3) {
    const data = (kid as Text).data;
    const text = fold(data);
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

/** Tags of prose: a run of them is the page's text, never summarised. */
const PROSE_TAGS = new Set(["p", "blockquote", "pre", "dd", "dt", "h2", "h3", "h4", "figure"]);

/** Chrome inside the main content: navigation, asides, headers and footers. */
const CHROME = "nav,aside,footer,header,[role=navigation],[role=complementary],[role=contentinfo]";
/** The main content of a page. */
const MAIN = "main,article,[role=main]";

/**
 * Whether a run of similar siblings is the page's content rather than
 * repeated chrome: paragraphs of a story anywhere, and any run inside the
 * main content (`main`, `article`, role `main`: the products of a listing,
 * the rows of an article's table, a reading list) that is not chrome within
 * it (a `nav`, `aside`, `header` or `footer`). Content is never summarised;
 * link lists, tag clouds and footers outside the main content are.
 */
function isContent(elements: Element[], from: number): boolean {
  const first = elements[from]!;
  if (PROSE_TAGS.has(first.localName)) return true;
  const main = first.closest(MAIN);
  if (!main) return false;
  const chrome = first.closest(CHROME);
  return !chrome || !main.contains(chrome);
}

/** Tag and first class; siblings are similar when these match. */
function label(el: Element): string {
  const cls = el.getAttribute("class");
  const first = cls ? cls.trim().split(/\s+/)[0] : "";
  return first ? `${el.localName}.${first}` : el.localName;
}

/**
 * What makes siblings "similar": the same label and the same labels of their
 * first few children, so rows of one template match and sections of
 * different content do not.
 */
function signature(el: Element): string {
  let sig = label(el);
  let n = 0;
  for (let child = el.firstElementChild; child && n < 8; child = child.nextElementSibling, n++) {
    sig += ` ${label(child)}`;
  }
  return sig;
}

/**
 * Walks children where long runs of similar siblings exist: the first
 * `keepItems` of a run and those in the viewport are walked, the rest are
 * counted. The viewport part of a run is found by binary search on the
 * items' boxes, which assumes the run is laid out top to bottom.
 */
function collectRuns(pass: Pass, node: DNode, kids: ArrayLike<Node>, next: Inherited): void {
  const { req, layout } = pass;
  const elements: Element[] = [];
  for (let i = 0; i < kids.length; i++) {
    if (kids[i]!.nodeType === 1) {
      elements.push(kids[i] as Element);
    }
  }
  // Runs of equal signatures, by element index.
  const skip = new Set<number>();
  const runs: { from: number; to: number; sig: string }[] = [];
  const sigs = elements.map(signature);
  let from = 0;
  for (let i = 1; i <= elements.length; i++) {
    if (i < elements.length && sigs[i] === sigs[i - 1]) continue;
    if (i - from > req.summariseAfter && !isContent(elements, from)) {
      runs.push({ from, to: i, sig: label(elements[from]!) });
    }
    from = i;
  }
  const mores = new Map<number, WireMore>();
  for (const run of runs) {
    const top = -req.margin, bottom = pass.vp.h + req.margin;
    let lo = run.from, hi = run.to;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      const r = layout.rect(elements[mid]!);
      if (r.y + r.h < top) lo = mid + 1;
      else hi = mid;
    }
    const firstIn = lo;
    hi = run.to;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      const r = layout.rect(elements[mid]!);
      if (r.y <= bottom) lo = mid + 1;
      else hi = mid;
    }
    const lastIn = Math.min(lo, firstIn + 200);
    let pending: WireMore | undefined;
    for (let i = run.from; i < run.to; i++) {
      const keep = i < run.from + req.keepItems || (i >= firstIn && i < lastIn);
      if (keep) {
        pending = undefined;
        continue;
      }
      skip.add(i);
      if (!pending) {
        pending = {
          k: "m",
          n: 0,
          a: 0,
          why: "similar",
          what: run.sig,
          where: i < firstIn ? "above" : "below",
        };
        mores.set(i, pending);
      }
      pending.n += 1;
      pending.a += countActionable(elements[i]!);
      // The words stay (an agent reads what the run holds); the ids come on request.
      if (pass.summaryText > 0) {
        const text = clip(fold(elements[i]!.textContent ?? ""), MAX_SUMMARY_ITEM);
        if (text) {
          (pending.texts ??= []).push(text);
          pass.summaryText -= text.length;
        }
      }
    }
  }
  let e = 0;
  for (let i = 0; i < kids.length; i++) {
    const kid = kids[i]!;
    if (kid.nodeType === 1) {
      const index = e++;
      const more = mores.get(index);
      if (more) node.kids.push(more);
      if (skip.has(index)) continue;
    }
    collectKid(pass, node, kid, next);
  }
}

/**
 * Most characters of left-out items' text the summary lines of one pass
 * carry: the words of a tag cloud or a footer stay, a 2,000-row table's do not.
 */
const MAX_SUMMARY_TEXT = 1000;
/** Most characters of one left-out item's text in a summary line. */
const MAX_SUMMARY_ITEM = 40;

function countActionable(el: Element): number {
  let n = el.matches(ACTIONABLE_SELECTOR) ? 1 : 0;
  n += el.querySelectorAll(ACTIONABLE_SELECTOR).length;
  return n;
}

// ---------------------------------------------------------------- vet

/** The element, or the shadow host chain above it, is inside `container`. */
function composedContains(container: Element, el: Element): boolean {
  let node: Node | null = el;
  while (node) {
    if (container.contains(node)) return true;
    const root: Node = node.getRootNode();
    node = (root as ShadowRoot).host ?? null;
  }
  return false;
}

/** An open modal: a `<dialog>` shown with `showModal()` or a visible `aria-modal` element. */
function openModal(doc: Document, layout: Layout): Element | null {
  try {
    const modal = doc.querySelector("dialog:modal");
    if (modal) return modal;
  } catch {
    // no :modal support (linkedom)
  }
  for (const el of Array.from(doc.querySelectorAll('[aria-modal="true"]'))) {
    const r = layout.rect(el);
    if (r.w > 0 && r.h > 0 && layout.style(el).visibility === "visible") return el;
  }
  return null;
}

function vet(pass: Pass, doc: Document): void {
  const { layout, vp } = pass;
  const modal = openModal(doc, layout);
  for (const proxy of pass.proxies) {
    const labels = (proxy.el as HTMLInputElement).labels;
    const label = labels && labels.length ? pass.labels.get(labels[0]!) : undefined;
    if (label && layout.visible(label.el)) {
      label.proxy = proxy.el;
      label.role = proxy.role;
      label.sig |= S_PROXY;
      if (!pass.candidates.includes(label)) pass.candidates.push(label);
      continue;
    }
    // No label names it: a visible sibling (a label without `for`, a span
    // drawn by CSS) stands in, and the input itself takes the id, so that
    // checking it acts on the real control.
    const standIn = siblingStandIn(layout, proxy.el);
    if (standIn) {
      proxy.standIn = standIn;
      pass.standIns.add(standIn);
      const parent = proxy.el.parentElement;
      if (
        !fold(standIn.textContent ?? "") && parent && fold(parent.textContent ?? "").length <= 80
      ) {
        // A box drawn by CSS, the words beside it: the whole small wrapper stands in.
        pass.standIns.add(parent);
        for (let sib = parent.firstElementChild; sib; sib = sib.nextElementSibling) {
          if (sib !== proxy.el && !sib.querySelector("input,select,textarea,button,a[href]")) {
            pass.standIns.add(sib);
          }
        }
      }
    }
    const r = layout.rect(proxy.el);
    if (standIn || r.w >= 2 && r.h >= 2) proxy.sig |= S_PROXY;
  }
  for (const node of pass.candidates) {
    const { el, flags } = node;
    if (flags & (F_ARIA_HIDDEN | F_INERT)) continue;
    if (pass.standIns.has(el)) continue;
    if (!(node.sig & S_PROXY) && !layout.visible(el)) continue;
    if (modal && !composedContains(modal, el)) continue;
    const disabled = node.proxy
      ? isDisabled(node.proxy, "input")
      : (flags & F_ARIA_DISABLED) !== 0 ||
        FORM_TAGS.has(node.tag) &&
          (el.hasAttribute("disabled") || (flags & F_IN_DISABLED_FIELDSET) !== 0);
    node.disabled = disabled;
    const shown = node.standIn ?? el;
    const r = layout.rect(shown);
    node.rect = r;
    if (r.w < 2 || r.h < 2) continue;
    if (r.x + r.w <= -vp.x || r.y + r.h <= -vp.y) continue;
    node.inView = r.x < vp.w && r.x + r.w > 0 && r.y < vp.h && r.y + r.h > 0;
    const clipped = node.clipper ? clipState(pass, node, r) : CLIP_NONE;
    if (clipped === CLIP_HIDDEN) continue;
    if (clipped === CLIP_SCROLLED) node.inView = false;
    // Only the part its scroll boxes show can be hit: an item half scrolled
    // out of a list is probed where it shows, not over what lies below the list.
    const seen = node.inView && node.clipper ? shownPart(pass, node, r) : r;
    if (seen.w < 1 || seen.h < 1) node.inView = false;
    if (disabled || node.noPointer) {
      // Shown, so the agent knows it is there, but nothing to act on.
      if (node.sig & STRONG) node.keep = 1;
      continue;
    }
    // A transparent input laid over its stand-in or label is the element itself, not a cover.
    if (
      node.inView && mayBeCovered(pass, shown, seen) &&
      covered(layout, shown, seen, vp, node.proxy ?? (node.standIn && el))
    ) {
      continue;
    }
    node.keep = 2;
  }
  unwrapContainers(pass);
  for (const node of pass.candidates) if (node.keep) pass.kept.add(node.proxy ?? node.el);
}

/**
 * A listener on an ancestor is not a signal that the ancestor is the
 * target. A weak-only candidate (listener, hover, tabindex, on* attribute)
 * with candidates inside that keep ids is a container, kept as structure,
 * when everything it shows belongs to those targets, or it only hovers or
 * takes focus, or it delegates (a target inside was found by the probe), or
 * it is too big to be one thing a person clicks (more than half the
 * viewport). Otherwise (a listened row with its own text and a Delete
 * button inside) it stays a target beside them. A pointer cursor of its own
 * or a delegated handler of its own keeps it unless it shows nothing of its own.
 */
function unwrapContainers(pass: Pass): void {
  for (const node of pass.candidates) {
    if (node.keep !== 2 || !(node.sig & ~S_SCROLL)) continue;
    const delegated = (node.sig & S_DELEGATED) !== 0;
    for (let up = node.up; up; up = up.up) {
      if (up.inner && (!delegated || up.delegates)) break;
      up.inner = true;
      if (delegated) up.delegates = true;
    }
  }
  const { vp } = pass;
  for (const node of pass.candidates) {
    if (node.keep !== 2 || !node.inner || node.sig & STRONG) continue;
    const parts: string[] = [];
    contentText(node, parts);
    const own = fold(parts.join("")) !== "";
    if (own) {
      if (node.sig & OWN_TARGET) continue;
      const r = node.rect;
      const big = r !== undefined && (r.w * r.h > vp.w * vp.h / 2 || r.h > vp.h);
      if (node.sig & (S_LISTENER | S_ONATTR) && !node.delegates && !big) continue;
    }
    node.sig &= ~WEAK;
    if (!(node.sig & S_SCROLL)) node.keep = 0;
  }
}

const CLIP_NONE = 0;
/** Outside the visible part of a scroll container: there, but scrolled out of view. */
const CLIP_SCROLLED = 1;
/** Cut away by an `overflow: hidden` box that does not scroll: not visible at all. */
const CLIP_HIDDEN = 2;

/**
 * The element's box against every clipping ancestor: wholly outside one
 * that scrolls means scrolled out of view, wholly outside one that only
 * clips means hidden. Positioned content can escape a clipping box that is
 * not its containing block, so "hidden" in the viewport is confirmed by a
 * hit test at the box's centre.
 */
function clipState(pass: Pass, node: DNode, r: Rect): number {
  let state = CLIP_NONE;
  for (let c = node.clipper; c; c = c.clipper) {
    const box = c.clipBox ??= clientBox(pass.layout, c.el);
    const outside = r.x >= box.x + box.w || r.x + r.w <= box.x || r.y >= box.y + box.h ||
      r.y + r.h <= box.y;
    if (!outside) continue;
    if (c.scrolls) {
      state = CLIP_SCROLLED;
      continue;
    }
    const { vp } = pass;
    const cx = r.x + r.w / 2, cy = r.y + r.h / 2;
    if (cx >= 0 && cy >= 0 && cx < vp.w && cy < vp.h) {
      const root = node.el.getRootNode() as Document | ShadowRoot;
      const hit = typeof root.elementFromPoint === "function"
        ? pass.layout.hit(root, cx, cy)
        : null;
      if (hit && (hit === node.el || node.el.contains(hit) || (node.standIn?.contains(hit)))) {
        continue;
      }
    }
    return CLIP_HIDDEN;
  }
  return state;
}

/** The part of `r` that every scrolling ancestor of the node shows (their boxes are measured by `clipState`). */
function shownPart(pass: Pass, node: DNode, r: Rect): Rect {
  let x0 = r.x, y0 = r.y, x1 = r.x + r.w, y1 = r.y + r.h;
  for (let c = node.clipper; c; c = c.clipper) {
    if (!c.scrolls) continue;
    const box = c.clipBox ??= clientBox(pass.layout, c.el);
    x0 = Math.max(x0, box.x);
    y0 = Math.max(y0, box.y);
    x1 = Math.min(x1, box.x + box.w);
    y1 = Math.min(y1, box.y + box.h);
  }
  return { x: x0, y: y0, w: Math.max(0, x1 - x0), h: Math.max(0, y1 - y0) };
}

/** The padding box of a clipping element: where its content shows. */
function clientBox(layout: Layout, el: Element): Rect {
  const r = layout.rect(el);
  const html = el as HTMLElement;
  if (!html.clientWidth && !html.clientHeight) return r;
  return {
    x: r.x + (html.clientLeft ?? 0),
    y: r.y + (html.clientTop ?? 0),
    w: html.clientWidth,
    h: html.clientHeight,
  };
}

/**
 * The visible sibling that stands in for a hidden checkbox or radio: the
 * next (else previous) element sibling when it is a label for no other
 * control or an inline box such as a span drawn by CSS.
 */
function siblingStandIn(layout: Layout, input: Element): Element | null {
  for (const sibling of [input.nextElementSibling, input.previousElementSibling]) {
    if (!sibling) continue;
    const tag = sibling.localName;
    if (tag === "label") {
      const control = (sibling as HTMLLabelElement).control;
      if (control && control !== input) continue;
      if (sibling.hasAttribute("for") && !control) continue;
    } else if (tag !== "span" && tag !== "i" && tag !== "div") continue;
    if (sibling.querySelector("input,select,textarea,button,a[href]")) continue;
    const r = layout.rect(sibling);
    if (r.w >= 2 && r.h >= 2 && layout.visible(sibling)) return sibling;
  }
  return null;
}

/**
 * Whether anything can lie over `el`'s box `r`: a positioned element (with
 * its overflow) that overlaps the box and is neither `el`, inside it, nor
 * around it. Boxes in normal flow do not overlap, so the hit tests (the
 * vet's main cost) are spent only where a cover can be. What this misses
 * (negative margins, grid items placed in one cell, transforms) the
 * actor's own hit test still names as the cover when an action is tried.
 */
function mayBeCovered(pass: Pass, el: Element, r: Rect): boolean {
  const { occluders, layout } = pass;
  if (occluders.length === 0) return false;
  const boxes = pass.occluderBoxes ??= occluders.map((o) => {
    const box = layout.rect(o);
    // Content overflowing a positioned box (a zero-height wrapper of a menu) lies over others too.
    const html = o as HTMLElement;
    return {
      x: box.x,
      y: box.y,
      w: Math.max(box.w, html.scrollWidth ?? 0),
      h: Math.max(box.h, html.scrollHeight ?? 0),
    };
  });
  for (let i = 0; i < boxes.length; i++) {
    const o = boxes[i]!;
    if (o.x >= r.x + r.w || o.x + o.w <= r.x || o.y >= r.y + r.h || o.y + o.h <= r.y) continue;
    const occluder = occluders[i]!;
    if (occluder === el || occluder.contains(el) || el.contains(occluder)) continue;
    return true;
  }
  return false;
}

/**
 * Whether every probe point of the box hits something that is neither the
 * element, inside it, one of its labels, one of its ancestors (an ancestor
 * means the point is clipped by a scroll container, not covered), nor
 * `input`: the styled-away control the element stands in for, which often
 * lies transparent over it and takes the click itself.
 */
function covered(
  layout: Layout,
  el: Element,
  r: Rect,
  vp: { w: number; h: number },
  input?: Element | false,
): boolean {
  const root = el.getRootNode() as Document | ShadowRoot;
  if (typeof root.elementFromPoint !== "function") return false;
  const x0 = Math.max(r.x, 0), x1 = Math.min(r.x + r.w, vp.w);
  const y0 = Math.max(r.y, 0), y1 = Math.min(r.y + r.h, vp.h);
  const points: [number, number][] = [
    [(x0 + x1) / 2, (y0 + y1) / 2],
    [x0 + (x1 - x0) * 0.2, y0 + (y1 - y0) * 0.2],
    [x0 + (x1 - x0) * 0.8, y0 + (y1 - y0) * 0.8],
    [x0 + (x1 - x0) * 0.8, y0 + (y1 - y0) * 0.2],
    [x0 + (x1 - x0) * 0.2, y0 + (y1 - y0) * 0.8],
  ];
  for (const [x, y] of points) {
    const hit = layout.hit(root, x, y);
    if (!hit) return false;
    if (hit === el || el.contains(hit) || hit.contains(el) || hit === input) return false;
    const label = hit.closest("label");
    if (label && (label.control === el || label.contains(el))) return false;
  }
  return true;
}

// ---------------------------------------------------------------- assign

function assign(
  pass: Pass,
  ids: WeakMap<Element, number>,
  byId: Map<number, WeakRef<Element>>,
  nextId: number,
): number {
  for (const node of pass.candidates) {
    if (node.keep !== 2) continue;
    let id = ids.get(node.el);
    if (id === undefined) {
      id = nextId++;
      ids.set(node.el, id);
      byId.set(id, new WeakRef(node.el));
      node.isNew = true;
    }
    node.id = id;
  }
  // Forget ids of collected elements so the map does not grow without bound.
  if (byId.size > 4 * pass.candidates.length + 1024) {
    for (const [id, ref] of byId) if (!ref.deref()) byId.delete(id);
  }
  return nextId;
}

// ---------------------------------------------------------------- describe

/** Visible text under a node, without the text of nested nodes that get their own line. */
function contentText(node: DNode, out: string[]): void {
  if (node.ownText) out.push(` ${node.ownText} `);
  for (const kid of node.kids) {
    if (typeof kid === "string") out.push(kid);
    else if (!("k" in kid) && consumed(kid)) {
      // Block boxes break words; inline boxes run on as the text reads.
      if (!kid.inline) out.push(" ");
      contentText(kid, out);
      if (!kid.inline || kid.spaceAfter) out.push(" ");
    }
  }
}

/** Whether a child's text is read into its parent's name from content (and so not shown again). */
function consumed(kid: DNode): boolean {
  return kid.keep === 0 &&
    (!STRUCTURE_ROLES.has(kid.role) || kid.role === "img" || kid.role === "heading");
}

/** Folds the white space text runs kept at their edges, dropping runs left empty. */
function tidy(nodes: WireNode[]): WireNode[] {
  const out: WireNode[] = [];
  for (const node of nodes) {
    if (node.k === "t") {
      const t = fold(node.t);
      if (t) out.push({ k: "t", t });
      continue;
    }
    if (node.k === "e" && node.c) {
      const c = tidy(node.c);
      if (c.length) node.c = c;
      else delete node.c;
    }
    out.push(node);
  }
  return out;
}

/** What is left of emitted nodes once their text went into a name: the elements with ids. */
function prune(nodes: WireNode[]): WireNode[] {
  const out: WireNode[] = [];
  for (const node of nodes) {
    if (node.k === "f") out.push(node);
    if (node.k !== "e") continue;
    if (node.id !== undefined) {
      out.push(node);
      continue;
    }
    const inner = node.c ? prune(node.c) : [];
    out.push(...inner);
  }
  return out;
}

function describeNode(pass: Pass, node: DNode, focused: Element | null): void {
  const { req } = pass;
  const target = node.proxy ?? node.el;
  const tag = node.proxy ? "input" : node.tag;
  let role = node.role;
  const scrollOnly = (node.sig & ~(S_SCROLL | S_TABINDEX)) === 0 && (node.sig & S_SCROLL) !== 0;
  if (!role) role = node.sig & S_EDITABLE ? "textbox" : scrollOnly ? "scrollable" : "clickable";
  node.role = role;
  const fromContent = !scrollOnly && (NAME_FROM_CONTENT.has(role) ||
    (node.sig & (S_POINTER | S_LISTENER | S_ONATTR | S_DELEGATED | S_ITEM)) !== 0);
  // accname 1.2 step 2: content comes before `title` for roles named from content.
  let name = node.proxy
    ? fold(node.el.textContent ?? "")
    : nameFromAttributes(target, tag, { title: !fromContent });
  if (!name && node.standIn) name = standInText(node.el, node.standIn);
  if (!name && fromContent) {
    const parts: string[] = [];
    contentText(node, parts);
    name = fold(parts.join(""));
    // The element's own text is its name: do not repeat it below the line.
    if (name) node.named = true;
  }
  const title = fromContent ? fold(target.getAttribute("title") ?? "") : "";
  if (!name && fromContent) name = title || fold(target.getAttribute("placeholder") ?? "");
  else if (title && title !== name) node.description = clip(title, req.maxText);
  if (name && fromContent && !node.named) {
    if (target.hasAttribute("aria-labelledby")) {
      // Named by other text: its own text is content of its own and stays, unless it says the same.
      node.kids = node.kids.filter((kid) => typeof kid !== "string" || fold(kid) !== name);
    } else {
      // `aria-label` and the like replace what it shows (an icon's letters, a repeated caption).
      node.kids = node.kids.filter((kid) => typeof kid !== "string");
    }
  } else if (node.named) node.kids = node.kids.filter((kid) => typeof kid !== "string");
  if (name) node.name = clip(name, req.maxText);
  const value = node.sig & S_EDITABLE && !node.proxy
    ? fold(node.el.textContent ?? "")
    : valueOf(target, tag, role);
  if (value !== undefined && value !== "") node.value = clip(fold(value), req.maxText);
  if (node.sig & S_EDITABLE) node.kids = node.kids.filter((kid) => typeof kid !== "string");
  if (tag === "select") node.options = optionsOf(target, req.maxText);
  if ((tag === "a" || tag === "area") && role === "link") {
    const href = compactHref(target, pass);
    if (href) node.href = href;
    if (href && name && saysTarget(href, name)) node.quietHref = true;
  }
  const states = statesOf(target, tag, role, node.disabled);
  if (focused === target) states.push("focused");
  if (node.sig & S_SCROLL) {
    const el = node.el;
    if (el.scrollHeight > el.clientHeight + 2) {
      states.push(`scroll=${Math.round(el.scrollTop)}/${el.scrollHeight - el.clientHeight}`);
    } else {
      states.push(`scrollx=${Math.round(el.scrollLeft)}/${el.scrollWidth - el.clientWidth}`);
    }
  }
  if (states.length) node.states = states;
  const cues: string[] = [];
  if (!(node.sig & (S_NATIVE | S_ROLE | S_PROXY))) {
    if (node.sig & S_EDITABLE) cues.push("editable");
    if (node.sig & (S_LISTENER | S_ONATTR | S_DELEGATED | S_ITEM)) cues.push("listener");
    if (node.sig & S_POINTER) cues.push("pointer");
    if (node.sig & S_TABINDEX) cues.push("focusable");
  }
  if (node.sig & S_HOVER) cues.push("hover");
  if (node.sig & S_SCROLL && role !== "scrollable") cues.push("scrollable");
  if (cues.length) node.cues = cues;
}

function describe(pass: Pass): void {
  const focused = pass.layout.focused();
  for (const node of pass.candidates) if (node.keep) describeNode(pass, node, focused);
}

/**
 * The name a stand-in gives its hidden input: its text, else the text of
 * the input's parent when that is short (`<input><span class=box></span> Newsletter`).
 */
function standInText(input: Element, standIn: Element): string {
  const own = fold(standIn.textContent ?? "");
  if (own) return own;
  const around = fold(input.parentElement?.textContent ?? "");
  return around.length <= 80 ? around : "";
}

/** Longest link target shown, in characters. */
const MAX_HREF = 80;

/**
 * Where a link goes, compactly: path, query and fragment on the document's
 * own origin, origin and path elsewhere; nothing for script links.
 */
function compactHref(el: Element, pass: Pass): string {
  // The browser's resolved `href` spares parsing a URL per link.
  let href = (el as HTMLAnchorElement).href;
  if (typeof href !== "string") href = el.getAttribute("href") ?? "";
  if (!href.startsWith("http")) {
    return /^javascript:/i.test(href) ? "" : clip(href, MAX_HREF);
  }
  const hash = href.indexOf("#");
  const bare = hash === -1 ? href : href.slice(0, hash);
  if (bare === pass.here) return hash === -1 ? "" : href.slice(hash); // this page: its fragment
  const { origin } = pass;
  if (origin && href.startsWith(origin) && href.charCodeAt(origin.length) === 47) {
    return clip(href.slice(origin.length), MAX_HREF);
  }
  return clip(href.replace(/^https?:\/\//, ""), MAX_HREF);
}

/** Lower-case letters and digits only, for comparing a name with a path. */
function squash(text: string): string {
  return text.toLowerCase().replace(/[^\p{L}\p{N}]+/gu, "");
}

/**
 * Whether a link's name already says where it goes: the target's last
 * path segment, decoded and without an extension, spells the name
 * (`"Copper Sky"` → `#/film/Copper-Sky`, `"Projects"` → `/projects`);
 * an in-page anchor (`#year`) never does.
 */
function saysTarget(href: string, name: string): boolean {
  const bare = href.replace(/[?].*$/, "").replace(/\/+$/, "");
  const slash = bare.lastIndexOf("/");
  // An in-page anchor (`#year`) says something the name does not: it stays.
  if (slash < 0 || bare.indexOf("#", slash) >= 0) return false;
  let last = bare.slice(slash + 1);
  try {
    last = decodeURIComponent(last);
  } catch {
    // a malformed escape: compare as written
  }
  last = last.replace(/\.[a-z0-9]{1,5}$/i, "");
  const target = squash(last);
  return target !== "" && target === squash(name);
}

/** Option labels of a select, group labels folded in as `group/option`, at most 25. */
function optionsOf(el: Element, maxText: number): string[] {
  const out: string[] = [];
  const options = el.querySelectorAll("option");
  for (let i = 0; i < options.length && out.length < 25; i++) {
    const option = options[i]!;
    const group = option.parentElement?.localName === "optgroup"
      ? option.parentElement.getAttribute("label")
      : null;
    const label = fold(option.getAttribute("label") ?? option.textContent ?? "");
    out.push(clip(group ? `${fold(group)}/${label}` : label, maxText));
  }
  if (options.length > out.length) out.push(`… ${options.length - out.length} more`);
  return out;
}

// ---------------------------------------------------------------- emit

function box(r: Rect): WireBox {
  return [Math.round(r.x), Math.round(r.y), Math.round(r.w), Math.round(r.h)];
}

/** Names structure lines (headings, landmarks, cells) from attributes or content. */
function structureName(node: DNode, req: DistillRequest): string | undefined {
  const named = node.el.hasAttributes() || node.tag === "fieldset" || node.tag === "table";
  const fromContent = NAME_FROM_CONTENT.has(node.role);
  // accname: content comes before `title` for roles named from content (a column header).
  const attr = (named ? nameFromAttributes(node.el, node.tag, { title: !fromContent }) : "") ||
    node.ownText || "";
  if (attr) return clip(attr, req.maxText);
  if (!fromContent) return undefined;
  const hasLines = node.kids.some((kid) => typeof kid !== "string" && !("k" in kid) && kid.keep);
  if (hasLines) return undefined;
  const parts: string[] = [];
  contentText(node, parts);
  const name = fold(parts.join(""));
  if (!name) {
    return named
      ? clip(fold(node.el.getAttribute("title") ?? ""), req.maxText) || undefined
      : undefined;
  }
  node.kids = node.kids.filter((kid) => typeof kid !== "string");
  node.named = true;
  // A cell's text is the table's content: kept whole, as a paragraph would be.
  return clip(name, CELLS.has(node.role) ? MAX_CELL : req.maxText);
}

/** Roles of table cells, whose content names them. */
const CELLS = new Set(["cell", "gridcell", "columnheader", "rowheader"]);
/** Longest cell text kept, in characters. */
const MAX_CELL = 1000;

/** Roles that hold other elements, so that an id on one scopes what lies inside. */
const CONTAINER_ROLES = new Set([
  "dialog",
  "alertdialog",
  "form",
  "list",
  "listbox",
  "menu",
  "menubar",
  "tree",
  "grid",
  "treegrid",
  "tablist",
  "radiogroup",
  "toolbar",
  "scrollable",
]);

function emit(
  pass: Pass,
  node: DNode,
  owners: readonly Element[],
  container?: number,
  scroller?: number,
): WireNode[] {
  const out = emitNode(pass, node, owners, container, scroller);
  // Unseen text is read into names above, never shown as text of its own.
  return node.unseen ? prune(out) : out;
}

function emitNode(
  pass: Pass,
  node: DNode,
  owners: readonly Element[],
  container?: number,
  outerScroller?: number,
): WireNode[] {
  const { req } = pass;
  const scroller = node.id !== undefined && node.sig & S_SCROLL ? node.id : outerScroller;
  const inner = node.id !== undefined && (node.sig & S_SCROLL || CONTAINER_ROLES.has(node.role))
    ? node.id
    : container;
  const line = node.keep > 0 ||
    (STRUCTURE_ROLES.has(node.role) && !(node.flags & F_ARIA_HIDDEN) && !isHidden(node));
  const name = node.keep ? node.name : line ? structureName(node, req) : undefined;
  const kids: WireNode[] = [];
  const quiet = node.tag === "label" && labelledKept(pass, node.el) ||
    pass.standIns.has(node.el) || node.unseen === true;
  // Whether the last text can run on into the next (no block box in between).
  let runs = false;
  const addText = (text: string, glue: boolean): void => {
    const last = kids[kids.length - 1];
    if (last && last.k === "t" && runs) last.t += glue ? text : ` ${text}`;
    else kids.push({ k: "t", t: text });
    runs = true;
  };
  for (const kid of node.kids) {
    if (typeof kid === "string") {
      if (quiet) continue;
      addText(kid, true);
    } else if ("k" in kid) {
      runs = false;
      if (kid.k === "f") {
        const frame: WireFrame = {
          k: "f",
          slot: owners.indexOf(kid.el),
          box: frameBox(pass, kid.el),
        };
        const title = fold(kid.el.getAttribute("title") ?? kid.el.getAttribute("aria-label") ?? "");
        if (title) frame.name = title;
        kids.push(frame);
      } else {
        if (kid.why === "similar" && scroller !== undefined) kid.scroll = scroller;
        kids.push(kid);
      }
    } else {
      const emitted = emit(pass, kid, owners, inner, scroller);
      const outs = node.named && consumed(kid) ? prune(emitted) : emitted;
      if (kid.inline && outs.length && outs.every((out) => out.k === "t")) {
        // An inline box of text (`<b>`, `<code>`, a span) runs on in the sentence.
        addText(outs.map((out) => (out as WireText).t).join(" "), true);
        if (kid.spaceAfter) addText(" ", true);
        continue;
      }
      if (kid.tag === "br" && kids[kids.length - 1]?.k === "t") addText(" ", true);
      runs = false;
      const only = outs.length === 1 ? outs[0] : undefined;
      if (kid.inline && only?.k === "e" && only.id !== undefined && !only.c) only.inline = true;
      for (const out of outs) kids.push(out);
      if (kid.inline && kid.spaceAfter) runs = false;
    }
  }
  if (!line) {
    // A generic wrapper: keep it as a group only when it groups several things.
    if (kids.length >= 2 && node.tag !== "body") return [{ k: "e", role: "", c: kids }];
    return kids;
  }
  if (node.keep === 0 && !name && kids.length === 0 && node.role !== "canvas") return [];
  if (name) {
    // Text that only says the name again (`[7] link "Share" Share`, a
    // fieldset's legend, the part of an `aria-labelledby` name the element
    // shows) is left out.
    for (let i = kids.length - 1; i >= 0; i--) {
      const kid = kids[i]!;
      if (kid.k === "t" && saidIn(name, fold(kid.t))) kids.splice(i, 1);
    }
  }
  dropEchoedImages(kids);
  const out: WireElement = { k: "e", role: node.role };
  if (node.id !== undefined) {
    out.id = node.id;
    if (container !== undefined) out.container = container;
  }
  if (name) out.name = name;
  if (node.value !== undefined) out.value = node.value;
  if (node.options) out.options = node.options;
  if (node.states) out.states = node.states;
  if (node.cues) out.cues = node.cues;
  if (node.href) out.href = node.href;
  if (node.quietHref) out.quietHref = true;
  if (node.description) out.description = node.description;
  if (node.id !== undefined && node.rect) {
    out.box = box(node.rect);
    out.inView = node.inView === true;
    if (node.isNew) out.isNew = true;
  }
  if (kids.length) out.c = kids;
  return [out];
}

/** Whether `text` is `name` or a run of whole words of it. */
function saidIn(name: string, text: string): boolean {
  if (!text) return false;
  if (text === name) return true;
  const at = name.indexOf(text);
  if (at < 0) return false;
  const before = at === 0 ? " " : name[at - 1]!, after = name[at + text.length] ?? " ";
  return !/[\p{L}\p{N}]/u.test(before) && !/[\p{L}\p{N}]/u.test(after);
}

/**
 * Drops an image line that only says what the element beside it is named
 * (a product photo before the product's link): it carries nothing more.
 */
function dropEchoedImages(kids: WireNode[]): void {
  for (let i = kids.length - 1; i >= 0; i--) {
    const kid = kids[i]!;
    if (kid.k !== "e" || kid.role !== "img" || kid.id !== undefined || kid.c || !kid.name) continue;
    const next = kids[i + 1], previous = kids[i - 1];
    if (
      next?.k === "e" && next.name === kid.name || previous?.k === "e" && previous.name === kid.name
    ) {
      kids.splice(i, 1);
    }
  }
}

/** Flattens the facts of elements with ids, and the frames, out of the tree. */
function facts(nodes: WireNode[], out: WireFacts[], frames: DistillResult["frames"]): void {
  for (const node of nodes) {
    if (node.k === "f") {
      const frame: DistillResult["frames"][number] = { slot: node.slot, box: node.box };
      if (node.name) frame.name = node.name;
      frames.push(frame);
      continue;
    }
    if (node.k !== "e") continue;
    if (node.id !== undefined) {
      const box = node.box ?? [0, 0, 0, 0];
      out.push([
        node.id,
        node.role,
        node.name ?? "",
        node.value ?? null,
        node.states ? node.states.join(" ") : "",
        node.cues ? node.cues.join(" ") : "",
        box[0],
        box[1],
        box[2],
        box[3],
        (node.inView ? 1 : 0) | (node.isNew ? 2 : 0),
        node.href ?? "",
        node.container ?? 0,
        node.description ?? "",
      ]);
    }
    if (node.c) facts(node.c, out, frames);
  }
}

/** Whether the label's control got a line (and so took the label's text as its name). */
function labelledKept(pass: Pass, label: Element): boolean {
  const control = (label as HTMLLabelElement).control ??
    (label.getAttribute("for")
      ? label.ownerDocument.getElementById(label.getAttribute("for")!)
      : label.querySelector("input,select,textarea"));
  return control ? pass.kept.has(control) : false;
}

function frameBox(pass: Pass, el: Element): WireBox {
  const r = pass.layout.rect(el);
  const html = el as HTMLElement;
  const left = html.clientLeft ?? 0, top = html.clientTop ?? 0;
  return [
    Math.round(r.x + left),
    Math.round(r.y + top),
    Math.round(html.clientWidth || r.w),
    Math.round(html.clientHeight || r.h),
  ];
}
