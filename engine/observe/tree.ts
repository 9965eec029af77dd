/**
 * The shape of the distilled tree (`Observation.tree`) and of element boxes:
 * the one definition of the JSON the in-page distiller builds and the
 * observation hands out. `wire.ts` names the same types for page code, so a
 * field cannot exist on one side only.
 *
 * @module
 */

/** A box in CSS pixels, relative to the element's own frame's viewport: `[x, y, width, height]`. */
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
  box?: Box;
  /** Whether the box intersects the viewport and every clipping box around it, for elements with an id. */
  inView?: boolean;
  /** Whether the id was handed out by this observation. */
  isNew?: boolean;
  /** Whether the element is laid out inline in the text around it (a link in a sentence). */
  inline?: boolean;
  /** The CDP frame id of the element's document; filled in by the driver. */
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
export interface TreeFrame {
  /** Discriminant. */
  k: "f";
  /** Index into the frame-owner elements the driver passed with the request. */
  slot: number;
  /** The iframe's content box in the frame's viewport. */
  box: Box;
  /** The iframe's accessible name (title attribute and the like). */
  name?: string;
  /** Why nobody can act in the frame, when nobody can. */
  veto?: FrameVeto;
  /** Parts of the frame's viewport a box of this document lies over: nothing there takes the pointer. */
  covers?: Box[];
}
