/**
 * The `select` and `check`/`uncheck` actions: a native `<select>` is set in
 * the page, any other option is clicked (its combobox or menu button opened
 * first, its search field typed into when the option is not listed yet); a checkbox, radio or switch is clicked, then read back.
 *
 * @module
 */
import { bestEffort } from "../log.ts";
import { CdpTimeoutError } from "../cdp/errors.ts";
import { ActionError } from "./errors.ts";
import type { ElementFacts } from "./_in_page.ts";
import type { ElementCalls, Ref } from "./_calls.ts";
import type { Pointer } from "./_pointer.ts";
import type { Keyboard } from "./_keyboard.ts";
import { TYPE_MAX_LENGTH } from "./_typing.ts";

/** What `select` and `check` act with. */
export interface ChooseTools {
  /** Finds the element and runs the in-page reads on it. */
  calls: ElementCalls;
  /** Clicks the control or its option. */
  pointer: Pointer;
  /** Types into a picker's search field to filter its options. */
  keyboard: Keyboard;
  /**
   * Lets the active tab settle for at most `capMs` (a menu opening, a
   * change handler running).
   *
   * @returns false when nothing could settle (no settler or no tab)
   */
  settle(capMs: number): Promise<boolean>;
}

/**
 * How long a menu may take to open or a handler to run; the action's own
 * settle waits for the rest.
 */
const BRIEF_SETTLE_MS = 2_000;

/**
 * Chooses an option of element `id`.
 *
 * @param tools what to act with
 * @param id the element the agent gave
 * @param option the option's label or value
 * @param by which of the two `option` is
 * @returns the option chosen
 * @throws {ActionError} `too-long` for an option longer than one `type`
 *   takes (no picker lists one, and it would be typed to filter),
 *   `option-not-found`, or what finding and clicking the element throws
 */
export async function selectOption(
  tools: ChooseTools,
  id: number,
  option: string,
  by: "label" | "value",
): Promise<string> {
  if (option.length > TYPE_MAX_LENGTH) {
    throw new ActionError(
      "too-long",
      `Cannot select an option of ${option.length} characters in element ${id}: the most one "select" takes is ${TYPE_MAX_LENGTH}`,
      { id },
    );
  }
  const { calls } = tools;
  const ref = await calls.element(id);
  const facts = await calls.ready(ref, id);
  const native = await calls.call(ref, "SELECT_NATIVE", option, by);
  if (native.kind === "done") return native.chosen;
  if (native.kind === "not-found") throw optionNotFound(id, option, by, native.options);
  // A label, a chosen item or a plain box that stands for a custom picker:
  // acted on and read back through the picker's face, opened like a combobox.
  const own = opens(facts);
  const face = own ? undefined : await calls.callForElement(ref, "PICKER_FACE");
  try {
    return await choose(tools, face ?? ref, id, option, by, own || face !== undefined);
  } finally {
    if (face) {
      bestEffort(
        "releasing a handle",
        face.session.send("Runtime.releaseObject", { objectId: face.objectId }),
      );
    }
  }
}

/**
 * Whether a click on the element itself opens its options: a combobox, or a
 * button by role or by tag (Headless UI's listbox is a native
 * `<button aria-haspopup="listbox">`, no role written).
 */
function opens(facts: ElementFacts): boolean {
  return facts.role === "combobox" || facts.role === "button" ||
    (facts.role === "" && facts.tag === "button");
}

/** Chooses the option of a custom picker: opened with a click when `open`, the option clicked, read back. */
async function choose(
  tools: ChooseTools,
  ref: Ref,
  id: number,
  option: string,
  by: "label" | "value",
  open: boolean,
): Promise<string> {
  const { calls, pointer, settle } = tools;
  const before = await calls.call(ref, "SHOWN_CHOICE", option);
  if (before.exact && by === "label") return `${option}; it was chosen already`;
  await calls.call(ref, "MARK_FOCUS");
  // ARIA: open a combobox with a click, then click the option.
  if (open) {
    await pointer.mouse(await pointer.point(ref, id), "click", "left", []);
    await settle(BRIEF_SETTLE_MS);
  }
  let found = await calls.callForElement(ref, "FIND_OPTION", option, by);
  if (!found && !open) {
    // No option shows and nothing said the element opens a list: a field
    // that opens one when clicked though it says nothing of it (Mantine's
    // Select is a read-only input) is clicked, as a person would. Typing to
    // filter follows a click of this action's own, and reaches only a field
    // of the picker's (`PICKER_FIELD`), never one the agent typed into before.
    await pointer.mouse(await pointer.point(ref, id), "click", "left", []);
    await settle(BRIEF_SETTLE_MS);
    found = await calls.callForElement(ref, "FIND_OPTION", option, by);
  }
  if (!found && by === "label") found = await filterFor(tools, ref, option);
  if (!found) {
    const labels = await calls.call(ref, "FIND_OPTION", option, by);
    throw optionNotFound(id, option, by, Array.isArray(labels) ? labels : []);
  }
  try {
    await pointer.mouse(await pointer.point(found, id), "click", "left", []);
  } finally {
    bestEffort(
      "releasing a handle",
      found.session.send("Runtime.releaseObject", { objectId: found.objectId }),
    );
  }
  return await chosen(tools, ref, id, option, before.mark);
}

/**
 * Reads a custom picker back after its option was clicked: the page's
 * result (what the control shows) is the judge, not whether the clicked
 * option survived (select2 chooses on mouseup and removes its list).
 *
 * @throws {ActionError} `value-not-set` when the control shows exactly what it showed before
 */
async function chosen(
  tools: ChooseTools,
  ref: Ref,
  id: number,
  option: string,
  before: string,
): Promise<string> {
  const read = () =>
    tools.calls.call(ref, "SHOWN_CHOICE", option).catch((error) => {
      // Re-rendered away by the choice: nothing is left to read.
      if (error instanceof ActionError && error.code === "stale-id") return undefined;
      throw error;
    });
  let after = await read();
  if (after && !after.shows && await tools.settle(BRIEF_SETTLE_MS)) after = await read();
  if (!after) return `${option}; the control was replaced, so not read back`;
  if (after.shows) return option;
  if (after.mark === before) {
    throw new ActionError(
      "value-not-set",
      `Element ${id}'s option "${option}" was clicked, but the control shows no change: the page did not take it`,
      { id },
    );
  }
  return `${option}; the control changed but does not show it`;
}

/**
 * A picker that lists its options only as a person types (a search box in
 * its dropdown, a combobox that filters or loads as it is typed into: AJAX
 * select2, Choices.js): types the option's label where the focus went when
 * the picker opened, lets the list load, and looks again.
 */
async function filterFor(
  tools: ChooseTools,
  ref: Ref,
  option: string,
): Promise<Awaited<ReturnType<ElementCalls["callForElement"]>>> {
  const { calls, keyboard, settle } = tools;
  const field = await calls.callForElement(ref, "PICKER_FIELD");
  if (!field) return undefined;
  try {
    await keyboard.typeText(option);
  } finally {
    bestEffort(
      "releasing a handle",
      field.session.send("Runtime.releaseObject", { objectId: field.objectId }),
    );
  }
  await settle(BRIEF_SETTLE_MS);
  return await calls.callForElement(ref, "FIND_OPTION", option, "label");
}

/** The error of an option the element does not have, listing the ones it has. */
function optionNotFound(id: number, option: string, by: string, options: string[]): ActionError {
  const list = options.length > 0 ? `; options: ${options.map((o) => `"${o}"`).join(", ")}` : "";
  return new ActionError(
    "option-not-found",
    `Element ${id} has no option with ${by} "${option}"${list}`,
    { id },
  );
}

/**
 * Checks or unchecks element `id` with a click, unless it already is.
 *
 * @param tools what to act with
 * @param id the element the agent gave
 * @param checked the state wanted
 * @returns whether anything changed, and how sure that is
 * @throws {ActionError} `not-editable`, `value-not-set`, or what finding and
 *   clicking the element throws
 */
export async function setChecked(
  tools: ChooseTools,
  id: number,
  checked: boolean,
): Promise<string> {
  const { calls, pointer, settle } = tools;
  const ref = await calls.element(id);
  const facts = await calls.ready(ref, id);
  if (facts.checked === null) {
    throw new ActionError(
      "not-editable",
      `Element ${id} (${facts.name}) is not a checkbox, radio button or switch`,
      { id },
    );
  }
  if (facts.checked === checked) return "unchanged";
  const radio = facts.type === "radio" || facts.role === "radio" ||
    facts.role === "menuitemradio";
  if (!checked && radio) {
    throw new ActionError(
      "not-editable",
      `Element ${id} (${facts.name}) is a radio button: check another option instead`,
      { id },
    );
  }
  await pointer.mouse(await pointer.point(ref, id), "click", "left", []);
  // Read the state back: a click on a stand-in the page does not wire to
  // its input, or a handler that undoes the change, leaves it as it was.
  let after: ElementFacts;
  try {
    after = await calls.call(ref, "FACTS");
    if (after.state !== "stale" && after.checked !== checked && await settle(BRIEF_SETTLE_MS)) {
      after = await calls.call(ref, "FACTS");
    }
  } catch (error) {
    // The click navigated (a form that submits on change): its document is gone.
    if (error instanceof ActionError || error instanceof CdpTimeoutError) throw error;
    return "changed; the page moved on, so not read back";
  }
  // Re-rendered away by the click (a ticked item moving to another list):
  // nothing is left to read.
  if (after.state === "stale") return "changed; the element was replaced, so not read back";
  // A role without aria-checked keeps its state where nothing can read it.
  if (!facts.checkedShown && !after.checkedShown) return "clicked; its state is not shown";
  if (after.checked !== checked) {
    throw new ActionError(
      "value-not-set",
      `Element ${id} (${facts.name}) is still ${
        checked ? "unchecked" : "checked"
      } after a click on it: the page did not take the click`,
      { id },
    );
  }
  return "changed";
}
