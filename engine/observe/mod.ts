/**
 * Observation: the page as compact text and JSON, with stable element ids.
 *
 * @module
 */
export * from "./observer.ts";
export * from "./format_observation.ts";
export type {
  DistillRequest,
  DistillResult,
  WireBox,
  WireElement,
  WireFrame,
  WireMore,
  WireNode,
  WireText,
} from "./wire.ts";
