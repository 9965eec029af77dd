/**
 * Observation: the page as compact text and JSON, with stable element ids.
 *
 * @module
 */
export { Observer } from "./observer.ts";
export type {
  ElementHandle,
  Observation,
  ObservationDiff,
  ObservedElement,
  ObserveOptions,
  ScrollState,
  SetOfMarks,
} from "./observation.ts";
export type {
  Box,
  FrameVeto,
  TreeElement,
  TreeFrame,
  TreeMore,
  TreeNode,
  TreeText,
} from "./tree.ts";
export { findElement, findElements } from "./find_element.ts";
export type { ElementQuery } from "./find_element.ts";
export { parseElements } from "./parse_observation.ts";
export type { TextElement } from "./parse_observation.ts";
