/**
 * The `scroll` action: an element scrolled into view, a container scrolled
 * by itself (or its nearest scrolling ancestor), or a mouse wheel turned over
 * the element or the viewport's centre.
 *
 * @module
 */
import type { Page } from "../browser/page.ts";
import type { Action } from "./action.ts";
import type { ElementCalls } from "./_calls.ts";
import type { Pointer } from "./_pointer.ts";

/** What `scroll` acts with. */
export interface ScrollTools {
  /** Finds the element and scrolls it in the page. */
  calls: ElementCalls;
  /** Finds where over the element to turn the wheel. */
  pointer: Pointer;
  /** The timeout of every browser command. */
  timeoutMs: number;
}

/**
 * Scrolls as the action says.
 *
 * @param tools what to act with
 * @param page the active tab
 * @param action the validated action
 * @returns where a container scrolled to, or that it was at its end
 */
export async function scroll(
  tools: ScrollTools,
  page: Page,
  action: Extract<Action, { action: "scroll" }>,
): Promise<string | undefined> {
  const { calls, pointer } = tools;
  if (action.id !== undefined && action.direction === undefined) {
    const ref = await calls.element(action.id);
    await calls.ready(ref, action.id, { allowDisabled: true });
    await calls.call(ref, "SCROLL_INTO_VIEW");
    return;
  }
  const direction = action.direction ?? "down";
  const vertical = direction === "up" || direction === "down";
  const sign = direction === "up" || direction === "left" ? -1 : 1;
  let point: { page: Page; x: number; y: number };
  let viewport: { width: number; height: number };
  if (action.id !== undefined) {
    const ref = await calls.element(action.id);
    await calls.ready(ref, action.id, { allowDisabled: true });
    // A container scrolls itself (or its nearest scrolling ancestor): a
    // wheel at its centre would scroll whatever nested box lies there.
    const done = await calls.call(ref, "SCROLL_BY", vertical, sign, action.amount ?? 0);
    if (done.kind === "scrolled") return `${done.container} scrolled to ${done.x},${done.y}`;
    if (done.kind === "at-end") return `${done.container} is already at its ${direction} end`;
    viewport = await calls.call(ref, "VIEWPORT");
    point = await pointer.point(ref, action.id);
  } else {
    // The layout viewport without scrollbars, as the browser measures it: no page script runs.
    const { cssLayoutViewport } = await page.session.send("Page.getLayoutMetrics", undefined, {
      timeoutMs: tools.timeoutMs,
    });
    viewport = { width: cssLayoutViewport.clientWidth, height: cssLayoutViewport.clientHeight };
    point = { page, x: viewport.width / 2, y: viewport.height / 2 };
  }
  const amount = action.amount ?? Math.round((vertical ? viewport.height : viewport.width) * 0.8);
  await point.page.session.send("Input.dispatchMouseEvent", {
    type: "mouseWheel",
    x: point.x,
    y: point.y,
    deltaX: vertical ? 0 : sign * amount,
    deltaY: vertical ? sign * amount : 0,
  }, { timeoutMs: tools.timeoutMs });
}
