/**
 * The actor's in-page functions, installed once per document in the
 * observer's isolated world, so an action calls them by name.
 *
 * Why: Chromium answers `Runtime.callFunctionOn` about 43 ms late whenever
 * the function's source is longer than about 850 characters (an idle wait in
 * the renderer, not CPU; measured on Chromium 14x, headless). Every hit test
 * carries the shared helpers (7 KB), so a click paid that three times. A
 * script the browser runs as each document starts has no such cost, so the
 * observer adds {@linkcode ACT_LIBRARY} to its isolated world and the actor
 * sends a short stub; where the library is missing (a handle from another
 * world, a document the observer has not seen), the stub says so and the
 * actor sends the whole function instead.
 *
 * @module
 */
import {
  CARET_TO_END,
  CHECK_POINT,
  DOCUMENT_ELEMENT,
  FACTS,
  FACTS_POINT,
  FILE_INPUT,
  FIND_OPTION,
  FOCUS,
  HAS_TEXT,
  OWNER_COVER,
  POINT,
  SCROLL_BY,
  SCROLL_INTO_VIEW,
  SELECT_NATIVE,
  VIEWPORT,
} from "./_in_page.ts";
import { FIELD_STATE, FOCUSED_EDITABLE, SET_VALUE, WATCH_FIELD } from "./_typing.ts";

/** The global the library lives on, in the isolated world only. */
const GLOBAL = "__webservAct";

/** What a stub returns when the library is not installed in its world. */
export const LIBRARY_MISSING = "__webservAct:missing";

/** Functions worth installing: the ones whose source is long. */
const FUNCTIONS: Record<string, string> = {
  CARET_TO_END,
  CHECK_POINT,
  DOCUMENT_ELEMENT,
  FACTS,
  FACTS_POINT,
  FIELD_STATE,
  FILE_INPUT,
  FIND_OPTION,
  FOCUS,
  FOCUSED_EDITABLE,
  HAS_TEXT,
  OWNER_COVER,
  POINT,
  SCROLL_BY,
  SCROLL_INTO_VIEW,
  SELECT_NATIVE,
  SET_VALUE,
  VIEWPORT,
  WATCH_FIELD,
};

/** The script that installs every function on the isolated world's global. */
export const ACT_LIBRARY: string = `(() => {
  if (globalThis.${GLOBAL}) return;
  Object.defineProperty(globalThis, ${JSON.stringify(GLOBAL)}, { value: {
${Object.entries(FUNCTIONS).map(([name, source]) => `    ${name}: ${source},`).join("\n")}
  } });
})();`;

const STUBS = new Map<string, string>(
  Object.entries(FUNCTIONS).map(([name, source]) => [
    source,
    `function (...args) { const lib = globalThis.${GLOBAL}; return lib ? lib.${name}.apply(this, args) : ${
      JSON.stringify(LIBRARY_MISSING)
    }; }`,
  ]),
);

/** What a by-id stub returns when the world no longer has the element. */
export const ELEMENT_GONE = "__webservAct:gone";

/** Finds the element by its frame's id in the observer's world (see `ElementLocation`). */
const FIND = `const el = globalThis.__webserv ? globalThis.__webserv.element(local) : null;
  if (!el) return ${JSON.stringify(ELEMENT_GONE)};`;

const BY_ID_STUBS = new Map<string, string>(
  Object.entries(FUNCTIONS).map(([name, source]) => [
    source,
    `function (local, ...args) { ${FIND} const lib = globalThis.${GLOBAL}; return lib ? lib.${name}.apply(el, args) : ${
      JSON.stringify(LIBRARY_MISSING)
    }; }`,
  ]),
);

/**
 * A function that finds the element by id in its world, then runs `source`
 * on it: the library's function by name where `source` is one, else the
 * whole source (the slow path; see the module doc).
 *
 * @param source a function declaration exported by `_in_page.ts` or `_typing.ts`
 * @param library whether to call the library by name
 * @returns the declaration, to call with the element's id first, then `source`'s arguments
 */
export function byIdCall(source: string, library: boolean): string {
  const stub = library ? BY_ID_STUBS.get(source) : undefined;
  return stub ?? `function (local, ...args) { ${FIND} return (${source}).apply(el, args); }`;
}

/**
 * The short stub that calls `source` from the library, or `undefined` when
 * `source` is not one of the library's functions.
 *
 * @param source a function declaration exported by `_in_page.ts` or `_typing.ts`
 * @returns the stub's declaration
 */
export function libraryStub(source: string): string | undefined {
  return STUBS.get(source);
}
