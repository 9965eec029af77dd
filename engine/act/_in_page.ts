/**
 * The shapes of the actions' in-page functions: their names, arguments and
 * answers. The functions themselves are typed page modules
 * (`engine/page/act/`), bundled by `deno task build` with the distiller and
 * installed by the observer in its isolated world (see `_calls.ts` for how a
 * call reaches them); the library there is declared against
 * {@linkcode ActFunctions}, so the page side and the engine side cannot
 * disagree on a shape.
 *
 * Every function runs on an element (`this`), uses only DOM APIs, and
 * returns plain JSON or an element; expected outcomes are values, not
 * exceptions.
 *
 * @module
 */
import type { FieldState, FieldWatch } from "./_typing.ts";

/** What an element is, for choosing how to act on it. */
export interface ElementFacts {
  /** `stale` when detached, `hidden` without a visible box (or label), `disabled`, or `ok`. */
  state: "stale" | "hidden" | "disabled" | "ok";
  /** The element's local name. */
  tag: string;
  /** The `type` attribute, lowercased. */
  type: string;
  /** The `role` attribute. */
  role: string;
  /** Whether it takes text (typed, or set as a range's or a date's value) and is not read-only. */
  editable: boolean;
  /** Whether it is read-only. */
  readonly: boolean;
  /** Checked state of a checkbox, radio, switch or a label of one; `null` otherwise. */
  checked: boolean | null;
  /** Whether the checked state is shown (a native input's, or `aria-checked`), so it can be read back. */
  checkedShown: boolean;
  /** The described element. */
  name: string;
}

/** Where to press, after scrolling the element into view. */
export type PointResult =
  | {
    ok: true;
    /** The point, in the element's frame viewport. */
    x: number;
    y: number;
    /** The document element's box, to map frame coordinates to the page's. */
    docX: number;
    docY: number;
    /**
     * Whether the frame is the page's top frame, not pinch-zoomed or panned:
     * its viewport coordinates are the page's, with no offset to look up.
     */
    top: boolean;
  }
  | { ok: false; reason: "not-visible" | "covered"; cover?: string }
  | {
    ok: false;
    /**
     * The page shows the element only while the pointer is over its
     * container (a list row's actions): move the pointer to `hover`, a
     * point on that container, then aim again.
     */
    reason: "hover-first";
    hover: { x: number; y: number; docX: number; docY: number; top: boolean };
  };

/** The facts of an element and, when it can take the pointer, where to press. */
export interface FactsPoint {
  /** See {@linkcode ElementFacts}. */
  facts: ElementFacts;
  /** See {@linkcode PointResult}; absent when the element is stale, hidden or disabled. */
  point?: PointResult;
}

/**
 * Whether a point aimed at still lands on the target, and whether the mouse
 * move reached its frame there; see {@linkcode ActFunctions.CHECK_POINT}.
 */
export type CheckResult = { ok: true; reached: boolean } | { ok: false; gone: boolean };

/**
 * What the page received of one press of the pointer on a target (armed by
 * {@linkcode ActFunctions.CHECK_POINT}): whether the press (`pointerdown` or
 * `mousedown`), the release (`pointerup` or `mouseup`) and the `click`
 * (`auxclick` for other buttons) reached the target, a descendant, its
 * stand-in or a label of it; and the receipts that the page took the press
 * itself.
 */
export interface ClickRecord {
  /** The press reached the target. */
  down: boolean;
  /** The release reached the target. */
  up: boolean;
  /** The click reached the target. */
  click: boolean;
  /** The page took the press itself: {@linkcode ClickRecord.prevented} or {@linkcode ClickRecord.changed}. */
  handled: boolean;
  /** A listener of the page prevented the press's default (`pointerdown` or `mousedown`). */
  prevented: boolean;
  /** The page changed the DOM while it handled the press (its press listeners, the focus it moved). */
  changed: boolean;
  /**
   * The page changed the DOM while it handled the release, which reached the
   * target: it took the press there (a picker choosing on `mouseup`).
   */
  released: boolean;
}

/** What scrolling a container did; see {@linkcode ActFunctions.SCROLL_BY}. */
export type ScrollByResult =
  | { kind: "scrolled"; container: string; x: number; y: number }
  | { kind: "at-end"; container: string }
  | { kind: "none" };

/** Outcome of choosing an option. */
export type SelectResult =
  | { kind: "done"; chosen: string }
  | { kind: "not-found"; options: string[] }
  | { kind: "not-select" };

/** A viewport's size. */
export interface ViewportSize {
  /** Width in CSS pixels, without scrollbars. */
  width: number;
  /** Height in CSS pixels, without scrollbars. */
  height: number;
}

/**
 * Every in-page function of the actions, by name: `E` is what an element
 * is on each side (a DOM `Element` in the page, an opaque handle here), `W`
 * a field watcher. The page library (`engine/page/act/library.ts`) satisfies
 * this interface with `E = Element`.
 */
export interface ActFunctions<E, W = unknown> {
  /** Facts about the element; see {@linkcode ElementFacts}. */
  FACTS(): ElementFacts;
  /**
   * Scrolls the element into view, within every scrolling ancestor and the
   * viewport, when it is not fully shown inside its clipping boxes; then
   * hit-tests points across the part of its box those boxes show (shadow roots
   * pierced) until one lands on it, a descendant, or its label, and also lands
   * on each same-origin frame owner up the chain (each scrolled so the point
   * shows in its document; content of a parent page over the iframe counts as
   * a cover). A hidden input is aimed at through its visible label; a checkbox
   * or radio styled away (1 px, clipped) or covered, through its label or the
   * visible sibling standing in for it (the observer's rule).
   */
  POINT(): PointResult;
  /** `FACTS`, then `POINT` when the element can take the pointer: a mouse action's two questions in one round trip. */
  FACTS_POINT(allowDisabled: boolean): FactsPoint;
  /**
   * Called with the point aimed at after the pointer moved there: `"yes"`
   * when the move reached it, `"no"` when the act library saw no move there,
   * `"unknown"` without the library and nothing `:hover` there.
   */
  HOVERED(x: number, y: number): "yes" | "no" | "unknown";
  /**
   * Called with a point (in the element's frame viewport) after the pointer
   * moved there: whether the hit test still lands on the element, a
   * descendant or its label, and whether the move reached the frame. With
   * `arm`, when it lands, the press that follows is recorded (see
   * `CLICK_RECORD`). Hover effects (a menu opening, an icon swapping,
   * content pushed down) can move the target between aiming and pressing.
   */
  CHECK_POINT(x: number, y: number, arm: boolean): CheckResult;
  /**
   * Called between the press and the release: whether the armed press
   * reached the target so far, `null` when nothing was armed. Keeps recording.
   */
  PRESS_SEEN(): boolean | null;
  /**
   * Called after the release: what the armed press recorded, `null` when
   * nothing was armed. Needs no element: it reads the world's record.
   */
  CLICK_RECORD(): ClickRecord | null;
  /** The page's locale: the document's `lang`, else the browser's language. */
  PAGE_LOCALE(): string;
  /**
   * Scrolls the element, or its nearest ancestor that scrolls on that axis, by
   * `amount` pixels (0: 80% of the container's visible size) in the direction
   * `sign` (1 down or right, -1 up or left). Returns `none` when nothing but the
   * page scrolls on that axis.
   */
  SCROLL_BY(vertical: boolean, sign: number, amount: number): ScrollByResult;
  /** The document element of the element's document (for its CDP box). */
  DOCUMENT_ELEMENT(): E;
  /** Focuses the element (or the focusable it labels); returns whether it has focus. */
  FOCUS(): boolean;
  /**
   * Whether the editable holds text a person sees as typed: zero-width
   * padding, parts that are not editable and a lone `<br>` do not count.
   */
  HAS_TEXT(): boolean;
  /**
   * Selects a contenteditable's own contents with a DOM selection; false
   * (nothing done) for inputs and textareas.
   */
  SELECT_CONTENTS(): boolean;
  /** Puts the caret at the end of an editable. */
  CARET_TO_END(): void;
  /**
   * Chooses an option of a native `<select>` by label or value, as the browser
   * does when a person picks one: it sets the selection and fires `input` and
   * `change`. Headless Chromium cannot open a native select's popup, so real
   * input cannot do this.
   */
  SELECT_NATIVE(wanted: string, by: "label" | "value"): SelectResult;
  /**
   * Finds an ARIA option by label or value: inside the element when it is a
   * listbox, else in the listbox it controls or owns, else any visible option
   * of the document. Returns the option element, or the labels seen.
   */
  FIND_OPTION(wanted: string, by: "label" | "value"): E | string[];
  /**
   * The face of the custom picker the element stands for, when its own role
   * does not say it is one: the label of a combobox field, a chosen item
   * inside a picker's box, or the box itself. The face is the field when it
   * shows, else the nearest box around it that does (Tom Select hides its
   * combobox input once an item is chosen and shows the item in a plain
   * box). `null` for anything else.
   */
  PICKER_FACE(): E | null;
  /** Scrolls the element into view, centred; `false` when it is detached. */
  SCROLL_INTO_VIEW(): boolean;
  /**
   * The element as a file input: itself, the control of a label, or the
   * one file input inside it (a drop zone holding its hidden input).
   */
  FILE_INPUT(): E | null;
  /** The viewport size of the element's document. */
  VIEWPORT(): ViewportSize;
  /**
   * Called on an out-of-process iframe's owner element with a point in that
   * frame's viewport: scrolls the owner (and each same-origin owner above it)
   * until the point shows in its document, and tells whether it receives the
   * point there. Returns the cover's description, or null.
   */
  OWNER_COVER(x: number, y: number): string | null;
  /** Reads the field's state; see {@linkcode FieldState}. */
  FIELD_STATE(): FieldState;
  /**
   * Sets an input's or textarea's value through the native setter of its
   * prototype (so an instance-level setter, such as React's value tracker,
   * does not swallow it), then fires `input` and `change` as a user's edit.
   */
  SET_VALUE(value: string): boolean;
  /**
   * The editable element that has focus in the element's document (shadow
   * roots pierced), or `null`: where typed keys go when the target was
   * replaced as it took focus.
   */
  FOCUSED_EDITABLE(): E | null;
  /** Notes where the focus is before `select` clicks the picker (the element). */
  MARK_FOCUS(): boolean;
  /**
   * The focused editable element when it is the picker's: the picker, a
   * field inside it, or one the focus moved to since `MARK_FOCUS`; `null`
   * for a field that kept the focus through the click (another control's).
   */
  PICKER_FIELD(): E | null;
  /**
   * Starts watching a field while it is typed into: text added in elements
   * near it (the field's ancestors up to three levels, stopping at a form or
   * the body) and `change` events it fires. Returns the watcher (kept as a
   * handle, so the page never sees it); `READ_WATCH` reads and stops it.
   */
  WATCH_FIELD(): W;
  /** Called on a watcher from `WATCH_FIELD` (`this`): stops it and returns what it saw. */
  READ_WATCH(): FieldWatch;
  /**
   * What a drag of the element can change, as one string to compare before
   * and after it: the element's place, the values of sliders and fields,
   * the page's text in reading order.
   */
  DRAG_MARK(): string;
  /**
   * Where the focus is for typing into the element: `outside` it, inside it
   * with a collapsed caret `at-end` of its contents, or `inside` elsewhere.
   */
  FOCUS_STATE(): "outside" | "at-end" | "inside";
  /**
   * Whether the element says it takes files (text, label, title, class or
   * id: a drop zone, an "Attach" button): where `upload` may click it for a
   * file chooser or drop files on it.
   */
  TAKES_FILES(): boolean;
  /**
   * What a picker shows as chosen, to read back a `select` on a custom
   * control: whether its text, the values of the fields inside it, the
   * selected options of a native select inside it or that it controls, or
   * an option marked `aria-selected` among those it controls say `wanted`
   * (folded, case-insensitive), and a mark of all of that to compare
   * before and after the choice.
   */
  SHOWN_CHOICE(wanted: string): ShownChoice;
}

/** What {@linkcode ActFunctions.SHOWN_CHOICE} reads. */
export interface ShownChoice {
  /** Whether the control shows the wanted option as chosen. */
  shows: boolean;
  /** Whether one of the things it shows is exactly the wanted option (its value, its text). */
  exact: boolean;
  /** What the control shows, to compare before and after. */
  mark: string;
}

/** The name of one in-page function. */
export type ActName = keyof ActFunctions<unknown>;

/** An element or other object the page handed back, seen from the engine: a remote object. */
export type PageObject = { readonly __pageObject: unique symbol };

/** The arguments of an in-page function. */
export type ActArgs<K extends ActName> = Parameters<ActFunctions<PageObject>[K]>;

/** The answer of an in-page function. */
export type ActResult<K extends ActName> = ReturnType<ActFunctions<PageObject>[K]>;

/** What a call returns when the library is not installed in the world it runs in. */
export const LIBRARY_MISSING = "__webservAct:missing";

/** What a by-id call returns when the world no longer has the element. */
export const ELEMENT_GONE = "__webservAct:gone";

/** The global the library lives on, in the observer's isolated world only. */
export const ACT_GLOBAL = "__webservAct";
