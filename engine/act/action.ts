/**
 * The action space, declared once as zod schemas ({@linkcode ACTIONS}):
 * the {@linkcode Action} type, the parser ({@linkcode parseAction}), the JSON
 * Schema ({@linkcode ACTION_SCHEMA}), the LLM tool schemas (`tools.ts`), the
 * server's OpenAPI entry and both clients' types are derived from it.
 *
 * @module
 */
// A full specifier: the engine is imported by path from projects with no
// deno.json of ours (test/mod_test.ts), so it cannot use the import map.
// deno-lint-ignore no-import-prefix
import { z } from "npm:zod@4.6.7";
import { ActionError } from "./errors.ts";
import { TYPE_MAX_LENGTH } from "./_typing.ts";

/** A modifier key held during a pointer action or part of a chord. */
export type Modifier = "Alt" | "Control" | "Meta" | "Shift";

const MODIFIER_NAMES: readonly [Modifier, ...Modifier[]] = ["Alt", "Control", "Meta", "Shift"];

/**
 * Every action, told apart by `action`. Element targets are observation ids.
 * Spelled out for readers and the docs; {@linkcode ACTIONS} is the
 * declaration, and `deno check` fails when this type and the schemas'
 * inferred type differ (see `SameAsDeclared` below).
 */
export type Action =
  | { action: "click"; id: number; button?: "left" | "right" | "middle"; modifiers?: Modifier[] }
  | { action: "dblclick"; id: number }
  | { action: "hover"; id: number }
  | { action: "drag"; id: number; to?: number; dx?: number; dy?: number }
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

/**
 * The schema of one action (what it parses to is `Extract<Action, { action: N }>`,
 * as `deno check` verifies).
 */
export type ActionSchemaOf<N extends ActionName> = z.ZodType;

const id = z.int().min(1).describe("Element id from the observation");
const tab = z.int().min(0);

/** One action's schema: `action` set to its name, no other fields than `shape`'s. */
function variant<N extends string, S extends z.ZodRawShape>(
  name: N,
  description: string,
  shape: S,
) {
  return z.strictObject({ action: z.literal(name), ...shape }).describe(description);
}

const DECLARED = {
  click: variant("click", "Click an element", {
    id,
    button: z.enum(["left", "right", "middle"]).meta({ default: "left" }).optional(),
    modifiers: z.array(z.enum(MODIFIER_NAMES))
      .refine((list) => new Set(list).size === list.length, "no modifier twice")
      .meta({ uniqueItems: true })
      .optional(),
  }),
  dblclick: variant("dblclick", "Double-click an element", { id }),
  hover: variant("hover", "Move the mouse over an element", { id }),
  drag: variant("drag", "Drag an element onto another element, or by an offset in pixels", {
    id,
    to: id.describe("Element to drop it on").optional(),
    dx: z.number().describe("Pixels to the right (negative: left)").optional(),
    dy: z.number().describe("Pixels down (negative: up)").optional(),
  }).refine(
    (action) => (action.to !== undefined) !== (action.dx !== undefined || action.dy !== undefined),
    'give "to" (the element to drop on) or "dx"/"dy" (an offset), not both',
  ),
  type: variant("type", "Type text into a field", {
    id,
    text: z.string().describe(`At most ${TYPE_MAX_LENGTH} characters`),
    mode: z.enum(["replace", "append"])
      .meta({ default: "replace" })
      .describe("Replace the field's text or add to its end")
      .optional(),
    enter: z.boolean().meta({ default: false }).describe("Press Enter afterwards").optional(),
  }),
  press: variant("press", "Press a key or chord, such as Enter or Control+A", {
    keys: z.string().min(1),
    id: id.describe("Element to focus first (optional)").optional(),
  }),
  select: variant("select", "Choose an option of a select, listbox or combobox", {
    id,
    option: z.string(),
    by: z.enum(["label", "value"]).meta({ default: "label" }).optional(),
  }),
  check: variant("check", "Check a checkbox, radio or switch (no-op when checked)", { id }),
  uncheck: variant("uncheck", "Uncheck a checkbox or switch (no-op when unchecked)", { id }),
  scroll: variant("scroll", "Scroll the page or a container, or scroll an element into view", {
    id: id.describe("Container to scroll, or element to bring into view").optional(),
    direction: z.enum(["up", "down", "left", "right"]).optional(),
    amount: z.number().gt(0).describe("Pixels; default most of a view").optional(),
  }).refine(
    (action) => action.id !== undefined || action.direction !== undefined,
    'give "direction" to scroll the page, or "id" to scroll to an element',
  ),
  goto: variant("goto", "Open a URL in the current tab", { url: z.string().min(1) }),
  back: variant("back", "Go back in history", {}),
  forward: variant("forward", "Go forward in history", {}),
  reload: variant("reload", "Reload the page", {}),
  switch_tab: variant("switch_tab", "Switch to a tab", { tab }),
  close_tab: variant("close_tab", "Close a tab (the current one by default)", {
    tab: tab.optional(),
  }),
  upload: variant("upload", "Set the files of a file input", {
    id,
    files: z.array(z.string().min(1)).min(1),
  }),
  dialog: variant("dialog", "Answer the open JavaScript dialog", {
    accept: z.boolean(),
    text: z.string().describe("The answer to a prompt").optional(),
  }),
  stop: variant("stop", "End the episode with an answer", { answer: z.string() }),
} as const;

// Fails `deno check` when the spelled-out `Action` and the declaration differ.
// (zod types an optional field `T | undefined`; `exactOptionalPropertyTypes` tells them apart.)
type Exact<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
type Defined<T> = T extends unknown ? { [K in keyof T]: Exclude<T[K], undefined> } : never;
type Inferred = { -readonly [N in keyof typeof DECLARED]: z.output<typeof DECLARED[N]> };
type SameAsDeclared = Exact<Defined<Inferred[keyof Inferred]>, Defined<Action>>;
const sameAsDeclared: SameAsDeclared = true;
void sameAsDeclared;

/**
 * Every action's schema, by name, in the order agents see them: the one
 * declaration of the action space.
 */
export const ACTIONS: { readonly [N in ActionName]: ActionSchemaOf<N> } = DECLARED;

/** The names of every action, in schema order. */
export const ACTION_NAMES: readonly ActionName[] = Object.keys(ACTIONS) as ActionName[];

/** The whole action space as one zod schema: one object per action, told apart by `action`. */
export const ACTION: z.ZodType<Action> = z.union(Object.values(ACTIONS)) as z.ZodType<Action>;

/** Drops what zod adds that says nothing (the bounds of a safe integer). */
function tidySchema(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(tidySchema);
  if (typeof node !== "object" || node === null) return node;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node)) {
    if ((key === "maximum" || key === "minimum") && Math.abs(value as number) >= 2 ** 53 - 1) {
      continue;
    }
    out[key] = tidySchema(value);
  }
  return out;
}

/** One action's JSON Schema. */
function jsonSchemaOf(name: ActionName): Record<string, unknown> {
  const { $schema: _, ...schema } = z.toJSONSchema(ACTIONS[name], { io: "input" });
  return tidySchema(schema) as Record<string, unknown>;
}

/**
 * The action space as a JSON Schema (draft 2020-12): one object per action,
 * told apart by the `action` property. Derived from {@linkcode ACTIONS}.
 */
export const ACTION_SCHEMA: Readonly<Record<string, unknown>> = {
  $schema: "https://json-schema.org/draft/2020-12/schema",
  title: "WebServ action",
  oneOf: ACTION_NAMES.map(jsonSchemaOf),
};

function show(value: unknown): string {
  return typeof value === "string" ? `"${value}"` : JSON.stringify(value) ?? String(value);
}

/** What a field takes, in words, from its JSON Schema. */
function expected(schema: Record<string, unknown>): string {
  const values = schema.enum as unknown[] | undefined;
  if (values) return `one of ${values.map(show).join(", ")}`;
  switch (schema.type) {
    case "integer":
      return schema.minimum === 1
        ? "a positive integer"
        : `an integer >= ${schema.minimum ?? "any"}`;
    case "number":
      return schema.exclusiveMinimum === 0 ? "a positive number" : "a number";
    case "string":
      return schema.minLength === 1 ? "a non-empty string" : "a string";
    case "boolean":
      return "a boolean";
    case "array": {
      const items = schema.items as Record<string, unknown>;
      const each = items.enum ? (items.enum as unknown[]).join(", ") : expected(items);
      return `a ${schema.minItems === 1 ? "non-empty " : ""}list of ${each}${
        schema.uniqueItems ? ", each once" : ""
      }`;
    }
    default:
      return "valid";
  }
}

function fail(name: string, message: string): never {
  throw new ActionError("invalid-action", `Invalid "${name}" action: ${message}`);
}

/**
 * Validates untrusted input (parsed JSON from an agent) into an action,
 * against {@linkcode ACTIONS}.
 *
 * @param input the candidate action
 * @returns the action, typed
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
  if (typeof name !== "string" || !Object.hasOwn(ACTIONS, name)) {
    throw new ActionError(
      "invalid-action",
      `Invalid action: "action" must be one of ${ACTION_NAMES.join(", ")}, got ${show(name)}`,
    );
  }
  const schema = ACTIONS[name as ActionName];
  const parsed = schema.safeParse(record);
  if (parsed.success) return parsed.data as Action;
  const issue = parsed.error.issues[0]!;
  if (issue.code === "unrecognized_keys") fail(name, `unknown field "${issue.keys[0]}"`);
  const key = issue.path[0];
  if (typeof key !== "string") fail(name, issue.message);
  if (record[key] === undefined) fail(name, `"${key}" is required`);
  const field = (jsonSchemaOf(name as ActionName).properties as Record<string, unknown>)[key];
  fail(
    name,
    `"${key}" must be ${expected(field as Record<string, unknown>)}, got ${show(record[key])}`,
  );
}
