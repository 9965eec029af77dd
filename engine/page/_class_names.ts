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
  "like",
  "heart",
  "star",
  "favorite",
  "favourite",
  "bookmark",
  "reply",
  "comment",
  "retweet",
  "repost",
  "send",
  "flag",
  "report",
  "trash",
  "archive",
  "pin",
  "mute",
  "bold",
  "italic",
  "underline",
  "ellipsis",
  "kebab",
  "dots",
  "info",
  "help",
  "print",
  "save",
  "attach",
  "filter",
  "sort",
  "bell",
  "notifications",
]);

/** Words that name nothing a person sees (what the element is built as). */
const FILLER = new Set([
  "icon",
  "btn",
  "button",
  "link",
  "wrapper",
  "container",
  "trigger",
  "action",
  "o",
  "outline",
  "outlined",
  "solid",
  "fill",
  "filled",
  "alt",
]);

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

/** Attributes tooltip libraries read the words they show on hover from. */
const TOOLTIP_ATTRIBUTES = ["data-tooltip", "data-tip", "data-original-title", "data-title"];

/**
 * What a person sees of an icon-only control that has no accessible name:
 * the tooltip it shows on hover (a tooltip library's attribute, or the
 * element `aria-describedby` points at), else what its icon is, as its
 * class (or its icon's: `<i class="fa fa-share">`), the symbol its icon
 * draws with `::before` (`⚑` → "flag") or the sprite symbol its svg uses
 * (`<use href="#icon-reply">`) says.
 *
 * @param el the control
 * @returns the name, or `""` when nothing says what the icon is
 */
export function iconName(el: Element): string {
  for (const attribute of TOOLTIP_ATTRIBUTES) {
    const text = (el.getAttribute(attribute) ?? "").replace(/\s+/g, " ").trim();
    if (text) return text;
  }
  const described = el.getAttribute("aria-describedby");
  if (described) {
    const root = el.getRootNode() as Document | ShadowRoot;
    const words = described.split(/\s+/).map((id) =>
      (id && root.getElementById?.(id)?.textContent || "").replace(/\s+/g, " ").trim()
    ).filter(Boolean).join(" ");
    if (words) return words;
  }
  const hint = classHint(el);
  if (hint) return hint;
  const icon = el.querySelector("i[class], svg[class], span[class]");
  if (icon) {
    const own = hintOf(icon);
    if (own) return own;
  }
  const glyph = glyphName(el);
  if (glyph) return glyph;
  const use = el.querySelector("use");
  const href = use?.getAttribute("href") ?? use?.getAttribute("xlink:href") ?? "";
  if (href.startsWith("#")) {
    const words = href.slice(1).replace(/([a-z])([A-Z])/g, "$1 $2").toLowerCase().split(/[\s_-]+/);
    const start = words.findIndex((word) => ICON_WORDS.has(word));
    if (start >= 0) {
      return words.slice(start).filter((word) => /^[a-z]+$/.test(word) && !FILLER.has(word))
        .map((word) => SPELLED[word] ?? word).join(" ");
    }
  }
  return "";
}

/** Words for the symbols icons draw as text: what a person calls what they see. */
const GLYPH_WORDS: Record<string, string> = {
  "⚑": "flag",
  "⚐": "flag",
  "♥": "heart",
  "♡": "heart",
  "❤": "heart",
  "★": "star",
  "☆": "star",
  "✎": "edit",
  "✏": "edit",
  "✕": "close",
  "✖": "close",
  "×": "close",
  "⋯": "more",
  "⋮": "more",
  "…": "more",
  "☰": "menu",
  "⚙": "settings",
  "↗": "share",
  "✓": "check",
  "✔": "check",
  "✉": "mail",
  "⟳": "refresh",
  "↻": "refresh",
  "🔍": "search",
  "🗑": "delete",
  "🔔": "notifications",
  "📎": "attach",
  "🔗": "link",
};

/**
 * The symbol an icon draws with `::before` or `::after` (its own, or one of
 * its first children's: `<i class="g7">` drawing `⚑`), named by the word a
 * person uses for it, else the symbol itself. An icon font's private-use
 * code point means nothing without its font: no name.
 */
function glyphName(el: Element): string {
  const view = el.ownerDocument.defaultView;
  if (!view || typeof view.getComputedStyle !== "function") return "";
  for (const part of [el, ...Array.from(el.children).slice(0, 3)]) {
    for (const pseudo of ["::before", "::after"]) {
      const content = view.getComputedStyle(part, pseudo).content;
      const quoted = /^"(.*)"$/.exec(content ?? "");
      const symbol = quoted ? quoted[1]!.trim() : "";
      if (!symbol || [...symbol].length > 2) continue;
      const word = GLYPH_WORDS[symbol] ?? GLYPH_WORDS[symbol.replace(/\uFE0F/g, "")];
      if (word) return word;
      if (/[\uE000-\uF8FF]|[\u{F0000}-\u{10FFFF}]|[\p{L}\p{N}]/u.test(symbol)) continue;
      return symbol;
    }
  }
  return "";
}
