/**
 * The one rule for which visible element stands in for a hidden checkbox or
 * radio (a sibling) or range input (its thumb). The observer (`_vet.ts`) gives the input its id with the stand-in's
 * box, and the actions (`act/_dom.ts`) aim at the same stand-in: both import
 * this module, so the agent is never shown an id that the actions aim at
 * differently.
 *
 * @module
 */
import type { Layout, Rect } from "./layout.ts";

/** What the rule measures: the layout's box and paint test. */
export type StandInProbe = Pick<Layout, "rect" | "visible">;

/** Elements that are controls of their own: a sibling holding one stands in for nothing. */
const CONTROLS = "input,select,textarea,button,a[href]";

/**
 * The visible sibling that stands in for a hidden checkbox or radio: the
 * next (else previous) element sibling when it is a label for no other
 * control, or a `span`, `i` or `div` (a box drawn by CSS), holds no control
 * of its own, and is painted at least 2 px square.
 *
 * @param probe how to measure and test paint
 * @param input the hidden checkbox or radio
 * @returns the stand-in, or `null`
 */
export function siblingStandIn(probe: StandInProbe, input: Element): Element | null {
  for (const sibling of [input.nextElementSibling, input.previousElementSibling]) {
    if (!sibling) continue;
    const tag = sibling.localName;
    if (tag === "label") {
      const control = (sibling as HTMLLabelElement).control;
      if (control && control !== input) continue;
      if (sibling.hasAttribute("for") && !control) continue;
    } else if (tag !== "span" && tag !== "i" && tag !== "div") continue;
    if (sibling.querySelector(CONTROLS)) continue;
    const r = probe.rect(sibling);
    if (r.w >= 2 && r.h >= 2 && probe.visible(sibling)) return sibling;
  }
  return null;
}

/**
 * The thumb that stands in for a range input the page hides inside it: a
 * slider drawn by a library that keeps the real input for the keys and
 * assistive tech (React Aria's, in a visually hidden box inside the thumb;
 * MUI's, clipped to nothing in it). The nearest box around the input that
 * is at least 2 px square, when the input is hidden (clipped, or in a box
 * of less than 2 px) and that box is painted, at most 64 px a side (a
 * thumb, not the track) and holds no other control.
 *
 * @param probe how to measure and test paint
 * @param input the element, any
 * @param away whether the input itself is styled away (clipped, 1 px)
 * @returns the thumb, or `null`
 */
export function thumbStandIn(probe: StandInProbe, input: Element, away: boolean): Element | null {
  if (input.localName !== "input" || (input as HTMLInputElement).type !== "range") return null;
  let hidden = away;
  let up = input.parentElement;
  for (let hop = 0; up && hop < 4; hop++, up = up.parentElement) {
    const r = probe.rect(up);
    if (r.w < 2 || r.h < 2) {
      hidden = true;
      continue;
    }
    if (!hidden || r.w > 64 || r.h > 64) return null;
    if (up.querySelectorAll(CONTROLS).length > 1) return null;
    return probe.visible(up) ? up : null;
  }
  return null;
}

/**
 * Whether an element is painted, as the observer's layout tests it:
 * rendered, not `visibility: hidden`, not inside `opacity: 0`.
 *
 * @param el the element
 * @returns whether it is painted
 */
export function painted(el: Element): boolean {
  return el.checkVisibility({ opacityProperty: true, visibilityProperty: true });
}

/** The live DOM's probe, for code that has no {@linkcode Layout} (the actions). */
export const DOM_PROBE: StandInProbe = {
  rect(el: Element): Rect {
    const r = el.getBoundingClientRect();
    return { x: r.x, y: r.y, w: r.width, h: r.height };
  },
  visible: painted,
};
