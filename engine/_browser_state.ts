/**
 * An episode's browser state as a fork carries it: the active tab's URL and
 * scroll position, the context's cookies, the local and session storage of
 * the tab's origin, and the form fields a person typed into but did not
 * submit. Captured from a live episode, moved from the parent's site origin
 * to the fork's (each env has its own origin), and put back into a fresh
 * context before the fork's first observation.
 *
 * Not carried: other tabs, the tab's back/forward history, an open dialog,
 * scroll positions of inner scroll boxes and the contents of
 * contenteditable regions.
 *
 * @module
 */
import type { CdpCommandMap } from "./cdp/protocol.ts";
import type { Browser } from "./browser/browser.ts";
import type { BrowserContext } from "./browser/browser_context.ts";
import type { Page } from "./browser/page.ts";
import { browserInternals } from "./browser/browser.ts";

/** A cookie as `Storage.getCookies` reports it. */
type Cookie = CdpCommandMap["Storage.getCookies"]["returnType"]["cookies"][number];

/** A cookie as `Storage.setCookies` takes it. */
type CookieParam = CdpCommandMap["Storage.setCookies"]["paramsType"][0]["cookies"][number];

/** A form field whose value differs from the one its page loaded with. */
export interface TypedField {
  /** Where it is: `#id`, or child indexes from the root element (`0/1/3`). */
  path: string;
  /** A text field's value. */
  value?: string;
  /** A checkbox's or radio button's state. */
  checked?: boolean;
  /** The indexes of a select's selected options. */
  selected?: number[];
}

/** What the page itself reports: storage, scroll and typed fields. */
export interface PageState {
  /** The document's URL. */
  url: string;
  /** `localStorage` of the document's origin. */
  local: Record<string, string>;
  /** `sessionStorage` of the tab, for the document's origin. */
  session: Record<string, string>;
  /** The window's scroll offset, in CSS pixels. */
  scroll: { x: number; y: number };
  /** The typed-but-unsubmitted fields. */
  fields: TypedField[];
}

/** A live episode's browser state, as a fork starts from it. */
export interface BrowserState extends PageState {
  /** The context's cookies. */
  cookies: Cookie[];
}

/** Runs in the page's main world; returns a {@linkcode PageState}. */
const CAPTURE = `(() => {
  // Reading the property itself throws where storage is refused (data: and opaque origins).
  const entries = (get) => {
    const out = {};
    try {
      const storage = get();
      for (let i = 0; i < storage.length; i++) {
        const key = storage.key(i);
        if (key !== null) out[key] = storage.getItem(key) ?? "";
      }
    } catch { /* storage refused: nothing to carry */ }
    return out;
  };
  const pathOf = (el) => {
    if (el.id && document.querySelectorAll("#" + CSS.escape(el.id)).length === 1) {
      return "#" + el.id;
    }
    const steps = [];
    for (let node = el; node && node !== document.documentElement; node = node.parentElement) {
      steps.unshift(Array.prototype.indexOf.call(node.parentElement.children, node));
    }
    return steps.join("/");
  };
  const fields = [];
  for (const el of document.querySelectorAll("input, textarea, select")) {
    if (el instanceof HTMLSelectElement) {
      const options = [...el.options];
      if (options.some((o) => o.selected !== o.defaultSelected)) {
        fields.push({ path: pathOf(el), selected: options.flatMap((o, i) => o.selected ? [i] : []) });
      }
    } else if (el instanceof HTMLInputElement && (el.type === "checkbox" || el.type === "radio")) {
      if (el.checked !== el.defaultChecked) fields.push({ path: pathOf(el), checked: el.checked });
    } else if (el instanceof HTMLTextAreaElement ||
      (el instanceof HTMLInputElement && !["hidden", "file", "submit", "button", "reset", "image"].includes(el.type))) {
      if (el.value !== el.defaultValue) fields.push({ path: pathOf(el), value: el.value });
    }
  }
  return {
    url: location.href,
    local: entries(() => localStorage),
    session: entries(() => sessionStorage),
    scroll: { x: scrollX, y: scrollY },
    fields,
  };
})()`;

/**
 * Captures the browser state of an episode's active tab and context.
 *
 * @param browser the browser, for the context's cookies
 * @param context the episode's context
 * @param page the active tab
 * @returns the state
 */
export async function captureBrowserState(
  browser: Browser,
  context: BrowserContext,
  page: Page,
): Promise<BrowserState> {
  const [{ cookies }, pageState] = await Promise.all([
    browserInternals(browser).connection.send("Storage.getCookies", {
      browserContextId: context.id,
    }),
    evaluate<PageState>(page, CAPTURE),
  ]);
  return { ...pageState, cookies };
}

/**
 * The same state on another origin: the URL, and the cookies set for the
 * parent's host, moved to the fork's. Cookies of other hosts are left out
 * (an env's pages reach no other origin).
 *
 * @param state the parent's state
 * @param from the parent's site origin
 * @param to the fork's site origin
 * @returns the fork's state
 */
export function moveBrowserState(state: BrowserState, from: string, to: string): BrowserState {
  const fromUrl = new URL(from);
  const toUrl = new URL(to);
  const url = new URL(state.url);
  const moved = url.origin === fromUrl.origin
    ? toUrl.origin + url.pathname + url.search + url.hash
    : state.url;
  const cookies = state.cookies.flatMap((cookie) => {
    const host = cookie.domain.replace(/^\./, "");
    if (host !== fromUrl.hostname) return [];
    const domain = cookie.domain.startsWith(".") ? `.${toUrl.hostname}` : toUrl.hostname;
    return [{ ...cookie, domain }];
  });
  return { ...state, url: moved, cookies };
}

/**
 * Puts cookies into a fresh context, before its first page loads.
 *
 * @param browser the browser
 * @param context the fork's context
 * @param cookies the cookies, already on the fork's host
 */
export async function restoreCookies(
  browser: Browser,
  context: BrowserContext,
  cookies: readonly Cookie[],
): Promise<void> {
  if (cookies.length === 0) return;
  const params: CookieParam[] = cookies.map((cookie) => {
    const hostOnly = !cookie.domain.startsWith(".");
    const scheme = cookie.secure ? "https" : "http";
    return {
      name: cookie.name,
      value: cookie.value,
      // A host-only cookie stays host-only: set through a URL, not a domain.
      ...(hostOnly
        ? { url: `${scheme}://${cookie.domain}${cookie.path}` }
        : { domain: cookie.domain }),
      path: cookie.path,
      secure: cookie.secure,
      httpOnly: cookie.httpOnly,
      ...(cookie.sameSite ? { sameSite: cookie.sameSite } : {}),
      ...(cookie.session ? {} : { expires: cookie.expires }),
    };
  });
  await browserInternals(browser).connection.send("Storage.setCookies", {
    cookies: params,
    browserContextId: context.id,
  });
}

/**
 * Registers a script that fills the origin's storage in the next document
 * of the tab, before its own scripts run; remove it once that document
 * loaded (a later navigation must not write the storage again).
 *
 * @param page the fork's tab, still blank
 * @param state the state, on the fork's origin
 * @returns the script's identifier, for `Page.removeScriptToEvaluateOnNewDocument`
 */
export async function prepareStorage(page: Page, state: PageState): Promise<string | undefined> {
  if (Object.keys(state.local).length + Object.keys(state.session).length === 0) return undefined;
  const origin = new URL(state.url).origin;
  const source = `(() => {
    if (window !== window.top || location.origin !== ${JSON.stringify(origin)}) return;
    for (const [k, v] of Object.entries(${JSON.stringify(state.local)})) localStorage.setItem(k, v);
    for (const [k, v] of Object.entries(${
    JSON.stringify(state.session)
  })) sessionStorage.setItem(k, v);
  })()`;
  const { identifier } = await page.session.send("Page.addScriptToEvaluateOnNewDocument", {
    source,
  });
  return identifier;
}

/** What {@linkcode restorePage} did. */
export interface PageRestored {
  /** How many fields it set (those that did not hold their value already). */
  set: number;
  /** The paths of fields it could not find (not rendered yet, or the page differs). */
  missing: string[];
}

/**
 * Puts the typed fields and the scroll position back into the loaded page.
 * A field that already holds its value is left alone (no events), so a
 * second call after the page settled sets only what the page's own scripts
 * undid or rendered late.
 *
 * @param page the fork's tab, on the state's URL
 * @param state the state
 * @returns how many fields it set, and the paths it could not find
 */
export async function restorePage(page: Page, state: PageState): Promise<PageRestored> {
  const expression = `((fields, scroll) => {
    const missing = [];
    let set = 0;
    const find = (path) => {
      if (path.startsWith("#")) return document.getElementById(path.slice(1));
      let node = document.documentElement;
      for (const step of path === "" ? [] : path.split("/")) node = node?.children[Number(step)];
      return node ?? null;
    };
    for (const field of fields) {
      const el = find(field.path);
      if (!el) { missing.push(field.path); continue; }
      if (field.selected) {
        const options = [...el.options];
        if (options.every((o, i) => o.selected === field.selected.includes(i))) continue;
        options.forEach((o, i) => { o.selected = field.selected.includes(i); });
      } else if (field.checked !== undefined) {
        if (el.checked === field.checked) continue;
        el.checked = field.checked;
      } else {
        if (el.value === field.value) continue;
        el.value = field.value;
      }
      set++;
      el.dispatchEvent(new Event("input", { bubbles: true }));
      el.dispatchEvent(new Event("change", { bubbles: true }));
    }
    scrollTo(scroll.x, scroll.y);
    return { set, missing };
  })(${JSON.stringify(state.fields)}, ${JSON.stringify(state.scroll)})`;
  return await evaluate<PageRestored>(page, expression);
}

async function evaluate<T>(page: Page, expression: string): Promise<T> {
  const { result, exceptionDetails } = await page.session.send("Runtime.evaluate", {
    expression,
    returnByValue: true,
  });
  if (exceptionDetails) {
    throw new Error(
      `Cannot read the page's state: ${
        exceptionDetails.exception?.description ?? exceptionDetails.text
      }`,
    );
  }
  return result.value as T;
}
