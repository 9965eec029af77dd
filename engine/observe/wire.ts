/**
 * The plain JSON that crosses between the in-page distiller and the driver.
 * Defined once here; page code and driver code both import these types.
 *
 * @module
 */

/** A box in CSS pixels, relative to the frame's viewport: `[x, y, width, height]`. */
export type WireBox = [number, number, number, number];

/** What the driver asks one frame's distiller for. */
export interface DistillRequest {
  /** The next id to hand out; ids are never reused, so the driver owns the counter. */
  nextId: number;
  /** `"page"` walks everything; `"viewport"` skips subtrees wholly outside the viewport plus margin. */
  mode: "page" | "viewport";
  /** Extra CSS pixels around the viewport that still count as inside, for `"viewport"`. */
  margin: number;
  /** Summarise runs of similar siblings longer than this; `0` never summarises. */
  summariseAfter: number;
  /** How many items of a summarised run are kept besides those in the viewport. */
  keepItems: number;
  /** Longest name or value kept, in characters. */
  maxText: number;
  /** Whether to return the tree as well as the lines and elements. */
  tree: boolean;
  /**
   * Child frames in this frame's process to distil in the same call, each
   * through its iframe element (`owners[slot]`): one round trip instead of
   * one per frame. A child not reachable that way is `null` in
   * {@linkcode DistillResult.folded}, for the driver to distil on its own.
   */
  folds?: FoldRequest[];
  /**
   * The frame's id, remembered by its distiller so that a sibling frame's
   * call can find it (see `siblings`).
   */
  frameId?: string;
  /**
   * Sibling frames of the same origin, each the root of a target of its
   * own but served by this frame's renderer, to distil in the same call:
   * each is found among `parent.frames` by the `frameId` it was last asked
   * with. One the call cannot find is `null` in
   * {@linkcode DistillResult.siblings}, for the driver to distil on its own.
   */
  siblings?: SiblingRequest[];
}

/** A sibling frame distilled in another frame's call: which frame, and what to ask it. */
export interface SiblingRequest {
  /** The sibling's frame id, as its distiller was last told it. */
  frameId: string;
  /** The sibling's own request. */
  req: DistillRequest;
}

/** A child frame distilled in its parent's call: which owner, and what to ask it. */
export interface FoldRequest {
  /** The index of the child's iframe element among the call's owners. */
  slot: number;
  /** The child's own request. */
  req: DistillRequest;
}

/**
 * The facts of one element with an id, as one frame's distiller reports
 * them: a tuple, because thousands cross per observation. States and cues
 * are space-separated; `flags` has bit 1 for "in the viewport" and bit 2 for
 * "new in this observation"; `href` is a link's compact target or `""`;
 * `container` is the id of the nearest container with an id, or `0`;
 * `description` is a `title` that differs from the name, or `""`.
 */
export type WireFacts = [
  id: number,
  role: string,
  name: string,
  value: string | null,
  states: string,
  cues: string,
  x: number,
  y: number,
  width: number,
  height: number,
  flags: number,
  href: string,
  container: number,
  description: string,
];

/** A node of the distilled tree. */
export type WireNode = WireElement | WireText | WireMore | WireFrame;

/** An element worth a line: actionable, or structure that helps reading. */
export interface WireElement {
  /** Discriminant. */
  k: "e";
  /** The element id, when the agent can act on it. */
  id?: number;
  /** ARIA role, or `"clickable"` for a generic element with interactivity signals. */
  role: string;
  /** The accessible name, whitespace folded. */
  name?: string;
  /** The current value (passwords masked). */
  value?: string;
  /** A select's options, `group/label` inside an optgroup. */
  options?: string[];
  /** States such as `checked`, `expanded`, `disabled`, `focused`. */
  states?: string[];
  /** Interactivity cues such as `hover`, `pointer`, `listener`, `editable`. */
  cues?: string[];
  /** Where a link goes: path on the page's own origin, host and path elsewhere. */
  href?: string;
  /**
   * Whether the name already says where the link goes (`"Copper Sky"` →
   * `#/film/Copper-Sky`): the text leaves the target out, the JSON keeps it.
   */
  quietHref?: boolean;
  /** A `title` that differs from the name (a tooltip), for roles named from content. */
  description?: string;
  /**
   * The id of the nearest enclosing element with an id that holds others
   * (a scroll container, or a dialog, form, list, listbox or menu with an id).
   */
  container?: number;
  /** The border box, for elements with an id. */
  box?: WireBox;
  /** Whether the box intersects the viewport and every clipping box around it, for elements with an id. */
  inView?: boolean;
  /** Whether the id was handed out by this observation. */
  isNew?: boolean;
  /** Whether the element is laid out inline in the text around it (a link in a sentence). */
  inline?: boolean;
  /** The CDP frame id of the element's document; filled in by the driver. */
  frame?: string;
  /** Child nodes. */
  c?: WireNode[];
}

/** Visible text. */
export interface WireText {
  /** Discriminant. */
  k: "t";
  /** The text, whitespace folded. */
  t: string;
}

/** Content left out: a summarised run or what lies outside the viewport. */
export interface WireMore {
  /** Discriminant. */
  k: "m";
  /** How many items (rows, elements) were left out. */
  n: number;
  /** How many of them look actionable. */
  a: number;
  /** What was left out: a run of similar siblings, or content above or below the viewport. */
  why: "similar" | "above" | "below" | "outside";
  /** A short label of the left-out items, such as `"tr"` or `"li.product"`. */
  what?: string;
  /** For a summarised run: whether the left-out items lie above or below those listed. */
  where?: "above" | "below";
  /** For a summarised run inside a scroll container: the container's id, to scroll it. */
  scroll?: number;
  /** For a summarised run: the text of the left-out items, one entry each, so no words are lost. */
  texts?: string[];
}

/**
 * Why nobody can act in a frame: its iframe is `inert`, under `aria-hidden`,
 * takes no pointer (`pointer-events: none`), or lies outside an open modal
 * dialog. Its content then shows without ids.
 */
export type FrameVeto = "inert" | "aria-hidden" | "no-pointer" | "modal";

/** An iframe: its content comes from the child frame's own distiller. */
export interface WireFrame {
  /** Discriminant. */
  k: "f";
  /** Index into the frame-owner elements the driver passed with the request. */
  slot: number;
  /** The iframe's content box in the frame's viewport. */
  box: WireBox;
  /** The iframe's accessible name (title attribute and the like). */
  name?: string;
  /** Why nobody can act in the frame, when nobody can. */
  veto?: FrameVeto;
  /** Parts of the frame's viewport a box of this document lies over: nothing there takes the pointer. */
  covers?: WireBox[];
}

/** What one frame's distiller answers. */
export interface DistillResult {
  /** The document title. */
  title: string;
  /** The document URL. */
  url: string;
  /** Scroll offsets and sizes of the frame's document. */
  scroll: { x: number; y: number; width: number; height: number; vw: number; vh: number };
  /** The observation text of this frame; child frames are placeholder lines (see `FRAME_MARK`). */
  lines: string[];
  /** Every element with an id, in document order. */
  elements: WireFacts[];
  /** The content box of each child frame, by slot. */
  frames: { slot: number; box: WireBox; name?: string; veto?: FrameVeto; covers?: WireBox[] }[];
  /** The distilled tree, when the request asked for it. */
  nodes?: WireNode[];
  /** The next free id after this observation. */
  nextId: number;
  /** Milliseconds spent in the page. */
  ms: number;
  /** Milliseconds per pass, by pass name. */
  passes: Record<string, number>;
  /** The results of the folded child frames, in the order of the request's `folds`. */
  folded?: (DistillResult | null)[];
  /** The results of the sibling frames, in the order of the request's `siblings`. */
  siblings?: (DistillResult | null)[];
}
