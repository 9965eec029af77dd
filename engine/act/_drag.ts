/**
 * The `drag` action: press on an element, move the pointer in steps onto
 * another element (or by an offset), release; verified by what the page
 * shows afterwards.
 *
 * Pages drag in two ways and one gesture serves both. Pointer-driven
 * widgets (a slider's handle, dnd-kit, SortableJS's fallback) follow the
 * `pointermove`/`mousemove` events of the held button. HTML5 drag and drop
 * (SortableJS by default, kanban boards, drop zones) starts a drag session
 * when the held pointer moves: with `Input.setInterceptDrags` the browser
 * hands that session's data to us (`Input.dragIntercepted`) instead of
 * running an OS drag loop, and the drag goes on as `dragenter`/`dragover`/
 * `drop` events sent by `Input.dispatchDragEvent` at the same points. See
 * https://chromedevtools.github.io/devtools-protocol/tot/Input/.
 *
 * @module
 */
import { bestEffort } from "../log.ts";
import type { Action } from "./action.ts";
import { ActionError } from "./errors.ts";
import type { ElementCalls } from "./_calls.ts";
import type { Aim, Pointer } from "./_pointer.ts";
import type { EventParams } from "../cdp/protocol.ts";

/** What `drag` acts with. */
export interface DragTools {
  /** Finds the elements and reads the page before and after. */
  calls: ElementCalls;
  /** Aims at the source and the target. */
  pointer: Pointer;
  /** Lets the active tab settle for at most `capMs` (a drop handler running). */
  settle(capMs: number): Promise<boolean>;
  /** The timeout of every browser command. */
  timeoutMs: number;
}

/** Pointer moves between the press and the release: enough for libraries that track direction. */
const STEPS = 12;

/** How far the first move goes: past every library's drag threshold (SortableJS, dnd-kit: 5 px or less). */
const START_PX = 8;

/**
 * The pause between moves, one frame: libraries act on a move and ignore the
 * next ones for a moment (SortableJS stays silent for 30 ms after it moves
 * an item), as a person's drag never outruns them.
 */
const STEP_MS = 16;

/**
 * While held over the drop point, the browser repeats `dragover` about every
 * 50 ms; a drag held still twice lets a library that was silent catch up.
 */
const HOLD_REPEATS = 2, HOLD_MS = 50;

function pause(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * How long a press is held before moving when a quick drag changed nothing:
 * past the activation delays libraries set for touch-friendly drags (dnd-kit's
 * examples use 250 ms, SortableJS's `delay` the same order).
 */
const HELD_PRESS_MS = 500;

/** How long the first move may take to start an HTML5 drag. */
const START_WAIT_MS = 150;

/** How long a drop handler may take before the page is read back. */
const BRIEF_SETTLE_MS = 2_000;

type DragData = EventParams<"Input.dragIntercepted">["data"];

/**
 * Drags element `action.id` onto element `action.to`, or by `dx`/`dy` pixels.
 *
 * @param tools what to act with
 * @param action the validated action
 * @returns what the drag did, as the page shows it
 * @throws {ActionError} what aiming at either element throws, or
 *   `value-not-set` when the page shows nothing changed after the drag
 */
export async function drag(
  tools: DragTools,
  action: Extract<Action, { action: "drag" }>,
): Promise<string> {
  const { calls, pointer } = tools;
  const ref = await calls.element(action.id);
  let from = await pointer.aim(ref, action.id);
  let to: { x: number; y: number };
  if (action.to !== undefined) {
    const target = await calls.element(action.to);
    await calls.ready(target, action.to, { allowDisabled: true });
    to = await pointer.point(target, action.to);
    // Bringing the target into view may have scrolled the source: aim at it again.
    from = await pointer.point(ref, action.id);
    to = await pointer.point(target, action.to);
  } else {
    to = { x: from.x + (action.dx ?? 0), y: from.y + (action.dy ?? 0) };
  }
  const before = await calls.call(ref, "DRAG_MARK");
  let html5 = await gesture(tools, from, to, 0), held = false;
  await tools.settle(BRIEF_SETTLE_MS);
  if (!html5 && await calls.call(ref, "DRAG_MARK").then((now) => now === before, () => false)) {
    // Nothing moved: a pointer-driven library may start a drag only once the press was held
    // still (dnd-kit's delay constraint, SortableJS's `delay`), and a quick move cancelled it.
    // The page is as it was, so the gesture is made again, held first as a person would.
    html5 = await gesture(tools, from, to, HELD_PRESS_MS);
    held = true;
    await tools.settle(BRIEF_SETTLE_MS);
  }
  return await verified(
    tools,
    from,
    before,
    html5
      ? "dropped (HTML5 drag and drop)"
      : held
      ? `dragged after holding the press ${HELD_PRESS_MS} ms`
      : "dragged",
  );
}

/**
 * One press, move and release from `from` to `to`, the press held still for
 * `holdMs` first.
 *
 * @returns whether the browser ran it as an HTML5 drag and drop
 */
async function gesture(
  tools: DragTools,
  from: Aim,
  to: { x: number; y: number },
  holdMs: number,
): Promise<boolean> {
  const session = from.page.session;
  const options = { timeoutMs: tools.timeoutMs };
  let data: DragData | undefined;
  const intercepted = (event: EventParams<"Input.dragIntercepted">) => {
    data = event.data;
  };
  session.on("Input.dragIntercepted", intercepted);
  await session.send("Input.setInterceptDrags", { enabled: true }, options);
  let pressed = false;
  try {
    await session.send(
      "Input.dispatchMouseEvent",
      { type: "mouseMoved", x: from.x, y: from.y },
      options,
    );
    await session.send(
      "Input.dispatchMouseEvent",
      { type: "mousePressed", x: from.x, y: from.y, button: "left", buttons: 1, clickCount: 1 },
      options,
    );
    pressed = true;
    if (holdMs > 0) await pause(holdMs);
    const [first, ...rest] = path(from, to);
    if (first) {
      await session.send(
        "Input.dispatchMouseEvent",
        { type: "mouseMoved", ...first, button: "left", buttons: 1 },
        options,
      );
      // An HTML5 drag starts on this move, in a task of the page's: wait for its data (a
      // pointer-driven widget never sends any) so that every later step is a drag event.
      const deadline = performance.now() + START_WAIT_MS;
      while (!data && performance.now() < deadline) await pause(10);
      if (data) {
        await session.send(
          "Input.dispatchDragEvent",
          { type: "dragEnter", ...first, data },
          options,
        );
      }
    }
    for (const point of rest) {
      await pause(STEP_MS);
      if (data) {
        await session.send("Input.dispatchDragEvent", {
          type: "dragOver",
          x: point.x,
          y: point.y,
          data,
        }, options);
        continue;
      }
      await session.send(
        "Input.dispatchMouseEvent",
        { type: "mouseMoved", x: point.x, y: point.y, button: "left", buttons: 1 },
        options,
      );
      // The move started an HTML5 drag: the session goes on as drag events from here.
      if (data) {
        await session.send("Input.dispatchDragEvent", {
          type: "dragEnter",
          x: point.x,
          y: point.y,
          data,
        }, options);
      }
    }
    for (let i = 0; i < HOLD_REPEATS; i++) {
      await pause(HOLD_MS);
      await (data
        ? session.send("Input.dispatchDragEvent", { type: "dragOver", ...to, data }, options)
        : session.send(
          "Input.dispatchMouseEvent",
          { type: "mouseMoved", ...to, button: "left", buttons: 1 },
          options,
        ));
    }
    if (data) {
      await session.send("Input.dispatchDragEvent", { type: "drop", ...to, data }, options);
    }
    await session.send(
      "Input.dispatchMouseEvent",
      { type: "mouseReleased", x: to.x, y: to.y, button: "left", buttons: 0, clickCount: 1 },
      options,
    );
    pressed = false;
  } finally {
    session.off("Input.dragIntercepted", intercepted);
    if (pressed) {
      // Never leave the button held down: the next action would drag on.
      bestEffort(
        "releasing the mouse button",
        session.send("Input.dispatchMouseEvent", {
          type: "mouseReleased",
          x: to.x,
          y: to.y,
          button: "left",
          buttons: 0,
          clickCount: 1,
        }),
      );
    }
    bestEffort(
      "ending drag interception",
      session.send("Input.setInterceptDrags", { enabled: false }),
    );
  }
  return data !== undefined;
}

/** The points of the move: a first step past the drag threshold, then even steps to the end. */
function path(from: { x: number; y: number }, to: { x: number; y: number }) {
  const dx = to.x - from.x, dy = to.y - from.y;
  const length = Math.hypot(dx, dy);
  const points: { x: number; y: number }[] = [];
  if (length > START_PX) {
    points.push({ x: from.x + dx / length * START_PX, y: from.y + dy / length * START_PX });
  }
  for (let i = 1; i <= STEPS; i++) {
    points.push({ x: from.x + dx * i / STEPS, y: from.y + dy * i / STEPS });
  }
  return points;
}

/** What the page shows after the drag, compared with before it; an error when nothing changed. */
async function verified(
  tools: DragTools,
  from: Aim,
  before: string,
  how: string,
): Promise<string> {
  let after: string;
  try {
    after = await tools.calls.call(from.ref, "DRAG_MARK");
  } catch (error) {
    // Re-rendered away by the drop, or the page moved on: the page changed.
    if (error instanceof ActionError && error.code === "stale-id") {
      return `${how}; the element was replaced`;
    }
    throw error;
  }
  if (after === before) {
    throw new ActionError(
      "value-not-set",
      `Element ${from.id} was ${how}, but the page shows no change: it did not move and no text changed`,
      { id: from.id },
    );
  }
  return how;
}
