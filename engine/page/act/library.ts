/**
 * The actions' in-page library: every function of `ActFunctions`
 * (`engine/act/_in_page.ts`), typed against the DOM and bundled by
 * `deno task build` (`tools/build_page.ts`) into `ACT_SCRIPT`. The observer
 * installs it in its isolated world as each document starts
 * ({@linkcode installAct}); an action calls a function there by name through
 * the short stub (`stub.ts`), or, in a world without the library, sends the
 * whole bundle and runs the function from it ({@linkcode runHere}).
 *
 * @module
 */
import { ACT_GLOBAL, type ActFunctions, type ActName, ELEMENT_GONE } from "../../act/_in_page.ts";
import {
  actGlobals,
  checkPoint,
  clickRecord,
  facts,
  factsPoint,
  hovered,
  ownerCover,
  point,
  pressSeen,
} from "./_aim.ts";
import {
  caretToEnd,
  documentElement,
  dragMark,
  fieldState,
  fileInput,
  focus,
  focusedEditable,
  focusState,
  hasText,
  markFocus,
  pageLocale,
  pickerField,
  readWatch,
  scrollBy,
  scrollIntoView,
  selectContents,
  setValue,
  takesFiles,
  viewport,
  type Watch,
  watchField,
} from "./_fields.ts";
import { findOption, pickerFace, selectNative, shownChoice } from "./_pickers.ts";

/** Each function as the page calls it: `this` is the element (the watcher for `READ_WATCH`). */
type Library = {
  [K in ActName]: (
    this: K extends "READ_WATCH" ? Watch : Element,
    ...args: Parameters<ActFunctions<Element, Watch>[K]>
  ) => ReturnType<ActFunctions<Element, Watch>[K]>;
};

/** The library, by name. */
export const ACT_FUNCTIONS: Library = {
  FACTS: facts,
  POINT: point,
  FACTS_POINT: factsPoint,
  HOVERED: hovered,
  CHECK_POINT: checkPoint,
  PRESS_SEEN: pressSeen,
  CLICK_RECORD: clickRecord,
  PAGE_LOCALE: pageLocale,
  SCROLL_BY: scrollBy,
  DOCUMENT_ELEMENT: documentElement,
  FOCUS: focus,
  HAS_TEXT: hasText,
  CARET_TO_END: caretToEnd,
  SELECT_CONTENTS: selectContents,
  SELECT_NATIVE: selectNative,
  FIND_OPTION: findOption,
  PICKER_FACE: pickerFace,
  SCROLL_INTO_VIEW: scrollIntoView,
  FILE_INPUT: fileInput,
  VIEWPORT: viewport,
  OWNER_COVER: ownerCover,
  FIELD_STATE: fieldState,
  SET_VALUE: setValue,
  FOCUSED_EDITABLE: focusedEditable,
  MARK_FOCUS: markFocus,
  PICKER_FIELD: pickerField,
  WATCH_FIELD: watchField,
  READ_WATCH: readWatch,
  DRAG_MARK: dragMark,
  FOCUS_STATE: focusState,
  TAKES_FILES: takesFiles,
  SHOWN_CHOICE: shownChoice,
};

/** The observer's world, where the distiller finds an element by its id. */
interface DistillerGlobal {
  __webserv?: { element(id: number): Element | null };
}

/**
 * Calls one function of a library with `self` as `this`, or (with `local`)
 * with the element the observer's world knows by that id.
 *
 * @param lib the library
 * @param name the function
 * @param local the element's id in the observer's world, or `null` to use `self`
 * @param self `this` of the call
 * @param args the function's arguments
 * @returns its answer, or `ELEMENT_GONE` when the id's element left
 */
export function dispatch(
  lib: Library,
  name: ActName,
  local: number | null,
  self: unknown,
  args: unknown[],
): unknown {
  if (local !== null) {
    const el = (globalThis as DistillerGlobal).__webserv?.element(local) ?? null;
    if (!el) return ELEMENT_GONE;
    self = el;
  }
  const fn = lib[name] as (this: unknown, ...args: unknown[]) => unknown;
  return fn.apply(self, args);
}

/**
 * Runs a function of this bundle (in a world without the library).
 *
 * @param name the function
 * @param local the element's id in the observer's world, or `null` to use `this`
 * @param args the function's arguments
 * @returns its answer
 */
export function runHere(
  this: unknown,
  name: ActName,
  local: number | null,
  ...args: unknown[]
): unknown {
  return dispatch(ACT_FUNCTIONS, name, local, this, args);
}

/**
 * Installs the library on the world's global (once), and records the
 * document's last mouse move for `HOVERED`: did a move reach this frame?
 */
export function installAct(): void {
  const g = globalThis as unknown as Record<string, unknown>;
  if (g[ACT_GLOBAL]) return;
  Object.defineProperty(g, ACT_GLOBAL, { value: { ACT_FUNCTIONS, dispatch } });
  const moves = actGlobals();
  moves.__webservMove = null;
  addEventListener("mousemove", (e) => {
    moves.__webservMove = [e.clientX, e.clientY];
  }, true);
}
