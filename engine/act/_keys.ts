/**
 * Key definitions for `Input.dispatchKeyEvent` and the parser of chords such
 * as `"Control+Shift+ArrowLeft"`.
 *
 * @module
 */
import type { Modifier } from "./action.ts";
import { ActionError } from "./errors.ts";

/** What `Input.dispatchKeyEvent` needs to know about one key. */
export interface KeyDefinition {
  /** The DOM `key`, such as `"Enter"` or `"a"`. */
  key: string;
  /** The DOM `code`, such as `"Enter"` or `"KeyA"`. */
  code: string;
  /** The Windows virtual key code. */
  keyCode: number;
  /** The text the key types, if any. */
  text?: string;
  /** The DOM `location` (1 left, 2 right). */
  location?: number;
}

const NAMED: Record<string, KeyDefinition> = {
  Enter: { key: "Enter", code: "Enter", keyCode: 13, text: "\r" },
  Tab: { key: "Tab", code: "Tab", keyCode: 9 },
  Escape: { key: "Escape", code: "Escape", keyCode: 27 },
  Backspace: { key: "Backspace", code: "Backspace", keyCode: 8 },
  Delete: { key: "Delete", code: "Delete", keyCode: 46 },
  Space: { key: " ", code: "Space", keyCode: 32, text: " " },
  ArrowUp: { key: "ArrowUp", code: "ArrowUp", keyCode: 38 },
  ArrowDown: { key: "ArrowDown", code: "ArrowDown", keyCode: 40 },
  ArrowLeft: { key: "ArrowLeft", code: "ArrowLeft", keyCode: 37 },
  ArrowRight: { key: "ArrowRight", code: "ArrowRight", keyCode: 39 },
  Home: { key: "Home", code: "Home", keyCode: 36 },
  End: { key: "End", code: "End", keyCode: 35 },
  PageUp: { key: "PageUp", code: "PageUp", keyCode: 33 },
  PageDown: { key: "PageDown", code: "PageDown", keyCode: 34 },
  Insert: { key: "Insert", code: "Insert", keyCode: 45 },
  Shift: { key: "Shift", code: "ShiftLeft", keyCode: 16, location: 1 },
  Control: { key: "Control", code: "ControlLeft", keyCode: 17, location: 1 },
  Alt: { key: "Alt", code: "AltLeft", keyCode: 18, location: 1 },
  Meta: { key: "Meta", code: "MetaLeft", keyCode: 91, location: 1 },
};
for (let i = 1; i <= 12; i++) NAMED[`F${i}`] = { key: `F${i}`, code: `F${i}`, keyCode: 111 + i };

const ALIASES: Record<string, string> = {
  ctrl: "Control",
  control: "Control",
  cmd: "Meta",
  command: "Meta",
  meta: "Meta",
  super: "Meta",
  alt: "Alt",
  option: "Alt",
  shift: "Shift",
  esc: "Escape",
  escape: "Escape",
  return: "Enter",
  enter: "Enter",
  del: "Delete",
  delete: "Delete",
  backspace: "Backspace",
  tab: "Tab",
  space: "Space",
  up: "ArrowUp",
  down: "ArrowDown",
  left: "ArrowLeft",
  right: "ArrowRight",
  arrowup: "ArrowUp",
  arrowdown: "ArrowDown",
  arrowleft: "ArrowLeft",
  arrowright: "ArrowRight",
  home: "Home",
  end: "End",
  pageup: "PageUp",
  pagedown: "PageDown",
  insert: "Insert",
};

const PUNCTUATION: Record<string, [string, number]> = {
  ";": ["Semicolon", 186],
  "=": ["Equal", 187],
  ",": ["Comma", 188],
  "-": ["Minus", 189],
  ".": ["Period", 190],
  "/": ["Slash", 191],
  "`": ["Backquote", 192],
  "[": ["BracketLeft", 219],
  "\\": ["Backslash", 220],
  "]": ["BracketRight", 221],
  "'": ["Quote", 222],
  "+": ["Equal", 187],
};

/**
 * The definition of one key name (`"Enter"`, `"a"`, `"F5"`, `"ctrl"`).
 *
 * @param name the key name
 * @returns the definition, or `undefined` for an unknown name
 */
export function keyDefinition(name: string): KeyDefinition | undefined {
  const named = NAMED[name] ?? NAMED[ALIASES[name.toLowerCase()] ?? ""];
  if (named) return named;
  if (name.length !== 1) return undefined;
  if (/[a-z]/i.test(name)) {
    return {
      key: name,
      code: `Key${name.toUpperCase()}`,
      keyCode: name.toUpperCase().charCodeAt(0),
      text: name,
    };
  }
  if (/[0-9]/.test(name)) {
    return { key: name, code: `Digit${name}`, keyCode: name.charCodeAt(0), text: name };
  }
  const punctuation = PUNCTUATION[name];
  if (punctuation) return { key: name, code: punctuation[0], keyCode: punctuation[1], text: name };
  return undefined;
}

/** A parsed chord: modifiers held, then one key pressed. */
export interface Chord {
  /** The modifiers, in press order. */
  modifiers: Modifier[];
  /** The key pressed with them. */
  key: KeyDefinition;
}

const MODIFIER_NAMES = new Set(["Alt", "Control", "Meta", "Shift"]);

/**
 * Parses a chord such as `"Control+A"`, `"Shift+Tab"` or `"Control++"`.
 *
 * @param keys the chord
 * @returns the modifiers and the key
 * @throws {ActionError} `invalid-action` when a key name is unknown or a chord has no key
 */
export function parseChord(keys: string): Chord {
  const parts: string[] = [];
  let rest = keys.trim();
  while (rest.length > 0) {
    const plus = rest.indexOf("+", 1);
    if (plus === -1) {
      parts.push(rest);
      break;
    }
    parts.push(rest.slice(0, plus));
    rest = rest.slice(plus + 1);
  }
  if (parts.length === 0) {
    throw new ActionError("invalid-action", `Invalid "press" action: no key in "${keys}"`);
  }
  const modifiers: Modifier[] = [];
  const last = parts[parts.length - 1]!;
  for (const part of parts.slice(0, -1)) {
    const name = ALIASES[part.toLowerCase()] ?? part;
    if (!MODIFIER_NAMES.has(name)) {
      throw new ActionError(
        "invalid-action",
        `Invalid "press" action: "${part}" in "${keys}" is not a modifier`,
      );
    }
    modifiers.push(name as Modifier);
  }
  const key = keyDefinition(last);
  if (!key) {
    throw new ActionError(
      "invalid-action",
      `Invalid "press" action: unknown key "${last}" in "${keys}"`,
    );
  }
  return { modifiers, key };
}

/** The CDP modifier bit mask of a set of modifiers. */
export function modifierMask(modifiers: readonly Modifier[]): number {
  let mask = 0;
  for (const modifier of modifiers) {
    mask |= modifier === "Alt" ? 1 : modifier === "Control" ? 2 : modifier === "Meta" ? 4 : 8;
  }
  return mask;
}
