/**
 * The public shape of the distilled tree (`Observation.tree`) and of element
 * boxes. The distiller's wire types carry the same JSON; they stay internal,
 * and the check at the end keeps the two in step.
 *
 * @module
 */
import type { WireBox, WireElement, WireFrame, WireMore, WireNode, WireText } from "./wire.ts";

/** A box in CSS pixels: `[x, y, width, height]`. */
export type Box = [x: number, y: number, width: number, height: number];

/** A node of the distilled tree: an element, text, left-out content or a frame. */
export type TreeNode = TreeElement | TreeText | TreeMore | TreeFrame;

/** An element worth a line: actionable, or structure that helps reading. */
export interface TreeElement {
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
  /** The border box, for elements with an id, relative to the element's own frame. */
  box?: Box;
  /** Whether the box intersects the viewport, for elements with an id. */
  inView?: boolean;
  /** Whether the id was handed out by this observation. */
  isNew?: boolean;
  /** The CDP frame id of the element's document. */
  frame?: string;
  /** Child nodes. */
  c?: TreeNode[];
}

/** Visible text. */
export interface TreeText {
  /** Discriminant. */
  k: "t";
  /** The text, whitespace folded. */
  t: string;
}

/** Content left out: a summarised run or what lies outside the viewport. */
export interface TreeMore {
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
}

/** An iframe whose content was not stitched in. */
export interface TreeFrame {
  /** Discriminant. */
  k: "f";
  /** Index of the frame among its parent's iframes. */
  slot: number;
  /** The iframe's content box in its parent frame's viewport. */
  box: Box;
  /** The iframe's accessible name (title attribute and the like). */
  name?: string;
}

// Compile-time check: the public types and the wire types are the same JSON.
// A field added to one and not the other fails `deno check` here.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const _inStep: [
  Same<Box, WireBox>,
  Same<TreeElement, WireElement>,
  Same<TreeText, WireText>,
  Same<TreeMore, WireMore>,
  Same<TreeFrame, WireFrame>,
  Same<TreeNode, WireNode>,
] = [true, true, true, true, true, true];
