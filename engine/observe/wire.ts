/**
 * The plain JSON that crosses between the in-page distiller and the driver.
 * Page code and driver code both import these types. The tree's nodes are
 * the public ones of `tree.ts` under their wire names: one definition, so the
 * tree an observation hands out cannot lose a field the distiller sends.
 *
 * @module
 */
import type {
  Box,
  FrameVeto,
  TreeElement,
  TreeFrame,
  TreeMore,
  TreeNode,
  TreeText,
} from "./tree.ts";

/** A box in CSS pixels, relative to the frame's viewport: `[x, y, width, height]`. */
export type WireBox = Box;

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
  /**
   * The same observation asked once more, right after the call before it
   * (the driver handed over closed shadow roots in between): ids go on from
   * that call's `nextId`, and its new ids, its `*new` rule and its flashes
   * count as this call's, so the repeat neither hands an id out twice nor
   * loses what the first call saw.
   */
  again?: boolean;
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

/** A node of the distilled tree (see {@linkcode TreeNode}). */
export type WireNode = TreeNode;
/** An element of the distilled tree (see {@linkcode TreeElement}). */
export type WireElement = TreeElement;
/** Visible text (see {@linkcode TreeText}). */
export type WireText = TreeText;
/** Content left out (see {@linkcode TreeMore}). */
export type WireMore = TreeMore;
/** An iframe not yet stitched in (see {@linkcode TreeFrame}). */
export type WireFrame = TreeFrame;
export type { FrameVeto };

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
  /**
   * Messages an announcer (an alert, a live region, a toast) showed since
   * the last observation and no longer shows: they came and went.
   */
  flashed?: string[];
  /**
   * How many custom elements the walk met without a visible shadow root
   * (`SUSPECTS_CALL` hands them over): the driver looks for closed roots in
   * them and distills again.
   */
  suspects?: number;
  /** Milliseconds spent in the page. */
  ms: number;
  /** Milliseconds per pass, by pass name. */
  passes: Record<string, number>;
  /** The results of the folded child frames, in the order of the request's `folds`. */
  folded?: (DistillResult | null)[];
  /** The results of the sibling frames, in the order of the request's `siblings`. */
  siblings?: (DistillResult | null)[];
}
