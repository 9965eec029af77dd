/**
 * Formats a distilled tree as the compact indented text agents read.
 *
 * @module
 */
import type { WireElement, WireMore, WireNode } from "./wire.ts";

/** Longest line of plain text kept whole, in characters (a long article paragraph fits). */
const MAX_TEXT_LINE = 4000;
/** Longest line made by joining a group's parts. */
const MAX_JOINED = 200;
/**
 * One level of nesting: a single space. Two cost a token more on most
 * lines (`"  ["` splits where `" ["` is one token in o200k_base and
 * cl100k_base) and say nothing more; the tree reads the same.
 */
export const INDENT = " ";
/** Marks a frame placeholder line: `<indent>\u0001<slot>`; the driver splices the child frame in. */
export const FRAME_MARK = "\u0001";

function quote(text: string): string {
  return `"${text.replace(/"/g, "'")}"`;
}

/**
 * What a bare name may not hold, lest a reader cut it wrong: a quote, a
 * space at its start or end, the separators that end a name (` · `, ` | `,
 * ` → `), a colon after a single word (a row's `[id] row: …`), or
 * something that reads as an id.
 */
const NEEDS_QUOTES = /"|^\s|\s$| [·|→] |\[\d+\]|^[a-z]+:/;

/**
 * One element as a line: `[id] role name`, or `[id] role "name" value="…"
 * states cues *new` when more follows the name.
 *
 * The name goes bare when nothing but the line's end, a ` · ` or a link
 * target follows it and it holds nothing a reader could cut it at
 * ({@linkcode NEEDS_QUOTES}); otherwise it is quoted (`"` inside becomes
 * `'`). A link whose target is shown leaves out the word `link`: the arrow
 * says it (`[7] Pricing → /pricing`). `parseElements` in
 * `parse_observation.ts` reads this back.
 *
 * @param el the element
 * @param showNew whether to mark an id new since the previous observation with `*new`
 * @param glued whether text follows on the line after a single space (a
 *   link inside a sentence, a heading's link after its name): the name is
 *   quoted, as a bare one would run into that text
 * @returns the line, without indentation
 *
 * @example Describe a button, a link and a checked box
 * ```ts
 * import { describeElement } from "./format_observation.ts";
 * describeElement({ k: "e", id: 3, role: "button", name: "Save" }); // "[3] button Save"
 * describeElement({ k: "e", id: 4, role: "link", name: "Docs", href: "/docs/start" }); // "[4] Docs → /docs/start"
 * describeElement({ k: "e", id: 5, role: "checkbox", name: "Remember me", states: ["checked"] });
 * // '[5] checkbox "Remember me" checked'
 * ```
 */
export function describeElement(el: WireElement, showNew = true, glued = false): string {
  const parts: string[] = [];
  if (el.id !== undefined) parts.push(`[${el.id}]`);
  const target = el.href && !el.quietHref ? el.href : "";
  // The arrow says link; an element without an id keeps its role word (its line is text).
  const arrowSaysLink = target !== "" && el.role === "link" && el.id !== undefined;
  if (el.role && !arrowSaysLink) parts.push(el.role);
  if (el.name) {
    const more = el.description || el.value !== undefined || el.states?.length ||
      el.cues?.length || el.options || (el.isNew && showNew);
    const bare = (el.role !== "" || arrowSaysLink) && !glued && !more &&
      !NEEDS_QUOTES.test(el.name);
    parts.push(bare ? el.name : quote(el.name));
  }
  if (target) parts.push(`→ ${target}`);
  if (el.description) parts.push(`title=${quote(el.description)}`);
  if (el.value !== undefined) parts.push(`value=${quote(el.value)}`);
  if (el.states) parts.push(...el.states);
  if (el.cues) parts.push(...el.cues);
  if (el.options) parts.push(`options: ${el.options.join(" | ")}`);
  if (el.isNew && showNew) parts.push("*new");
  return parts.join(" ");
}

function describeMore(more: WireMore): string {
  const actionable = more.a ? ` (${more.a} actionable)` : "";
  switch (more.why) {
    case "similar": {
      // Where the rest is and how to get it.
      const where = more.where ? ` ${more.where}` : "";
      const how = more.scroll !== undefined
        ? `scroll [${more.scroll}] to list them`
        : more.where === "above"
        ? "scroll up to list them"
        : "scroll down to list them";
      const texts = more.texts?.length ? `: ${more.texts.join(" · ")}` : "";
      return `… ${more.n} more ${
        more.what ?? "items"
      }${where}${actionable}: ${how}, or observe with summariseAfter 0${texts}`;
    }
    case "above":
      return `… ${more.n} elements above the viewport${actionable}`;
    case "below":
      return `… ${more.n} elements below the viewport${actionable}`;
    default:
      return `… ${more.n} elements outside the viewport${actionable}`;
  }
}

/**
 * Text is kept whole up to a generous limit; past it the cut falls at a
 * sentence end, never mid-word, and says how much was left out.
 */
function clipLine(text: string): string {
  if (text.length <= MAX_TEXT_LINE) return text;
  const head = text.slice(0, MAX_TEXT_LINE);
  const end = Math.max(head.lastIndexOf(". "), head.lastIndexOf("! "), head.lastIndexOf("? "));
  const cut = end > MAX_TEXT_LINE / 2 ? end + 1 : Math.max(head.lastIndexOf(" "), 1);
  return `${text.slice(0, cut)} … (${text.length - cut} more characters)`;
}

/**
 * Text too long for one line as several, each cut after a sentence (or, in
 * a sentence longer than a line, between words): a story set as one block
 * of text and `<br>`s is the page's prose, kept whole, never clipped.
 */
function proseLines(text: string): string[] {
  const lines: string[] = [];
  let rest = text;
  while (rest.length > MAX_TEXT_LINE) {
    const head = rest.slice(0, MAX_TEXT_LINE);
    const end = Math.max(head.lastIndexOf(". "), head.lastIndexOf("! "), head.lastIndexOf("? "));
    const cut = end > MAX_TEXT_LINE / 2 ? end + 1 : Math.max(head.lastIndexOf(" "), 1);
    lines.push(rest.slice(0, cut).trimEnd());
    rest = rest.slice(cut).trimStart();
  }
  if (rest) lines.push(rest);
  return lines;
}

/**
 * One node on one line, children joined in. `inRun`: the node is an inline
 * element with text on either side joined by a plain space.
 */
function inline(node: WireNode, inRun = false): string {
  const showNew = markNew;
  switch (node.k) {
    case "t":
      return clipLine(node.t);
    case "m":
      return describeMore(node);
    case "f":
      return `${FRAME_MARK}${node.slot}`;
    case "e": {
      if (node.role === "row") {
        const cells = node.c ? node.c.map((cell) => inline(cell)).join(" | ") : "";
        // A row that is a target (a pointer cursor of its own) shows its id; its cells name it.
        if (node.id === undefined) return cells;
        const { name: _, ...unnamed } = node;
        const head = describeElement(unnamed, showNew);
        return cells ? `${head}: ${cells}` : head;
      }
      const cell = node.role === "cell" || node.role === "columnheader" ||
        node.role === "rowheader" || node.role === "gridcell" && node.id === undefined;
      const tail = node.c ? joinParts(node.c) : "";
      const glued = inRun || tail !== "";
      const head = cell && node.id === undefined
        ? (node.name ?? "")
        : node.role === "" || node.role === "list" || node.role === "listitem"
        ? (node.id !== undefined || node.name ? describeElement(node, showNew, glued) : "")
        : describeElement(node, showNew, glued);
      return head && tail ? `${head} ${tail}` : head || tail;
    }
  }
}

/**
 * Joins nodes on one line: with ` · ` between separate things, with a
 * space where an element runs on inside the text around it (a link in a
 * sentence).
 */
function joinParts(nodes: readonly WireNode[]): string {
  let out = "";
  let previous: WireNode | undefined;
  for (let i = 0; i < nodes.length; i++) {
    const node = nodes[i]!;
    const inRun = node.k === "e" && node.inline === true &&
      (nodes[i - 1]?.k === "t" || nodes[i + 1]?.k === "t");
    const text = inline(node, inRun);
    if (!text) continue;
    if (previous) {
      const runs = (previous.k === "t" && node.k === "e" && node.inline) ||
        (previous.k === "e" && previous.inline && node.k === "t");
      out += runs ? " " : " · ";
    }
    out += text;
    previous = node;
  }
  return out;
}

/** Roles whose content always gets lines of its own. */
const BLOCKS = new Set([
  "table",
  "grid",
  "treegrid",
  "list",
  "form",
  "navigation",
  "main",
  "banner",
  "contentinfo",
  "complementary",
  "dialog",
  "alertdialog",
  "menu",
  "menubar",
  "listbox",
  "tree",
  "tablist",
  "tabpanel",
  "region",
  "search",
  "row",
  "iframe",
]);

/**
 * Whether a node can be joined into its parent's line: plain text, an
 * element without children, or a small element whose children are all such
 * (a heading around a link). A group of groups never joins.
 */
function isLeaf(node: WireNode): boolean {
  if (node.k !== "e") return node.k !== "f";
  if (!node.c) return true;
  if (BLOCKS.has(node.role)) return false;
  return node.c.every((kid) => kid.k === "t" || kid.k === "e" && !kid.c);
}

const TRANSPARENT = new Set(["", "list", "listitem", "group", "cell"]);

function walk(nodes: readonly WireNode[], depth: number, out: string[]): void {
  const pad = INDENT.repeat(depth);
  for (const node of nodes) {
    if (node.k === "t") {
      for (const line of proseLines(node.t)) out.push(pad + line);
      continue;
    }
    if (node.k !== "e") {
      out.push(pad + inline(node));
      continue;
    }
    if (node.role === "iframe" && !node.c) {
      out.push(pad + describeElement(node, markNew));
      continue;
    }
    if (node.role === "row") {
      const line = inline(node);
      if (line) out.push(pad + line);
      continue;
    }
    const unnamed = node.id === undefined && !node.name && !node.states;
    if (TRANSPARENT.has(node.role) && unnamed) {
      // Items of a list keep a line each; other wrappers join when short.
      if (node.role !== "list" && node.c && node.c.every(isLeaf)) {
        const joined = joinParts(node.c);
        if (joined.length <= MAX_JOINED) {
          if (joined) out.push(pad + joined);
          continue;
        }
      }
      walk(node.c ?? [], depth, out);
      continue;
    }
    const head = describeElement(node, markNew);
    if (!node.c) {
      out.push(pad + head);
      continue;
    }
    if (!BLOCKS.has(node.role) && node.c.every(isLeaf)) {
      const joined = joinParts(node.c);
      if (head.length + joined.length <= MAX_JOINED) {
        out.push(pad + (joined ? `${head} · ${joined}` : head));
        continue;
      }
    }
    out.push(pad + head);
    walk(node.c, depth + 1, out);
  }
}

/**
 * Formats distilled nodes as indented lines.
 *
 * @param nodes the tree, frames already stitched in
 * @param options `depth`: indentation of the first line (default 0); `showNew`: print `*new` marks (default true)
 * @returns the lines
 *
 * @example Format a small tree
 * ```ts
 * import { formatNodes } from "./format_observation.ts";
 * const lines = formatNodes([{ k: "e", role: "main", c: [{ k: "e", id: 1, role: "link", name: "Home" }] }]);
 * // ["main · [1] link \"Home\""]
 * ```
 */
export function formatNodes(
  nodes: readonly WireNode[],
  options: { depth?: number; showNew?: boolean } = {},
): string[] {
  const out: string[] = [];
  markNew = options.showNew ?? true;
  walk(nodes, options.depth ?? 0, out);
  return out;
}

/** Whether `*new` marks are printed in the current `formatNodes` call. */
let markNew = true;
