/**
 * The actor's in-page functions, installed once per document in the
 * observer's isolated world, so an action calls them by name.
 *
 * Why: every hit test carries the shared helpers (7 KB), several times per
 * click. A command of that size was answered about 43 ms late; the cause
 * turned out to be Deno's WebSocket (Nagle's algorithm and the browser's
 * delayed ACK, see `engine/cdp/tcp_transport.ts`), not Chromium, but a short
 * stub is still less to send and parse. The observer adds
 * {@linkcode ACT_LIBRARY} to its isolated world as each document starts and
 * the actor sends a short stub; where the library is missing (a handle from
 * another world, a document the observer has not seen), the stub says so and
 * the actor sends the whole function instead.
 *
 * @module
 */
import {
  CARET_TO_END,
  CHECK_POINT,
  CLICK_RECORD,
  DOCUMENT_ELEMENT,
  FACTS,
  FACTS_POINT,
  FILE_INPUT,
  FIND_OPTION,
  FOCUS,
  HAS_TEXT,
  HOVERED,
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
  CLICK_RECORD,
  DOCUMENT_ELEMENT,
  FACTS,
  FACTS_POINT,
  FIELD_STATE,
  FILE_INPUT,
  FIND_OPTION,
  FOCUS,
  FOCUSED_EDITABLE,
  HAS_TEXT,
  HOVERED,
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
  // The last mouse move this document got, for HOVERED: did a move reach this frame?
  globalThis.__webservMove = null;
  addEventListener("mousemove", (e) => { globalThis.__webservMove = [e.clientX, e.clientY]; }, true);
})();`;

/** What a by-id call returns when the world no longer has the element. */
export const ELEMENT_GONE = "__webservAct:gone";

/**
 * A call's head: `this` is the element, or (by id) the observer's world
 * finds it from its frame's id (see `ElementLocation`).
 */
function head(byId: boolean): { params: string; find: string; self: string } {
  return byId
    ? {
      params: "local, ...args",
      find: `const el = globalThis.__webserv ? globalThis.__webserv.element(local) : null;
  if (!el) return ${JSON.stringify(ELEMENT_GONE)};`,
      self: "el",
    }
    : { params: "...args", find: "", self: "this" };
}

function stubs(byId: boolean): Map<string, string> {
  const { params, find, self } = head(byId);
  return new Map(
    Object.entries(FUNCTIONS).map(([name, source]) => [
      source,
      `function (${params}) { ${find} const lib = globalThis.${GLOBAL}; return lib ? lib.${name}.apply(${self}, args) : ${
        JSON.stringify(LIBRARY_MISSING)
      }; }`,
    ]),
  );
}

const STUBS = stubs(false);
const BY_ID_STUBS = stubs(true);

/**
 * The short stub that calls `source` from the library, or `undefined` when
 * `source` is not one of the library's functions.
 *
 * @param source a function declaration exported by `_in_page.ts` or `_typing.ts`
 * @param byId whether the call passes the element's id first instead of the element as `this`
 * @returns the stub's declaration
 */
export function libraryStub(source: string, byId = false): string | undefined {
  return (byId ? BY_ID_STUBS : STUBS).get(source);
}

/**
 * `source` itself, for a world without the library: as it is, or by id
 * (the element's id first, then `source`'s arguments).
 *
 * @param source a function declaration exported by `_in_page.ts` or `_typing.ts`
 * @param byId whether the call passes the element's id first instead of the element as `this`
 * @returns the declaration to send
 */
export function fullSource(source: string, byId = false): string {
  if (!byId) return source;
  const { params, find, self } = head(true);
  return `function (${params}) { ${find} return (${source}).apply(${self}, args); }`;
}
