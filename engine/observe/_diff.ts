/**
 * Diffs between observations of a page: which ids were added, removed or
 * changed since the last whole observation of the same document, and the
 * body of a diff-mode observation.
 *
 * @module
 */
import type { ObservationDiff, ObservedElement, ObserveOptions } from "./observation.ts";
import { describeLine } from "./_stitch.ts";

/** Most lines of new text a diff lists. */
const MAX_DIFF_TEXT = 40;

/** What the observer keeps of a page's last observation (not in viewport mode), to diff against. */
export interface SeenPage {
  /** The document's URL: another document starts afresh. */
  url: string;
  /** Each id's line, as diffs compare it. */
  lines: Map<number, string>;
  /** Lines without an id (text, headings, structure). */
  texts: Set<string>;
}

/**
 * The diff of an observation against the page's last one, and its body text.
 *
 * @param elements the observation's elements
 * @param observed the observation's lines, as the whole-page text shows them
 * @param url the document's URL
 * @param previous what was kept of the page's last observation, if any
 * @param mode the observation mode: in `diff` mode the body lists the changes
 * @returns the diff, the body's lines, and what to keep of this observation
 */
export function diffObservation(
  elements: ObservedElement[],
  observed: string[],
  url: string,
  previous: SeenPage | undefined,
  mode: NonNullable<ObserveOptions["mode"]>,
): { diff: ObservationDiff; body: string[]; seen: SeenPage } {
  const lines = new Map<number, string>();
  for (const el of elements) lines.set(el.id, describeLine(el));
  // A new document starts afresh: everything is added.
  const same = previous && previous.url === url ? previous : undefined;
  const before = same?.lines;
  // Lines without an id (text, headings, structure), to report new text in diff mode.
  const texts = new Set<string>();
  for (const line of observed) {
    const trimmed = line.trim();
    if (!trimmed.startsWith("[")) texts.add(trimmed);
  }
  const diff: ObservationDiff = { added: [], removed: [], changed: [] };
  if (before) {
    for (const [id, line] of lines) {
      const old = before.get(id);
      if (old === undefined) diff.added.push(id);
      else if (old !== line) diff.changed.push(id);
    }
    for (const id of before.keys()) if (!lines.has(id)) diff.removed.push(id);
  } else {
    diff.added.push(...lines.keys());
  }
  let body: string[];
  if (mode === "diff" && before) {
    body = [];
    for (const id of diff.added) body.push(`+ ${lines.get(id)}`);
    for (const id of diff.changed) body.push(`~ ${lines.get(id)}`);
    for (const id of diff.removed) body.push(`- ${before.get(id)}`);
    let shown = 0;
    for (const text of texts) {
      if (same?.texts.has(text) || text.includes("[")) continue;
      if (++shown > MAX_DIFF_TEXT) break;
      body.push(`+ ${text}`);
    }
    if (!body.length) body.push("(no changes)");
  } else {
    body = observed;
  }
  return { diff, body, seen: { url, lines, texts } };
}
