/**
 * The `type` action: fills a field as `_typing.ts` describes (keys, inserted
 * runs, or the value setter for dates and ranges), follows the focus when
 * the field or a stand-in for it is replaced as it takes focus, and succeeds
 * only when the field reads back holding the text.
 *
 * @module
 */
import { bestEffort } from "../log.ts";
import { ActionError } from "./errors.ts";
import { EXAMPLES, isDateLike, toInputValue } from "./_dates.ts";
import { keyDefinition } from "./_keys.ts";
import {
  consumed,
  expectedValue,
  type FieldWatch,
  formatOf,
  holds,
  isSettable,
  quoteHeld,
  TYPE_MAX_LENGTH,
} from "./_typing.ts";
import type { ElementCalls, Ref } from "./_calls.ts";
import type { Pointer } from "./_pointer.ts";
import type { Keyboard } from "./_keyboard.ts";

/** Elements that may stand in for a field until clicked (then `type` follows the focus). */
const STAND_IN_TAGS = /^(div|span|p|li|section|article|td)$/;

/** What the `type` action acts with. */
export interface TypeTools {
  /** Finds the field and runs the in-page reads and writes on it. */
  calls: ElementCalls;
  /** Clicks the field to focus it. */
  pointer: Pointer;
  /** Clears the field and types the text. */
  keyboard: Keyboard;
}

/**
 * Types `text` into element `id` and reads it back.
 *
 * @param tools what to act with
 * @param id the element the agent gave
 * @param text what to type
 * @param mode whether the text replaces the field's value or is added after it
 * @param enter whether to press Enter afterwards
 * @returns a note when the field took the text some other way (tags, a change handler)
 * @throws {ActionError} `too-long`, `not-editable`, `value-not-set`, or what
 *   finding and clicking the field throws
 */
export async function typeInto(
  tools: TypeTools,
  id: number,
  text: string,
  mode: "replace" | "append",
  enter: boolean,
): Promise<string | undefined> {
  const { calls, pointer, keyboard } = tools;
  if (text.length > TYPE_MAX_LENGTH) {
    throw new ActionError(
      "too-long",
      `Cannot type ${text.length} characters into element ${id}: the most one "type" takes is ${TYPE_MAX_LENGTH}`,
      { id },
    );
  }
  const ref = await calls.element(id);
  const facts = await calls.ready(ref, id);
  // A plain element standing in for a field ("Add a comment…") becomes one
  // when clicked: type into whatever field the click focused.
  const standIn = !facts.editable && !facts.readonly && STAND_IN_TAGS.test(facts.tag) &&
    /^(|textbox|searchbox)$/.test(facts.role);
  if (!facts.editable && !standIn) {
    const why = facts.readonly ? "is read-only" : "does not take text";
    throw new ActionError("not-editable", `Element ${id} (${facts.name}) ${why}`, { id });
  }
  const notSet = (message: string) => new ActionError("value-not-set", message, { id });
  // Focus the way a person does, with a click; focus() only if that did not. Where the
  // focus is inside the field already, a person types on: a click would move the caret
  // and drop what the editor keeps at it (a pending Bold, a list just toggled).
  const focus = facts.editable ? await calls.call(ref, "FOCUS_STATE") : "outside";
  if (focus === "outside") await pointer.mouse(await pointer.point(ref, id), "click", "left", []);
  let target = ref;
  let field = await calls.call(ref, "FIELD_STATE");
  if (standIn) {
    const focused = await calls.callForElement(ref, "FOCUSED_EDITABLE");
    if (!focused) {
      throw new ActionError(
        "not-editable",
        `Element ${id} (${facts.name}) does not take text, and clicking it focused no field`,
        { id },
      );
    }
    target = focused;
    field = await calls.call(target, "FIELD_STATE");
  } else if (field.connected && field.disabled) {
    throw notSet(`Element ${id} (${facts.name}) became disabled when it took focus`);
  }
  if (target === ref && (!field.connected || !await calls.call(ref, "FOCUS"))) {
    // Replaced (or hidden behind a new field) as it took focus: keys go to
    // whatever editable has focus now, as they would for a person.
    const focused = await calls.callForElement(ref, "FOCUSED_EDITABLE");
    if (!focused) {
      if (!field.connected) {
        throw notSet(
          `Element ${id} (${facts.name}) was replaced when it took focus, and no field has focus: observe again`,
        );
      }
      throw new ActionError("not-editable", `Element ${id} (${facts.name}) cannot take focus`, {
        id,
      });
    }
    target = focused;
    field = await calls.call(target, "FIELD_STATE");
  }
  let detail: string | undefined;
  let watcher: string | undefined;
  try {
    const settable = isSettable(field.type);
    let expected = settable
      ? text
      : expectedValue(field.value ?? field.text ?? "", text, mode, field.tag);
    if (isDateLike(field.type)) {
      // What a person types ("8:22 AM", "09/10/2012") read in the page's locale.
      const locale = await calls.call(target, "PAGE_LOCALE");
      const value = toInputValue(field.type, text, locale);
      if (value === undefined) {
        throw notSet(
          `Element ${id} (${facts.name}) cannot read "${text}" as a ${field.type}: type it as ${
            formatOf(field.type)
          }, or as a person writes it in the page's locale (${locale}), such as ${
            EXAMPLES[field.type]
          }`,
        );
      }
      expected = value;
      if (value !== text) detail = `read "${text}" as ${value}`;
    }
    if (settable) {
      await calls.call(target, "SET_VALUE", expected);
    } else {
      if (mode === "replace") {
        if (await calls.call(target, "HAS_TEXT")) {
          // A contenteditable's own contents, selected in the DOM: Control+A
          // there may select beyond the field (Gutenberg: all blocks).
          const how = await calls.call(target, "SELECT_CONTENTS")
            ? "its contents selected, then Backspace"
            : "Control+A, then Backspace";
          if (how.startsWith("Control")) await keyboard.chord(["Control"], keyDefinition("a")!);
          await keyboard.chord([], keyDefinition("Backspace")!);
          // The page may delete the element itself rather than its text.
          const gone = await calls.call(target, "FIELD_STATE").then(
            (state) => !state.connected,
            (error) => {
              if (error instanceof ActionError && error.code === "stale-id") return true;
              throw error;
            },
          );
          if (gone) {
            throw notSet(
              `Element ${id} (${facts.name}) was removed from the page when its text was cleared (${how}), and nothing was typed: observe again, or type with mode "append"`,
            );
          }
        }
      } else if (target !== ref || focus !== "at-end") {
        await calls.call(target, "CARET_TO_END");
      }
      watcher = await watch(calls, target);
      await keyboard.typeText(text);
    }
    let after = await calls.call(target, "FIELD_STATE");
    // A tag or chip input that turned the text into tags and cleared itself.
    const seen = watcher !== undefined ? await unwatch(calls, target, watcher) : undefined;
    watcher = undefined;
    const tags = seen && !holds(after, expected) && after.connected && !after.disabled
      ? consumed(expected, after.value ?? after.text ?? "", seen)
      : null;
    if (tags) {
      detail = tags.length > 0
        ? `the field turned the text into ${tags.map((tag) => `"${tag}"`).join(", ")} and holds ${
          quoteHeld(after)
        }`
        : `the field took the text, fired change and holds ${quoteHeld(after)}`;
    } else if (!holds(after, expected)) {
      if (!after.connected) {
        throw notSet(`Element ${id} (${facts.name}) was removed from the page while typing`);
      }
      if (after.disabled) {
        throw notSet(`Element ${id} (${facts.name}) became disabled while typing`);
      }
      if (after.maxLength >= 0 && expected.length > after.maxLength) {
        throw notSet(
          `Element ${id} (${facts.name}) takes at most ${after.maxLength} characters and holds ${
            quoteHeld(after)
          }`,
        );
      }
      // Keys did not take (a field that filters or rebuilds its value):
      // set it the way a framework listens for, once.
      if (after.value !== null && !settable) {
        await calls.call(target, "SET_VALUE", expected);
        after = await calls.call(target, "FIELD_STATE");
      }
      if (!holds(after, expected)) {
        const format = formatOf(after.type);
        const asked = text.length > 40 ? `${text.slice(0, 39)}…` : text;
        throw notSet(
          `Element ${id} (${facts.name}) holds ${quoteHeld(after)} after typing "${asked}"${
            format ? `: a ${after.type} field takes ${format}` : ""
          }`,
        );
      }
    }
  } finally {
    if (watcher !== undefined) {
      bestEffort("stopping a field watch", unwatch(calls, target, watcher));
    }
    if (target !== ref && "objectId" in target) {
      const { objectId } = target;
      bestEffort(
        "releasing a handle",
        target.session.send("Runtime.releaseObject", { objectId }),
      );
    }
  }
  if (enter) await keyboard.chord([], keyDefinition("Enter")!);
  return detail;
}

/** Starts watching a field being typed into; returns the watcher's handle. */
async function watch(calls: ElementCalls, target: Ref): Promise<string | undefined> {
  const { result } = await calls.invoke(target, "WATCH_FIELD", [], false);
  return result.objectId;
}

/** Stops a field watch; returns what it saw, or nothing when the page went away. */
async function unwatch(
  calls: ElementCalls,
  target: Ref,
  watcher: string,
): Promise<FieldWatch | undefined> {
  try {
    return await calls.call({ session: target.session, objectId: watcher }, "READ_WATCH");
  } catch (error) {
    if (error instanceof ActionError) throw error;
    return undefined;
  } finally {
    bestEffort(
      "releasing a handle",
      target.session.send("Runtime.releaseObject", { objectId: watcher }),
    );
  }
}
