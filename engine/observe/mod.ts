/**
 * Observation: the page as compact text and JSON, with stable element ids.
 *
 * @module
 */
export * from "./observer.ts";
export * from "./format_observation.ts";
export * from "./set_of_marks.ts";
export type {
  DistillRequest,
  DistillResult,
  WireBox,
  WireElement,
  WireFacts,
  WireFrame,
  WireMore,
  WireNode,
  WireText,
} from "./wire.ts";
export * from "./find_element.ts";
