/**
 * Messages that appear and go between two observations: a "Copied!" flash,
 * a toast, an alert or a live region's announcement that ends before the
 * step settles would never be seen by the agent. A mutation observer in the
 * isolated world keeps the latest text of each announcer a change touched;
 * each observation takes the ones no longer shown.
 *
 * Page code: DOM APIs only.
 *
 * @module
 */
import { srOnly } from "./layout.ts";

/**
 * Roles whose content is announced as it changes (WAI-ARIA live region
 * roles); not `timer` or `marquee`, whose changes are their nature.
 */
const LIVE_ROLES = /^(alert|status|log|alertdialog)$/;

/** Class words of the toasts and flashes that libraries draw without a live role. */
const TOAST_CLASS =
  /(^|[\s_-])(toast|toastify|snackbar|notification|notice|flash|growl)s?([\s_-]|$)/i;

/** How many ancestors are asked whether they announce. */
const UP = 5;

/** At most this many messages, each cut at this many characters. */
const MAX_MESSAGES = 5, MAX_CHARS = 120;

/** Keeps what announcers said since the last {@linkcode FlashWatch.drain}. */
export interface FlashWatch {
  /**
   * The messages said since the last call that are not shown now (their
   * element gone, hidden or saying something else), and forgets them all.
   *
   * @param doc the document observed now
   * @returns the messages, oldest first
   */
  drain(doc: Document): string[];
}

function fold(text: string): string {
  return text.replace(/\s+/g, " ").trim();
}

/** The element that announces what `node` holds: a live region, an alert, a toast; or `null`. */
function announcerOf(node: Node | null): Element | null {
  let el: Element | null = node && node.nodeType === 1
    ? node as Element
    : node?.parentElement ?? null;
  for (let i = 0; el && i < UP; i++, el = el.parentElement) {
    const role = el.getAttribute("role");
    if (role && LIVE_ROLES.test(role)) return el;
    const live = el.getAttribute("aria-live");
    if (live && live !== "off") return el;
    if (el.localName === "output") return el;
    const cls = el.getAttribute("class");
    if (cls && TOAST_CLASS.test(cls)) return el;
  }
  return null;
}

/** Whether `el` shows `text` now. */
function shows(el: Element, text: string): boolean {
  if (!el.isConnected) return false;
  const html = el as HTMLElement;
  if (
    typeof html.checkVisibility === "function" &&
    !html.checkVisibility({ opacityProperty: true, visibilityProperty: true })
  ) return false;
  return fold(html.innerText ?? el.textContent ?? "").includes(text);
}

/**
 * Starts watching `win`'s documents for announcers' messages.
 *
 * @param win the window of the isolated world
 * @returns the watch
 */
export function watchFlashes(win: Window & typeof globalThis): FlashWatch {
  const said = new Map<Element, string>();
  const note = (node: Node | null) => {
    const announcer = announcerOf(node);
    // A screen reader's announcement (react-select's "4 results available…"
    // in a clipped region) is nothing a person sees come and go.
    if (!announcer || srOnly(announcer)) return;
    const text = fold((announcer as HTMLElement).innerText || announcer.textContent || "");
    if (text) {
      said.set(announcer, text.length > MAX_CHARS ? `${text.slice(0, MAX_CHARS - 1)}…` : text);
    }
  };
  const observer = new win.MutationObserver((records) => {
    for (const record of records) {
      if (record.type === "characterData") note(record.target);
      else {
        note(record.target);
        for (let i = 0; i < record.addedNodes.length; i++) note(record.addedNodes[i]!);
      }
    }
  });
  let watched: Document | undefined;
  const watch = () => {
    const doc = win.document;
    if (watched === doc) return;
    observer.disconnect();
    said.clear();
    watched = doc;
    observer.observe(doc, { childList: true, subtree: true, characterData: true });
  };
  watch();
  return {
    drain(doc) {
      if (watched !== doc) {
        watch();
        return [];
      }
      for (const record of observer.takeRecords()) {
        note(record.target);
        for (let i = 0; i < record.addedNodes.length; i++) note(record.addedNodes[i]!);
      }
      const gone: string[] = [];
      for (const [el, text] of said) {
        if (!shows(el, text) && !gone.includes(text)) gone.push(text);
      }
      said.clear();
      return gone.slice(-MAX_MESSAGES);
    },
  };
}
