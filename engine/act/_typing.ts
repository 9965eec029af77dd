/**
 * How `type` fills a field and checks that it took the text: the plan of key
 * presses and insertions, the shapes the in-page functions that read and set
 * a field's value answer with (the functions are in
 * `engine/page/act/_fields.ts`), and the comparison of what the field holds
 * with what was asked.
 *
 * Invariants:
 * - text longer than {@linkcode TYPE_MAX_LENGTH} is refused before anything
 *   touches the page;
 * - short text is typed key by key (real `keydown`/`keyup`), long text is
 *   inserted in runs (`Input.insertText`, one `input` event a run) with its
 *   last character and every newline still pressed as keys, so key listeners
 *   (search as you type, Enter handlers) fire as they would for a person;
 * - date-like, range and color inputs take no typed text in Chromium (their
 *   segments eat digits): they are set through the native `value` setter with
 *   `input` and `change` events, which frameworks (React's value tracker
 *   included) see as a user's edit;
 * - after typing the field is read back, and `type` succeeds only when it
 *   holds what was asked (modulo formatting: masks, separators, case), or
 *   when it consumed the text: a tag or chip input that clears itself on a
 *   separator succeeds when the words it no longer holds appeared as new
 *   elements near it (within three ancestors, not past a form) while typing,
 *   or when it fired `change` itself while typing (it committed the text to
 *   something shown elsewhere). Otherwise it is `value-not-set`, and a field
 *   that consumed text is never set again through its value (that would add
 *   the tags twice).
 *
 * @module
 */

/** Longest text one `type` action takes, in UTF-16 code units. */
export const TYPE_MAX_LENGTH = 5_000;

/** Text up to this many characters is typed key by key; longer text is inserted. */
export const TYPE_KEYS_MAX = 50;

/** Input types that are set through the value setter instead of typed. */
const SETTABLE = /^(date|time|datetime-local|month|week|range|color)$/;

/** What the field takes in each settable type, for error messages. */
const FORMATS: Record<string, string> = {
  date: '"YYYY-MM-DD"',
  time: '"HH:MM" (24-hour)',
  "datetime-local": '"YYYY-MM-DDTHH:MM"',
  month: '"YYYY-MM"',
  week: '"YYYY-Www"',
  range: "a number within the slider's range",
  color: '"#rrggbb"',
  number: "a number",
};

/**
 * Whether an input type is set through the value setter, not typed.
 *
 * @param type the input's `type`, lowercased
 * @returns whether it is date-like, a range or a color
 */
export function isSettable(type: string): boolean {
  return SETTABLE.test(type);
}

/**
 * The format an input type takes, quoted for a message, if it has one.
 *
 * @param type the input's `type`
 * @returns the format, or `undefined`
 */
export function formatOf(type: string): string | undefined {
  return FORMATS[type];
}

/** One step of typing: a key press, or a run of text inserted at once. */
export type TypingStep = { key: string } | { insert: string };

/**
 * Splits text into typing steps: every character a key when the text is
 * short; runs inserted at once, with newlines and the last character as keys,
 * when it is long.
 *
 * @param text the text to type
 * @returns the steps, in order
 */
export function typingPlan(text: string): TypingStep[] {
  const chars = [...text];
  if (chars.length <= TYPE_KEYS_MAX) return chars.map((key) => ({ key }));
  const steps: TypingStep[] = [];
  const last = chars.pop()!;
  let run = "";
  for (const char of chars) {
    if (char === "\n") {
      if (run) steps.push({ insert: run });
      run = "";
      steps.push({ key: char });
    } else {
      run += char;
    }
  }
  if (run) steps.push({ insert: run });
  steps.push({ key: last });
  return steps;
}

/** A field's state, read back after typing. */
export interface FieldState {
  /** Whether the element is still in the document. */
  connected: boolean;
  /** Whether it is disabled now. */
  disabled: boolean;
  /** Its local name. */
  tag: string;
  /** For an input, its `type` property, lowercased; empty otherwise. */
  type: string;
  /** The value of an input or textarea; `null` for other editables. */
  value: string | null;
  /** The visible text of a contenteditable; `null` for inputs. */
  text: string | null;
  /** The `maxLength` of an input or textarea; `-1` when it has none. */
  maxLength: number;
}

/** Letters and digits only, lowercased: what survives masks and separators. */
function fold(text: string): string {
  return text.normalize("NFC").toLowerCase().replace(/[^\p{L}\p{N}]+/gu, "");
}

/**
 * What the field should hold after typing.
 *
 * @param before the field's value or text before typing
 * @param text the text typed
 * @param mode whether the text replaced the field's or went at its end
 * @param tag the field's local name (newlines are dropped by an `input`)
 * @returns the expected value
 */
export function expectedValue(
  before: string,
  text: string,
  mode: "replace" | "append",
  tag: string,
): string {
  const typed = tag === "input" ? text.replace(/\r?\n/g, "") : text;
  return mode === "append" ? before + typed : typed;
}

/**
 * Whether a field holds what was asked: exactly, as the same number for a
 * number input, the same letters and digits (input masks, separators, case)
 * or those followed by more (an inline autocomplete), or, for a
 * contenteditable, containing the text with whitespace folded.
 *
 * @param state the field read back
 * @param expected the value asked for
 * @returns whether the field took it
 */
export function holds(state: FieldState, expected: string): boolean {
  if (state.value !== null) {
    if (state.value === expected) return true;
    if (state.type === "number" || state.type === "range") {
      return expected.trim() !== "" && Number(state.value) === Number(expected);
    }
    if (isSettable(state.type)) return false;
    // An inline autocomplete may complete what was typed.
    // A mask formats it (`(555) 123-4567`, `1,234.5`): its letters and digits are compared.
    const want = fold(expected);
    if (want !== "" && fold(state.value).startsWith(want)) return true;
    // A mask may put a fixed part of its own first: `+{1} (000) 000-0000` shows
    // `5551234567` as `+1 (555) 123-4567`.
    return want.length >= 2 && fold(state.value).includes(want);
  }
  const text = (state.text ?? "").replace(/\s+/g, " ").trim();
  const want = expected.replace(/\s+/g, " ").trim();
  return text.includes(want);
}

/**
 * Quotes what a field holds for a message, shortened.
 *
 * @param state the field read back
 * @returns the quoted value or text
 */
export function quoteHeld(state: FieldState): string {
  const held = state.value ?? state.text ?? "";
  const short = held.length > 60 ? `${held.slice(0, 59)}…` : held;
  return `"${short.replace(/\n/g, "\\n")}"`;
}

/** What the field watch (`WATCH_FIELD`, `engine/page/act/_fields.ts`) saw while typing. */
export interface FieldWatch {
  /** The text of each element or text node added near the field. */
  added: string[];
  /** Whether the field fired `change` itself. */
  changed: boolean;
}

/** Runs of letters and digits, lowercased. */
function wordsOf(text: string): string[] {
  return text.normalize("NFC").toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
}

/**
 * Whether a field that does not hold the text consumed it: it holds only a
 * tail of what was asked (nothing, or the words after the last separator),
 * and the words it no longer holds appeared in elements added near it (tags,
 * chips), or it fired `change` itself while typing.
 *
 * @param expected what the field should hold had it kept the text
 * @param held what it holds
 * @param watch what was seen near the field while typing
 * @returns the tags the text became (empty when only `change` tells), or
 *   `null` when the field did not consume it
 * @example
 * ```ts
 * import { consumed } from "./_typing.ts";
 * const tags = consumed("red,green,bl", "bl", { added: ["red ×", "green ×"], changed: false });
 * console.assert(tags?.join() === "red ×,green ×");
 * console.assert(consumed("red", "", { added: [], changed: false }) === null);
 * ```
 */
export function consumed(expected: string, held: string, watch: FieldWatch): string[] | null {
  const want = wordsOf(expected);
  const have = wordsOf(held);
  // The field keeps a tail of the text: its words end the asked words.
  if (have.length >= want.length) return null;
  const tail = want.slice(want.length - have.length);
  if (have.some((word, i) => word !== tail[i])) return null;
  const gone = want.slice(0, want.length - have.length);
  const pool = new Map<string, number>();
  const tags: string[] = [];
  for (const text of watch.added) {
    const words = wordsOf(text);
    if (!words.some((word) => gone.includes(word))) continue;
    tags.push(text.length > 40 ? `${text.slice(0, 39)}…` : text);
    for (const word of words) pool.set(word, (pool.get(word) ?? 0) + 1);
  }
  const shown = gone.every((word) => {
    const n = pool.get(word) ?? 0;
    if (n === 0) return false;
    pool.set(word, n - 1);
    return true;
  });
  if (shown) return tags;
  return watch.changed ? [] : null;
}
