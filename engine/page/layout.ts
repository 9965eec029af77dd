/**
 * The layout-dependent parts of the distiller, injected so that the same
 * passes run in Chromium and, with a stand-in, under linkedom.
 *
 * @module
 */

/** The computed style properties the distiller reads, one lookup per element. */
export interface StyleFacts {
  /** `display`; `"none"` prunes the subtree. */
  display: string;
  /** `visibility`; anything but `"visible"` hides the element (not its children). */
  visibility: string;
  /** `opacity` as written by the browser, such as `"1"` or `"0"`. */
  opacity: string;
  /** `cursor`, inherited. */
  cursor: string;
  /** `pointer-events`, inherited. */
  pointerEvents: string;
  /** `position`, for viewport culling of fixed and sticky content. */
  position: string;
  /** `clip` (the legacy property of visually hidden inputs), `"auto"` when unset. */
  clip: string;
  /** `clip-path`, `"none"` when unset. */
  clipPath: string;
  /** `font-size`; `"0px"` hides text from sight, not from screen readers. */
  fontSize: string;
  /** `overflow` (the shorthand), for scroll containers. */
  overflow: string;
  /** `overflow-x`, for scroll containers. */
  overflowX: string;
  /** `overflow-y`, for scroll containers. */
  overflowY: string;
}

/** A box in CSS pixels relative to the frame's viewport. */
export interface Rect {
  /** Left edge. */
  x: number;
  /** Top edge. */
  y: number;
  /** Width. */
  w: number;
  /** Height. */
  h: number;
}

/** The frame's viewport and document scroll state. */
export interface ViewportFacts {
  /** Horizontal scroll offset. */
  x: number;
  /** Vertical scroll offset. */
  y: number;
  /** Viewport width. */
  w: number;
  /** Viewport height. */
  h: number;
  /** Scrollable width of the document. */
  sw: number;
  /** Scrollable height of the document. */
  sh: number;
}

/** Bits of {@linkcode Layout.listened}. */
export const LISTEN_CLICK = 1;
/** Bits of {@linkcode Layout.listened}: a hover listener (mouseenter, mouseover). */
export const LISTEN_HOVER = 2;
/** Bits of {@linkcode Layout.listened}: a key listener (keydown, keyup, keypress). */
export const LISTEN_KEY = 4;

/** What the distiller needs from a laid-out document. */
export interface Layout {
  /** Computed style facts of an element. */
  style(el: Element): StyleFacts;
  /** The element's border box. */
  rect(el: Element): Rect;
  /**
   * Whether the element is painted: rendered, not `visibility: hidden` and
   * not inside `opacity: 0` (the browser's `checkVisibility()` with both options).
   */
  visible(el: Element): boolean;
  /** The topmost element at a point, retargeted into `root`'s tree. */
  hit(root: Document | ShadowRoot, x: number, y: number): Element | null;
  /** Viewport and scroll state. */
  viewport(): ViewportFacts;
  /** Script-registered listeners on the element: {@linkcode LISTEN_CLICK}, {@linkcode LISTEN_HOVER} and {@linkcode LISTEN_KEY} bits. */
  listened(el: Element): number;
  /**
   * Whether the element has a delegated click-like handler of its own
   * (React props, Svelte 5 expandos, a jQuery selector that matches it):
   * asked of elements inside a listened ancestor only.
   */
  delegated(el: Element): boolean;
  /** The focused element, through open shadow roots. */
  focused(): Element | null;
  /** Milliseconds since some fixed point, for timing. */
  now(): number;
}

/**
 * Whether an element is hidden from sight but not from screen readers: the
 * `sr-only` pattern, clipped to nothing, or a box of 1 px or less that is
 * positioned or clips its overflow.
 *
 * @param style its computed `clip`, `clip-path`, `position` and `overflow`
 * @param width its box's width in CSS pixels
 * @param height its box's height in CSS pixels
 * @returns true when a person sees none of it
 */
export function clippedAway(
  style: Pick<StyleFacts, "clip" | "clipPath" | "position" | "overflow">,
  width: number,
  height: number,
): boolean {
  if (style.clip && style.clip !== "auto" && /rect\(\s*0/.test(style.clip)) return true;
  if (style.clipPath && /inset\(\s*50%|circle\(\s*0/.test(style.clipPath)) return true;
  // A box of 1 px or less that is positioned out of the flow, or that clips
  // what overflows it (Ant Design's listbox for screen readers: 0 × 0, overflow hidden).
  const clips = style.overflow !== undefined && style.overflow !== "" &&
    style.overflow !== "visible";
  if (style.position !== "absolute" && style.position !== "fixed" && !clips) return false;
  return width <= 1 && height <= 1;
}

/**
 * {@linkcode clippedAway} for an element of a live document, read from its
 * computed style and box.
 *
 * @param el the element
 * @returns true when a person sees none of it
 */
export function srOnly(el: Element): boolean {
  const view = el.ownerDocument.defaultView;
  if (!view) return false;
  const r = el.getBoundingClientRect();
  return clippedAway(view.getComputedStyle(el), r.width, r.height);
}
