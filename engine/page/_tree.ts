/**
 * The distiller's working tree: the signals and flags an element carries,
 * the node of one pass, what a walk inherits, and the pass itself.
 *
 * @module
 */

import type { Layout, Rect, StyleFacts } from "./layout.ts";
import { STRUCTURE_ROLES } from "./roles.ts";
import type { DistillRequest, FrameVeto, WireMore } from "../observe/wire.ts";

// Interactivity signals, bits of `DNode.sig`.
/** A native control (link with href, button, input, select, textarea, summary). */
export const S_NATIVE = 1;
/** An ARIA widget role. */
export const S_ROLE = 2;
/** `contenteditable`. */
export const S_EDITABLE = 4;
/** `tabindex` of 0 or more. */
export const S_TABINDEX = 8;
/** An `on*` handler attribute. */
export const S_ONATTR = 16;
/** A click-like listener added by script (or a key listener on a focusable element). */
export const S_LISTENER = 32;
/** A hover listener. */
export const S_HOVER = 64;
/** A pointer cursor where the parent has none. */
export const S_POINTER = 128;
/** A label or stand-in acting for a hidden native input. */
export const S_PROXY = 256;
/** A scroll container. */
export const S_SCROLL = 512;
/** A delegated handler of its own, found by the hook's probe (React, Svelte, jQuery). */
export const S_DELEGATED = 1024;
/** An item of a listened list without signals of its own: the leaf the listener serves. */
export const S_ITEM = 2048;

/** Signals that make an element a target whatever is around or inside it. */
export const STRONG = S_NATIVE | S_ROLE | S_EDITABLE | S_PROXY;

/** Signals that make an element a target by its own doing, not through an ancestor. */
export const OWN_TARGET = S_POINTER | S_DELEGATED | S_ITEM;

/** Weak signals: an element with only these may be a container of the real targets. */
export const WEAK = S_TABINDEX | S_ONATTR | S_LISTENER | S_HOVER | S_POINTER | S_DELEGATED | S_ITEM;

/** Most elements probed for delegated handlers in one pass (each probe is one event). */
export const MAX_PROBES = 3000;

// Inherited and own flags, bits of `DNode.flags`.
/** Under `aria-hidden="true"`. */
export const F_ARIA_HIDDEN = 2;
/** Under `inert`. */
export const F_INERT = 4;
/** Under `aria-disabled="true"`. */
export const F_ARIA_DISABLED = 8;
/** Inside a disabled fieldset (its first legend excepted). */
export const F_IN_DISABLED_FIELDSET = 16;

/** Elements whose content is not walked: controls and replaced content. */
export const LEAF_TAGS = new Set([
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
export const NEVER_SCROLLS = new Set([
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

/** Elements the `disabled` attribute (or a disabled fieldset) disables. */
export const FORM_TAGS = new Set([
  "button",
  "input",
  "select",
  "textarea",
  "option",
  "optgroup",
  "fieldset",
]);

/** Elements never walked: scripts, styles, templates and the like. */
export const SKIP_TAGS = new Set([
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

/** Handler attributes that make an element a candidate. */
export const ON_ATTRS = new Set([
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
export const ACTIONABLE_SELECTOR =
  "a[href],button,input:not([type=hidden]),select,textarea,summary,[role=button],[role=link]," +
  "[role=checkbox],[role=tab],[role=menuitem],[role=option],[tabindex],[onclick],[contenteditable]";

/** One element of the working tree. */
export interface DNode {
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
  /** Whether its only listener is for keys (a focusable box that moves focus among its parts). */
  keysOnly?: boolean;
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
  /** Shown only while the pointer is over its container (`_hover_reveal.ts`). */
  revealedOnHover?: boolean;
  /** Its own cursor is a move or grab cursor (its `S_POINTER`): something to drag. */
  grab?: boolean;
  /** The id of the nearest container with an id, filled in by `emit`. */
  container?: number;
  /** A sibling that stands in visibly for a hidden native input. */
  standIn?: Element;
  /** Whether the name was read from the element's content (that text is not shown again). */
  named?: boolean;
  /** A `title` that differs from the name, shown as a description. */
  description?: string;
  /** The placeholder text a library draws for this input beside it (its name when it has none). */
  drawnPlaceholder?: string;
}

/**
 * Whether the element's text is not painted: `visibility` other than
 * visible. (Candidates get the full `checkVisibility` test in `vet`, which
 * also sees `opacity: 0` on ancestors.)
 */
export function isHidden(node: DNode): boolean {
  node.hidden ??= node.style ? node.style.visibility !== "visible" : false;
  return node.hidden;
}

/** An iframe in the working tree: its content is the child frame distiller's. */
export interface DFrame {
  k: "f";
  el: Element;
  /** Why nobody can act in the frame, as far as the walk tells (the modal is vet's). */
  veto?: FrameVeto;
}

type DKid = DNode | string | WireMore | DFrame;

/** What a walk hands down from an element to its children. */
export interface Inherited {
  flags: number;
  pointer: boolean;
  /** A move or grab cursor is in effect (inherited, as `pointer`). */
  grab: boolean;
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

/** The state of one distiller pass over a document. */
export interface Pass {
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
  /** The open modal dialog, once vet has looked: nothing outside it takes input. */
  modal?: Element | null;
}

/**
 * Visible text under a node, without the text of nested nodes that get
 * their own line, nor of those `skip` says are not the node's.
 */
export function contentText(node: DNode, out: string[], skip?: (kid: DNode) => boolean): void {
  if (node.ownText) out.push(` ${node.ownText} `);
  for (const kid of node.kids) {
    if (typeof kid === "string") out.push(kid);
    else if (!("k" in kid) && consumed(kid) && !skip?.(kid)) {
      // Block boxes break words; inline boxes run on as the text reads.
      if (!kid.inline) out.push(" ");
      contentText(kid, out, skip);
      if (!kid.inline || kid.spaceAfter) out.push(" ");
    }
  }
}

/** Whether a child's text is read into its parent's name from content (and so not shown again). */
export function consumed(kid: DNode): boolean {
  return kid.keep === 0 &&
    (!STRUCTURE_ROLES.has(kid.role) || kid.role === "img" || kid.role === "heading");
}
