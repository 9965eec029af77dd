/**
 * The element marks recorded beside a trajectory screenshot: the id and
 * border box of every element the step's own observation saw in the
 * viewport, with the viewport's size, so the viewer draws set-of-marks over
 * the raw screenshot (and can hide them) instead of the marks being burnt
 * into the picture.
 *
 * @module
 */
import type { Observation, ObservedElement } from "../../mod.ts";

/** The marks of one screenshot, as a trajectory's `step` line keeps them. */
export interface ScreenshotMarks {
  /** The viewport's width and height in CSS pixels: the space the boxes are in. */
  viewport: [width: number, height: number];
  /** Each element id in view and its border box `[x, y, width, height]` from the viewport's top left. */
  elements: { id: number; box: ObservedElement["box"] }[];
}

/**
 * The marks of an observation: its elements in view (the same ones the
 * engine's set-of-marks screenshot draws), boxes rounded to 0.1 px.
 *
 * @param observation an observation of the page the screenshot shows
 * @returns the marks
 */
export function marksOf(observation: Pick<Observation, "elements" | "scroll">): ScreenshotMarks {
  const round = (n: number) => Math.round(n * 10) / 10;
  return {
    viewport: [observation.scroll.vw, observation.scroll.vh],
    elements: observation.elements.filter((element) => element.inViewport).map((element) => ({
      id: element.id,
      box: [
        round(element.box[0]),
        round(element.box[1]),
        round(element.box[2]),
        round(element.box[3]),
      ],
    })),
  };
}
