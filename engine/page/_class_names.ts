/**
 * The last resort for naming an icon-only control: what its class says it
 * is. A control with no accessible name (no `aria-label`, `title`, svg
 * `<title>`, text or label) shows a person only its icon (an arrow beside a
 * month's name); the words its library gave it in its class
 * (`n-date-panel-month__prev`, `flatpickr-next-month`) say what that icon is.
 *
 * @module
 */

/** Words that say what an icon-only control does or which way it points. */
const ICON_WORDS = new Set([
  "prev",
  "previous",
  "next",
  "back",
  "forward",
  "fast",
  "first",
  "last",
  "up",
  "down",
  "left",
  "right",
  "close",
  "clear",
  "remove",
  "delete",
  "add",
  "plus",
  "minus",
  "increment",
  "decrement",
  "expand",
  "collapse",
  "search",
  "menu",
  "more",
  "edit",
  "settings",
  "refresh",
  "reload",
  "play",
  "pause",
  "today",
  "zoom",
  "copy",
  "download",
  "upload",
  "share",
  "toggle",
  "chevron",
  "arrow",
  "caret",
]);

/** Words that name nothing a person sees (what the element is built as). */
const FILLER = new Set(["icon", "btn", "button", "link", "wrapper", "container", "trigger"]);

/** Spelled-out forms of the abbreviations libraries use. */
const SPELLED: Record<string, string> = { prev: "previous" };

/**
 * The words of `el`'s class (or, failing that, of its only child's) that
 * name an icon-only control, from the first word of {@link ICON_WORDS} on:
 * `n-date-panel-month__fast-prev` → `fast previous`, `flatpickr-prev-month`
 * → `previous month`. A BEM element (after `__`) is read alone, a BEM
 * modifier (after `--`, a state) not at all.
 *
 * @param el the control
 * @returns the name, or `""` when its class says nothing of the kind
 */
export function classHint(el: Element): string {
  const own = hintOf(el);
  if (own) return own;
  const only = el.firstElementChild;
  return only && !only.nextElementSibling ? hintOf(only) : "";
}

function hintOf(el: Element): string {
  const cls = el.getAttribute("class");
  if (!cls) return "";
  for (const token of cls.trim().split(/\s+/)) {
    const element = token.split("--")[0]!.split("__").at(-1)!;
    const words = element.replace(/([a-z])([A-Z])/g, "$1 $2").toLowerCase().split(/[\s_-]+/);
    const start = words.findIndex((word) => ICON_WORDS.has(word));
    if (start < 0) continue;
    const kept = words.slice(start).filter((word) => /^[a-z]+$/.test(word) && !FILLER.has(word));
    if (kept.length) return kept.map((word) => SPELLED[word] ?? word).join(" ");
  }
  return "";
}
