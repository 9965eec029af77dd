/**
 * The action space: the actions an agent can take, their JSON Schema (for
 * LLM function calling and the server), and the one function that validates
 * untrusted input into an {@linkcode Action}.
 *
 * @module
 */
import { ActionError } from "./errors.ts";

/** A modifier key held during a pointer action or part of a chord. */
export type Modifier = "Alt" | "Control" | "Meta" | "Shift";

/** Every action, told apart by `action`. Element targets are observation ids. */
export type Action =
  | { action: "click"; id: number; button?: "left" | "right" | "middle"; modifiers?: Modifier[] }
  | { action: "dblclick"; id: number }
  | { action: "hover"; id: number }
  | { action: "type"; id: number; text: string; mode?: "replace" | "append"; enter?: boolean }
  | { action: "press"; keys: string; id?: number }
  | { action: "select"; id: number; option: string; by?: "label" | "value" }
  | { action: "check"; id: number }
  | { action: "uncheck"; id: number }
  | {
    action: "scroll";
    id?: number;
    direction?: "up" | "down" | "left" | "right";
    amount?: number;
  }
  | { action: "goto"; url: string }
  | { action: "back" }
  | { action: "forward" }
  | { action: "reload" }
  | { action: "switch_tab"; tab: number }
  | { action: "close_tab"; tab?: number }
  | { action: "upload"; id: number; files: string[] }
  | { action: "dialog"; accept: boolean; text?: string }
  | { action: "stop"; answer: string };

/** The name of an action, such as `"click"`. */
export type ActionName = Action["action"];

const id = { type: "integer", minimum: 1, description: "Element id from the observation" };

function variant(
  name: ActionName,
  description: string,
  properties: Record<string, unknown>,
  required: string[],
): Record<string, unknown> {
  return {
    type: "object",
    description,
    properties: { action: { const: name }, ...properties },
    required: ["action", ...required],
    additionalProperties: false,
  };
}

/**
 * The action space as a JSON Schema (draft 2020-12): one object per action,
 * told apart by the `action` property.
 */
export const ACTION_SCHEMA: Readonly<Record<string, unknown>> = {
  $schema: "https://json-schema.org/draft/2020-12/schema",
  title: "WebServ action",
  oneOf: [
    variant("click", "Click an element", {
      id,
      button: { enum: ["left", "right", "middle"], default: "left" },
      modifiers: {
        type: "array",
        items: { enum: ["Alt", "Control", "Meta", "Shift"] },
        uniqueItems: true,
      },
    }, ["id"]),
    variant("dblclick", "Double-click an element", { id }, ["id"]),
    variant("hover", "Move the mouse over an element", { id }, ["id"]),
    variant("type", "Type text into a field", {
      id,
      text: { type: "string", description: "At most 5000 characters" },
      mode: {
        enum: ["replace", "append"],
        default: "replace",
        description: "Replace the field's text or add to its end",
      },
      enter: { type: "boolean", default: false, description: "Press Enter afterwards" },
    }, ["id", "text"]),
    variant("press", "Press a key or chord, such as Enter or Control+A", {
      keys: { type: "string", minLength: 1 },
      id: { ...id, description: "Element to focus first (optional)" },
    }, ["keys"]),
    variant("select", "Choose an option of a select, listbox or combobox", {
      id,
      option: { type: "string" },
      by: { enum: ["label", "value"], default: "label" },
    }, ["id", "option"]),
    variant("check", "Check a checkbox, radio or switch (no-op when checked)", { id }, ["id"]),
    variant("uncheck", "Uncheck a checkbox or switch (no-op when unchecked)", { id }, ["id"]),
    variant("scroll", "Scroll the page or a container, or scroll an element into view", {
      id: { ...id, description: "Container to scroll, or element to bring into view" },
      direction: { enum: ["up", "down", "left", "right"] },
      amount: {
        type: "number",
        exclusiveMinimum: 0,
        description: "Pixels; default most of a view",
      },
    }, []),
    variant("goto", "Open a URL in the current tab", { url: { type: "string" } }, ["url"]),
    variant("back", "Go back in history", {}, []),
    variant("forward", "Go forward in history", {}, []),
    variant("reload", "Reload the page", {}, []),
    variant("switch_tab", "Switch to a tab", { tab: { type: "integer", minimum: 0 } }, ["tab"]),
    variant("close_tab", "Close a tab (the current one by default)", {
      tab: { type: "integer", minimum: 0 },
    }, []),
    variant("upload", "Set the files of a file input", {
      id,
      files: { type: "array", items: { type: "string" }, minItems: 1 },
    }, ["id", "files"]),
    variant("dialog", "Answer the open JavaScript dialog", {
      accept: { type: "boolean" },
      text: { type: "string", description: "The answer to a prompt" },
    }, ["accept"]),
    variant("stop", "End the episode with an answer", { answer: { type: "string" } }, ["answer"]),
  ],
};

const FIELDS: Record<ActionName, { required: string[]; optional: string[] }> = {
  click: { required: ["id"], optional: ["button", "modifiers"] },
  dblclick: { required: ["id"], optional: [] },
  hover: { required: ["id"], optional: [] },
  type: { required: ["id", "text"], optional: ["mode", "enter"] },
  press: { required: ["keys"], optional: ["id"] },
  select: { required: ["id", "option"], optional: ["by"] },
  check: { required: ["id"], optional: [] },
  uncheck: { required: ["id"], optional: [] },
  scroll: { required: [], optional: ["id", "direction", "amount"] },
  goto: { required: ["url"], optional: [] },
  back: { required: [], optional: [] },
  forward: { required: [], optional: [] },
  reload: { required: [], optional: [] },
  switch_tab: { required: ["tab"], optional: [] },
  close_tab: { required: [], optional: ["tab"] },
  upload: { required: ["id", "files"], optional: [] },
  dialog: { required: ["accept"], optional: ["text"] },
  stop: { required: ["answer"], optional: [] },
};

/** The names of every action, in schema order. */
export const ACTION_NAMES: readonly ActionName[] = Object.keys(FIELDS) as ActionName[];

const MODIFIERS = new Set<string>(["Alt", "Control", "Meta", "Shift"]);

function fail(name: string, message: string): never {
  throw new ActionError("invalid-action", `Invalid "${name}" action: ${message}`);
}

function show(value: unknown): string {
  return typeof value === "string" ? `"${value}"` : JSON.stringify(value) ?? String(value);
}

/**
 * Validates untrusted input (parsed JSON from an agent) into an action.
 *
 * @param input the candidate action
 * @returns the same object, typed
 * @throws {ActionError} `invalid-action` when the input is not a valid action; the message says
 *   which field and why
 *
 * @example Validate an agent's click
 * ```ts
 * import { parseAction } from "./action.ts";
 * const action = parseAction({ action: "click", id: 12 });
 * console.assert(action.action === "click");
 * ```
 */
export function parseAction(input: unknown): Action {
  if (typeof input !== "object" || input === null || Array.isArray(input)) {
    throw new ActionError(
      "invalid-action",
      `Invalid action: expected an object, got ${show(input)}`,
    );
  }
  const record = input as Record<string, unknown>;
  const name = record.action;
  if (typeof name !== "string" || !Object.hasOwn(FIELDS, name)) {
    throw new ActionError(
      "invalid-action",
      `Invalid action: "action" must be one of ${ACTION_NAMES.join(", ")}, got ${show(name)}`,
    );
  }
  const fields = FIELDS[name as ActionName];
  for (const key of Object.keys(record)) {
    if (key !== "action" && !fields.required.includes(key) && !fields.optional.includes(key)) {
      fail(name, `unknown field "${key}"`);
    }
  }
  for (const key of fields.required) {
    if (record[key] === undefined) fail(name, `"${key}" is required`);
  }
  const check = (key: string, ok: (value: unknown) => boolean, expected: string) => {
    const value = record[key];
    if (value !== undefined && !ok(value)) {
      fail(name, `"${key}" must be ${expected}, got ${show(value)}`);
    }
  };
  const positiveInt = (value: unknown) => Number.isInteger(value) && (value as number) >= 1;
  const index = (value: unknown) => Number.isInteger(value) && (value as number) >= 0;
  const string = (value: unknown) => typeof value === "string";
  const oneOf = (...values: string[]) => (value: unknown) => values.includes(value as string);
  check("id", positiveInt, "a positive integer");
  check("text", string, "a string");
  check("answer", string, "a string");
  check("option", string, "a string");
  check("url", (value) => typeof value === "string" && value.length > 0, "a non-empty string");
  check("keys", (value) => typeof value === "string" && value.length > 0, "a non-empty string");
  check("button", oneOf("left", "right", "middle"), `"left", "right" or "middle"`);
  check(
    "modifiers",
    (value) => Array.isArray(value) && value.every((item) => MODIFIERS.has(item as string)),
    "a list of Alt, Control, Meta, Shift",
  );
  check("mode", oneOf("replace", "append"), `"replace" or "append"`);
  check("enter", (value) => typeof value === "boolean", "a boolean");
  check("accept", (value) => typeof value === "boolean", "a boolean");
  check("by", oneOf("label", "value"), `"label" or "value"`);
  check("direction", oneOf("up", "down", "left", "right"), `"up", "down", "left" or "right"`);
  check(
    "amount",
    (value) => typeof value === "number" && Number.isFinite(value) && value > 0,
    "a positive number",
  );
  check("tab", index, "an integer >= 0");
  check(
    "files",
    (value) =>
      Array.isArray(value) && value.length > 0 &&
      value.every((item) => typeof item === "string" && item.length > 0),
    "a non-empty list of paths",
  );
  if (name === "scroll" && record.id === undefined && record.direction === undefined) {
    fail(name, `give "direction" to scroll the page, or "id" to scroll to an element`);
  }
  return record as Action;
}
