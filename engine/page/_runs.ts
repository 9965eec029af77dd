/**
 * Runs of similar siblings: which ones are repeated chrome to summarise
 * (never the main content), and the walk of a run.
 *
 * @module
 */

import { clip, fold } from "./roles.ts";
import type { WireMore } from "../observe/wire.ts";
import { ACTIONABLE_SELECTOR, type DNode, type Inherited, type Pass } from "./_tree.ts";
import { collectKid } from "./_collect.ts";

/** Tags of prose: a run of them is the page's text, never summarised. */
const PROSE_TAGS = new Set(["p", "blockquote", "pre", "dd", "dt", "h2", "h3", "h4", "figure"]);

/**
 * Line breaks: a run of them is the text they break (a story set as one
 * block of text and `<br>`s), whose words lie between them.
 */
const BREAKS = new Set(["br", "wbr"]);

/** Chrome inside the main content: navigation, asides, headers and footers. */
const CHROME = "nav,aside,footer,header,[role=navigation],[role=complementary],[role=contentinfo]";

/** The main content of a page. */
const MAIN = "main,article,[role=main]";

/**
 * Whether a run of similar siblings is the page's content rather than
 * repeated chrome: paragraphs of a story anywhere, and any run inside the
 * main content (`main`, `article`, role `main`: the products of a listing,
 * the rows of an article's table, a reading list) that is not chrome within
 * it (a `nav`, `aside`, `header` or `footer`). Content is never summarised;
 * link lists, tag clouds and footers outside the main content are.
 */
function isContent(elements: Element[], from: number, to: number): boolean {
  const first = elements[from]!;
  if (PROSE_TAGS.has(first.localName) || BREAKS.has(first.localName)) return true;
  const main = first.closest(MAIN);
  if (main) {
    const chrome = first.closest(CHROME);
    if (!chrome || !main.contains(chrome)) return true;
  }
  return holdsProse(elements, from, to);
}

/** Mean characters of text per item from which a run is prose (posts, comments), not chrome. */
const PROSE_ITEM = 200;

/**
 * Whether the first few items of a run carry prose: the posts of a forum
 * laid out in a table cell, comments, answers. Chrome (links of a footer,
 * a tag cloud, menu entries, the rows of a price list) says a few words an item.
 */
function holdsProse(elements: Element[], from: number, to: number): boolean {
  const end = Math.min(to, from + 3);
  let chars = 0;
  for (let i = from; i < end; i++) chars += fold(elements[i]!.textContent ?? "").length;
  return chars / (end - from) >= PROSE_ITEM;
}

/** Tag and first class; siblings are similar when these match. */
export function label(el: Element): string {
  const cls = el.getAttribute("class");
  const first = cls ? cls.trim().split(/\s+/)[0] : "";
  return first ? `${el.localName}.${first}` : el.localName;
}

/**
 * What makes siblings "similar": the same label and the same labels of their
 * first few children, so rows of one template match and sections of
 * different content do not.
 */
function signature(el: Element): string {
  let sig = label(el);
  let n = 0;
  for (let child = el.firstElementChild; child && n < 8; child = child.nextElementSibling, n++) {
    sig += ` ${label(child)}`;
  }
  return sig;
}

/**
 * Walks children where long runs of similar siblings exist: the first
 * `keepItems` of a run and those in the viewport are walked, the rest are
 * counted. The viewport part of a run is found by binary search on the
 * items' boxes, which assumes the run is laid out top to bottom.
 */
export function collectRuns(pass: Pass, node: DNode, kids: ArrayLike<Node>, next: Inherited): void {
  const { req, layout } = pass;
  const elements: Element[] = [];
  for (let i = 0; i < kids.length; i++) {
    if (kids[i]!.nodeType === 1) {
      elements.push(kids[i] as Element);
    }
  }
  // Runs of equal signatures, by element index.
  const skip = new Set<number>();
  const runs: { from: number; to: number; sig: string }[] = [];
  const sigs = elements.map(signature);
  let from = 0;
  for (let i = 1; i <= elements.length; i++) {
    if (i < elements.length && sigs[i] === sigs[i - 1]) continue;
    if (i - from > req.summariseAfter && !isContent(elements, from, i)) {
      runs.push({ from, to: i, sig: label(elements[from]!) });
    }
    from = i;
  }
  const mores = new Map<number, WireMore>();
  for (const run of runs) {
    const top = -req.margin, bottom = pass.vp.h + req.margin;
    let lo = run.from, hi = run.to;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      const r = layout.rect(elements[mid]!);
      if (r.y + r.h < top) lo = mid + 1;
      else hi = mid;
    }
    const firstIn = lo;
    hi = run.to;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      const r = layout.rect(elements[mid]!);
      if (r.y <= bottom) lo = mid + 1;
      else hi = mid;
    }
    const lastIn = Math.min(lo, firstIn + 200);
    let pending: WireMore | undefined;
    for (let i = run.from; i < run.to; i++) {
      const keep = i < run.from + req.keepItems || (i >= firstIn && i < lastIn);
      if (keep) {
        pending = undefined;
        continue;
      }
      skip.add(i);
      if (!pending) {
        pending = {
          k: "m",
          n: 0,
          a: 0,
          why: "similar",
          what: run.sig,
          where: i < firstIn ? "above" : "below",
        };
        mores.set(i, pending);
      }
      pending.n += 1;
      pending.a += countActionable(elements[i]!);
      // The words stay (an agent reads what the run holds); the ids come on request.
      if (pass.summaryText > 0) {
        const text = clip(fold(elements[i]!.textContent ?? ""), MAX_SUMMARY_ITEM);
        if (text) {
          (pending.texts ??= []).push(text);
          pass.summaryText -= text.length;
        }
      }
    }
  }
  let e = 0, skipped = false;
  for (let i = 0; i < kids.length; i++) {
    const kid = kids[i]!;
    if (kid.nodeType === 1) {
      const index = e++;
      const more = mores.get(index);
      if (more) node.kids.push(more);
      skipped = skip.has(index);
      if (skipped) continue;
    } else if (kid.nodeType === 3 && skip.size) {
      // Text between left-out items is theirs (the ", " of a tag list), and a
      // bare separator beside one separates nothing once it is gone.
      const nextSkipped = skip.has(e);
      if (skipped && nextSkipped) continue;
      if ((skipped || nextSkipped) && SEPARATOR.test((kid as Text).data)) continue;
    }
    collectKid(pass, node, kid, next);
  }
}

/** Text that only separates items: punctuation and white space, no letters or digits. */
const SEPARATOR = /^[^\p{L}\p{N}]{0,8}$/u;

/**
 * Most characters of left-out items' text the summary lines of one pass
 * carry: the words of a tag cloud or a footer stay, a 2,000-row table's do not.
 */
export const MAX_SUMMARY_TEXT = 1000;

/** Most characters of one left-out item's text in a summary line. */
const MAX_SUMMARY_ITEM = 40;

/** How many actionable elements `el` is or holds, for summary lines. */
export function countActionable(el: Element): number {
  let n = el.matches(ACTIONABLE_SELECTOR) ? 1 : 0;
  n += el.querySelectorAll(ACTIONABLE_SELECTOR).length;
  return n;
}
