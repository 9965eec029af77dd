/**
 * The pointer: where to press on an element, and the mouse events that
 * press there.
 *
 * The element's frame finds a hit-tested point on it (`POINT` in
 * `_in_page.ts`); the pointer maps that point to the page through
 * same-process frames (by the document's CDP box) and out-of-process frames
 * (by each owner's box), and tests again after the pointer moves there and
 * before the press, so a hover effect that moved, hid or covered the target
 * is caught.
 *
 * @module
 */
import { bestEffort } from "../log.ts";
import type { Page } from "../browser/page.ts";
import type { CdpSession } from "../cdp/connection.ts";
import type { Modifier } from "./action.ts";
import { ActionError } from "./errors.ts";
import type { ClickRecord, PointResult } from "./_in_page.ts";
import { modifierMask } from "./_keys.ts";
import { type ElementCalls, readyFacts, type ReadyOptions, type Ref } from "./_calls.ts";
import { ConnectionClosedError, ProtocolError } from "../cdp/errors.ts";

/**
 * How a press was verified, each by a receipt the engine read from the
 * target's document: `whole` when the press, the release and the click (for
 * the left button) all reached the target; `handled` when the press reached
 * it and the page took it there, with no click to follow (a listener
 * prevented the press's default, or the page changed the DOM while handling
 * the press: a menu opening on `mousedown`, a field replaced on focus; or
 * the release reached it too and the page changed the DOM while handling
 * it: a picker choosing on `mouseup` and removing its list);
 * `gone` when the press reached the target (read between the press and the
 * release) or the document went away during the press itself, and the
 * target's document then went away before the release could be read (a
 * navigation). A target removed by the click is read as any other: its
 * document's record outlives it.
 */
export type PressOutcome = "whole" | "handled" | "gone";

/** What a press showed before its release: whether it reached the target, or that its document went away. */
type Seen = boolean | "unloaded";

/**
 * Whether an in-page call failed because the element's document or tab went
 * away (a navigation); a dead browser is ours to report, not this.
 */
function goneWithDocument(error: unknown): boolean {
  if (error instanceof ActionError && error.code === "stale-id") return true;
  return error instanceof ProtocolError && !(error instanceof ConnectionClosedError);
}

/** A point aimed at on an element: in the page, and in the element's own frame. */
export interface Aim {
  /** The tab whose viewport the point is in. */
  page: Page;
  /** Where to press, in the page's coordinates. */
  x: number;
  /** Where to press, in the page's coordinates. */
  y: number;
  /** The element aimed at. */
  ref: Ref;
  /** Its id, for errors. */
  id: number;
  /** The same point in the element's own frame, for the hit test before the press. */
  local: { x: number; y: number };
}

/** Aims at elements and presses them with mouse events. */
export class Pointer {
  #calls: ElementCalls;
  #timeoutMs: number;
  #pageOf: (session: CdpSession) => Page;
  #settle: (capMs: number) => Promise<unknown>;

  /**
   * Creates the pointer of one actor.
   *
   * @param calls runs the in-page hit tests
   * @param timeoutMs the timeout of every browser command
   * @param pageOf the tab whose top frame is `session` (the active tab when none is)
   * @param settle waits (at most `capMs`) until the active tab is quiet: before a press is tried again
   */
  constructor(
    calls: ElementCalls,
    timeoutMs: number,
    pageOf: (session: CdpSession) => Page,
    settle: (capMs: number) => Promise<unknown> = () => Promise.resolve(),
  ) {
    this.#calls = calls;
    this.#timeoutMs = timeoutMs;
    this.#pageOf = pageOf;
    this.#settle = settle;
  }

  /** {@linkcode ElementCalls.ready} and {@linkcode Pointer.point} in one round trip. */
  async aim(ref: Ref, id: number, options: ReadyOptions = {}): Promise<Aim> {
    const answer = await this.#calls.call(ref, "FACTS_POINT", options.allowDisabled ?? false);
    readyFacts(answer.facts, id, options);
    if (!answer.point) throw new Error("In-page call failed: a ready element gave no point");
    return await this.#pointFrom(ref, id, answer.point);
  }

  /** A hit-tested point on the element, in the page's coordinates. */
  async point(ref: Ref, id: number): Promise<Aim> {
    return await this.#pointFrom(ref, id, await this.#calls.call(ref, "POINT"));
  }

  /**
   * Where to press on the page, from the point the element's frame found.
   * An element shown only while the pointer is over its container (a list
   * row's actions) is revealed first: the pointer moves over the container,
   * the page settles, and the element is aimed at again, once.
   */
  async #pointFrom(ref: Ref, id: number, found: PointResult, revealed = false): Promise<Aim> {
    if (!found.ok && found.reason === "hover-first") {
      if (revealed) {
        throw new ActionError(
          "not-visible",
          `Element ${id} stayed hidden with the pointer over the container that reveals it`,
          { id },
        );
      }
      const over = await this.#pointFrom(ref, id, { ok: true, ...found.hover }, true);
      await over.page.session.send(
        "Input.dispatchMouseEvent",
        { type: "mouseMoved", x: over.x, y: over.y },
        { timeoutMs: this.#timeoutMs },
      );
      await this.#settle(2_000);
      return await this.#pointFrom(ref, id, await this.#calls.call(ref, "POINT"), true);
    }
    if (!found.ok) {
      if (found.reason === "covered") {
        const cover = found.cover ?? "another element";
        throw new ActionError("covered", `Element ${id} is covered by ${cover}`, {
          id,
          ...(found.cover ? { cover: found.cover } : {}),
        });
      }
      throw new ActionError("not-visible", `Element ${id} has no visible area in the viewport`, {
        id,
      });
    }
    const local = { x: found.x, y: found.y };
    let x = found.x;
    let y = found.y;
    // The frame's offset in its local root: the document element's CDP box
    // (local-root coordinates) minus its box in the frame's own viewport. The
    // page's top frame has none: three round trips saved on most actions.
    const topFrame = found.top && ref.session.parentSessionId === undefined;
    const documentElement = topFrame
      ? undefined
      : await this.#calls.callForElement(ref, "DOCUMENT_ELEMENT");
    if (documentElement) {
      try {
        const { quads } = await ref.session.send("DOM.getContentQuads", {
          objectId: documentElement.objectId,
        }, { timeoutMs: this.#timeoutMs });
        const quad = quads[0];
        if (quad && quad.length >= 2) {
          x += quad[0]! - found.docX;
          y += quad[1]! - found.docY;
        }
      } finally {
        bestEffort(
          "releasing a handle",
          ref.session.send("Runtime.releaseObject", { objectId: documentElement.objectId }),
        );
      }
    }
    // Out-of-process frames: add each owner iframe's content box in its parent.
    let session: CdpSession = ref.session;
    while (session.parentSessionId !== undefined) {
      const parent = session.connection.session(session.parentSessionId);
      const frameId = session.targetInfo?.targetId;
      if (!parent || frameId === undefined) break;
      const { backendNodeId } = await parent.send("DOM.getFrameOwner", { frameId }, {
        timeoutMs: this.#timeoutMs,
      });
      const owner = await parent.send("DOM.resolveNode", { backendNodeId }, {
        timeoutMs: this.#timeoutMs,
      });
      if (owner.object.objectId) {
        const ownerRef = { session: parent, objectId: owner.object.objectId };
        try {
          const cover = await this.#calls.call(ownerRef, "OWNER_COVER", x, y);
          if (cover !== null) {
            throw new ActionError("covered", `Element ${id} is covered by ${cover}`, { id, cover });
          }
        } finally {
          bestEffort(
            "releasing a handle",
            parent.send("Runtime.releaseObject", { objectId: owner.object.objectId }),
          );
        }
      }
      const { model } = await parent.send("DOM.getBoxModel", { backendNodeId }, {
        timeoutMs: this.#timeoutMs,
      });
      x += model.content[0] ?? 0;
      y += model.content[1] ?? 0;
      session = parent;
    }
    const page = this.#pageOf(session);
    return { page, x, y, ref, id, local };
  }

  /**
   * After the pointer moved to `aim`: the hit test must still land on the
   * target, or the press would land on whatever a hover effect put there.
   * When the target moved, aim again (a few times); when it is gone or
   * covered now, a typed error.
   */
  async #reaim(aim: Aim, mask: number): Promise<Aim & { reached: boolean }> {
    for (let tries = 0;; tries++) {
      // Where it lands, the check arms the record of the press (see `CLICK_RECORD`).
      const check = await this.#calls.call(aim.ref, "CHECK_POINT", aim.local.x, aim.local.y, true);
      if (check.ok) return { ...aim, reached: check.reached };
      if (check.gone) {
        throw new ActionError(
          "stale-id",
          `Element ${aim.id} is gone from the page: it went away when the pointer moved onto it`,
          { id: aim.id },
        );
      }
      if (tries >= 2) {
        throw new ActionError(
          "target-moved",
          `Element ${aim.id} kept moving when the pointer moved onto it: nothing was pressed`,
          { id: aim.id },
        );
      }
      aim = await this.#pointAgain(aim);
      await aim.page.session.send(
        "Input.dispatchMouseEvent",
        { type: "mouseMoved", x: aim.x, y: aim.y, modifiers: mask },
        { timeoutMs: this.#timeoutMs },
      );
    }
  }

  /**
   * Aims again at a target that a hover or press effect changed. One that
   * shows no area now (an icon swapped for an image still loading, a label
   * drawn again) is waited for, 2 s at most, as a person waits for it.
   */
  async #pointAgain(aim: Aim): Promise<Aim> {
    const deadline = performance.now() + 2_000;
    for (;;) {
      try {
        return await this.point(aim.ref, aim.id);
      } catch (error) {
        const hidden = error instanceof ActionError && error.code === "not-visible";
        if (!hidden || performance.now() > deadline) throw error;
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  /**
   * On a page with out-of-process frames: waits until the mouse move reached
   * the target's frame at the point (the browser's hit-test data catches up
   * with a scroll within a frame or two; longer on a loaded machine), moving
   * again every 20 ms. After a second, a press would land in another frame:
   * a typed error, nothing pressed. Where the frame cannot tell (no act
   * library there), the press goes after the wait all the same.
   */
  async #routed(aim: Aim, mask: number): Promise<void> {
    const deadline = performance.now() + 1_000;
    for (;;) {
      const reached = await this.#calls.call(aim.ref, "HOVERED", aim.local.x, aim.local.y);
      if (reached === "yes") return;
      if (performance.now() > deadline) {
        if (reached === "unknown") return;
        throw new ActionError(
          "target-moved",
          `Element ${aim.id}'s frame did not get the pointer within 1 s: the browser still routes input at that point to another frame, so nothing was pressed`,
          { id: aim.id },
        );
      }
      await new Promise((resolve) => setTimeout(resolve, 20));
      await aim.page.session.send(
        "Input.dispatchMouseEvent",
        { type: "mouseMoved", x: aim.x, y: aim.y, modifiers: mask },
        { timeoutMs: this.#timeoutMs },
      );
    }
  }

  /**
   * Moves the pointer to `point`; then, unless hovering, presses there (twice
   * for a double click) once the hit test still lands on the target, and
   * verifies that the page received the press on the target (see
   * {@linkcode PressOutcome}). A press the target did not receive whole (the
   * release or the click landed elsewhere: a hover or `:active` effect
   * shrank or swapped it between press and release) is aimed and pressed
   * again once; then it is a typed error.
   *
   * @returns how the press was verified; `undefined` for a hover
   * @throws {ActionError} `target-moved` when the target did not receive a whole press twice
   */
  async mouse(
    point: Aim,
    kind: "click" | "dblclick" | "hover",
    button: "left" | "right" | "middle",
    modifiers: Modifier[],
  ): Promise<PressOutcome | undefined> {
    const options = { timeoutMs: this.#timeoutMs };
    const mask = modifierMask(modifiers);
    await point.page.session.send(
      "Input.dispatchMouseEvent",
      { type: "mouseMoved", x: point.x, y: point.y, modifiers: mask },
      options,
    );
    if (kind === "hover") {
      if (point.page.frameSessions.length > 0) await this.#routed(point, mask);
      return undefined;
    }
    for (let attempt = 1;; attempt++) {
      const aim = await this.#reaim(point, mask);
      if (!aim.reached && aim.page.frameSessions.length > 0) await this.#routed(aim, mask);
      const seen = await this.#press(aim, kind, button, mask);
      const got = await this.#received(aim.ref);
      if (got === "gone") {
        // Its receipt: the press reached the target before the document went.
        if (seen !== false) return "gone";
        throw new ActionError(
          "target-moved",
          `Element ${point.id} did not receive the press, and its page went away after it (the press landed on something else that navigated)`,
          { id: point.id },
        );
      }
      // Right and middle buttons fire no click where the page shows a menu.
      if (got.down && got.up && (got.click || button !== "left")) return "whole";
      if (got.down && got.handled) return "handled";
      // Taken on the release (select2 chooses on mouseup and removes the option): no click
      // follows, and pressing again would find the option gone. The page's change is the receipt.
      if (got.down && got.up && got.released) return "handled";
      const what = `the press ${got.down ? "reached" : "missed"} it, the release ${
        got.up ? "reached" : "missed"
      } it and the click ${got.click ? "reached" : "missed"} it`;
      if (attempt >= 2) {
        throw new ActionError(
          "target-moved",
          `Element ${point.id} did not receive a whole click, twice: ${what} (a hover or press effect moves, shrinks or swaps it)`,
          { id: point.id },
        );
      }
      // Let what the press started finish (an icon swapped in is loading),
      // aim again where the target is now, and move there, as a person would.
      await this.#settle(2_000);
      point = await this.#pointAgain(aim);
      await point.page.session.send(
        "Input.dispatchMouseEvent",
        { type: "mouseMoved", x: point.x, y: point.y, modifiers: mask },
        options,
      );
    }
  }

  /**
   * Presses and releases the button at `aim` (twice for a double click);
   * between the first press and its release, reads whether the press
   * reached the target.
   *
   * @returns whether the first press reached the target, or `unloaded` when
   *   its document went away during the press
   */
  async #press(
    aim: Aim,
    kind: "click" | "dblclick",
    button: "left" | "right" | "middle",
    mask: number,
  ): Promise<Seen> {
    let seen: Seen = false;
    const options = { timeoutMs: this.#timeoutMs };
    const { page, x, y } = aim;
    const session = page.session;
    const buttons = button === "left" ? 1 : button === "right" ? 2 : 4;
    for (let clickCount = 1; clickCount <= (kind === "dblclick" ? 2 : 1); clickCount++) {
      const base = { x, y, button, clickCount, modifiers: mask };
      const release = () =>
        session.send(
          "Input.dispatchMouseEvent",
          { type: "mouseReleased", buttons: 0, ...base },
          options,
        );
      try {
        await session.send(
          "Input.dispatchMouseEvent",
          { type: "mousePressed", buttons, ...base },
          options,
        );
        if (clickCount === 1) seen = await this.#pressSeen(aim.ref);
      } catch (error) {
        // Never leave the button held down: the next action would drag.
        bestEffort("releasing the mouse button", release());
        throw error;
      }
      await release();
    }
    return seen;
  }

  /** Whether the armed press reached the target so far; `unloaded` when its document went away. */
  async #pressSeen(ref: Ref): Promise<Seen> {
    try {
      return await this.#calls.callInWorld(ref, "PRESS_SEEN") === true;
    } catch (error) {
      if (goneWithDocument(error)) return "unloaded";
      throw error;
    }
  }

  /**
   * What the target's document recorded of the press (read in its world,
   * so a target the click removed still answers); `gone` when the document
   * went away with it (a navigation).
   */
  async #received(ref: Ref): Promise<ClickRecord | "gone"> {
    try {
      const record = await this.#calls.callInWorld(ref, "CLICK_RECORD");
      // No record: the document the press was armed in was replaced.
      return record ?? "gone";
    } catch (error) {
      if (goneWithDocument(error)) return "gone";
      throw error;
    }
  }
}
