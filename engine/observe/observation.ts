/**
 * What an observation is: the options, the page as text and element facts,
 * the diff since the last one, handles and set-of-marks screenshots.
 *
 * @module
 */
import type { CdpSession } from "../cdp/connection.ts";
import type { Box, TreeNode } from "./tree.ts";

/** What to observe. */
export interface ObserveOptions {
  /**
   * `"page"`: the whole page; `"viewport"`: only what lies in the viewport
   * plus `margin`, with counts of what lies outside; `"diff"`: the whole page
   * distilled, but the text lists only the elements added (`+`), changed
   * (`~`) or removed (`-`) since the previous observation of the page, and
   * the lines of text that are new (`+`).
   *
   * @default {"page"}
   */
  mode?: "page" | "viewport" | "diff";
  /**
   * CSS pixels around the viewport that count as inside, in `"viewport"` mode.
   *
   * @default {300}
   */
  margin?: number;
  /**
   * Summarise runs of similar siblings longer than this (`0` never does).
   *
   * @default {20}
   */
  summariseAfter?: number;
  /**
   * How many items of a summarised run are listed besides those in view.
   *
   * @default {5}
   */
  keepItems?: number;
  /**
   * Longest name or value kept, in characters.
   *
   * @default {100}
   */
  maxText?: number;
  /**
   * Whether to return the distilled tree in {@linkcode Observation.tree}
   * (the text and the element facts are always returned).
   *
   * @default {false}
   */
  tree?: boolean;
}

/** One element with an id, as structured facts. */
export interface ObservedElement {
  /** The id, unique in the context for the episode. */
  id: number;
  /** The ARIA role, or `"clickable"` for a generic element with signals. */
  role: string;
  /** The accessible name. */
  name: string;
  /** The value, if the element has one (passwords masked). */
  value?: string;
  /** States such as `checked`, `expanded`, `focused`. */
  states: string[];
  /** Interactivity cues such as `hover`, `listener`, `pointer`, `editable`. */
  cues: string[];
  /** The border box in CSS pixels, relative to the top-level viewport. */
  box: Box;
  /** The CDP frame id of the element's document. */
  frame: string;
  /**
   * Whether the box intersects the viewport and the visible part of every
   * scroll container around it (an item scrolled out of its list is not).
   */
  inViewport: boolean;
  /** Whether the id is new since the previous observation. */
  isNew: boolean;
  /** Where a link goes: path on the page's own origin, host and path elsewhere. */
  href?: string;
  /** A `title` that differs from the name (a tooltip), for roles named from their content. */
  description?: string;
  /**
   * The id of the nearest enclosing element with an id that holds others
   * (a scroll container, or a dialog, form, list or menu with an id), so a
   * program can scope a search or scroll the right box.
   */
  container?: number;
}

/** Scroll offsets and sizes of a document, in CSS pixels. */
export interface ScrollState {
  /** Horizontal scroll offset. */
  x: number;
  /** Vertical scroll offset. */
  y: number;
  /** Scrollable width of the document. */
  width: number;
  /** Scrollable height of the document. */
  height: number;
  /** Viewport width. */
  vw: number;
  /** Viewport height. */
  vh: number;
}

/** What changed since the previous observation of a page. */
export interface ObservationDiff {
  /** Ids listed now and not before. */
  added: number[];
  /** Ids listed before and not now. */
  removed: number[];
  /** Ids listed both times whose line changed. */
  changed: number[];
}

/** One observation of a page. */
export interface Observation {
  /** The compact text for the agent. */
  text: string;
  /**
   * The distilled tree, frames stitched in (iframes become `role: "iframe"`
   * elements), when asked for; boxes in it are relative to their own frame.
   */
  tree?: TreeNode[];
  /**
   * Messages an alert, a live region or a toast showed since the last
   * observation and no longer shows (a "Copied!" flash that ended before the
   * step settled); also a `flashed:` line under the header of `text`.
   */
  flashed?: string[];
  /** Every element with an id, in document order. */
  elements: ObservedElement[];
  /** Changes since the previous observation of the page. */
  diff: ObservationDiff;
  /** The top-level document's URL. */
  url: string;
  /** The top-level document's title. */
  title: string;
  /** The top-level document's scroll state. */
  scroll: ScrollState;
  /**
   * Milliseconds: the whole observation, the part spent distilling in pages,
   * and the top frame's distiller passes.
   */
  timing: { totalMs: number; pageMs: number; passes: Record<string, number> };
}

/** Where an element with an id lives, as CDP handles the actions engine can use. */
export interface ElementHandle {
  /** The id. */
  id: number;
  /** The session of the target (page or out-of-process iframe) holding the element. */
  session: CdpSession;
  /** The CDP frame id of the element's document. */
  frameId: string;
  /** The isolated world's execution context in that frame. */
  executionContextId: number;
  /** A remote object of the element in the isolated world, in the observer's object group. */
  objectId: string;
}

/** A set-of-marks screenshot. */
export interface SetOfMarks {
  /** The PNG file's bytes. */
  png: Uint8Array;
  /** The marks drawn: each element id and its box in CSS pixels of the viewport. */
  marks: { id: number; box: Box }[];
  /** Image width in device pixels. */
  width: number;
  /** Image height in device pixels. */
  height: number;
}
