import { assertEquals, assertThrows } from "@std/assert";
import { ActionError } from "../../../engine/act/errors.ts";
import {
  type Action,
  ACTION_NAMES,
  ACTION_SCHEMA,
  parseAction,
} from "../../../engine/act/action.ts";
import { actionTools, parseToolCall, type ToolSchema } from "../../../engine/act/tools.ts";

/**
 * The JSON Schema subset OpenAI's strict mode and Anthropic's strict tool use
 * document, checked together (the stricter rule wins):
 * - the root is `type: "object"`, with no `anyOf`/`oneOf`/`allOf` beside it;
 * - every object lists every property in `required` and sets `additionalProperties: false`;
 * - keywords outside the supported list are rejected: `oneOf`, `allOf`, `not`, `if`, `const`
 *   where unsupported, `default`, `patternProperties`, `minProperties`, string
 *   `minLength`/`maxLength`, numeric `minimum`/`maximum`/`multipleOf` (Anthropic), `uniqueItems`,
 *   `contains`, and `minItems` other than 0 or 1 (Anthropic);
 * - at most 10 levels of nesting, 5000 properties, 1000 enum values (OpenAI);
 * - an `enum` of a nullable type lists `null`; types are from the JSON type list.
 */
function strictProblems(root: ToolSchema): string[] {
  const problems: string[] = [];
  if (root.type !== "object") problems.push(`root: type must be "object"`);
  for (const key of ["anyOf", "oneOf", "allOf", "not"]) {
    if (key in root) problems.push(`root: "${key}" is not allowed at the top`);
  }
  const allowed = new Set([
    "type",
    "description",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "enum",
    "anyOf",
    "minItems",
    "title",
  ]);
  const types = new Set(["string", "number", "integer", "boolean", "object", "array", "null"]);
  let propertyCount = 0;
  const walk = (schema: ToolSchema, path: string, depth: number) => {
    if (depth > 10) problems.push(`${path}: nested deeper than 10 levels`);
    for (const key of Object.keys(schema)) {
      if (!allowed.has(key)) problems.push(`${path}: keyword "${key}" is not supported`);
    }
    const typeList = Array.isArray(schema.type) ? schema.type : [schema.type];
    if (schema.anyOf === undefined) {
      for (const type of typeList) {
        if (!types.has(type as string)) problems.push(`${path}: bad type ${JSON.stringify(type)}`);
      }
    }
    if (Array.isArray(schema.enum)) {
      if (schema.enum.length > 1000) problems.push(`${path}: more than 1000 enum values`);
      if (typeList.includes("null") && !schema.enum.includes(null)) {
        problems.push(`${path}: a nullable enum must list null`);
      }
    }
    if (schema.minItems !== undefined && schema.minItems !== 0 && schema.minItems !== 1) {
      problems.push(`${path}: minItems must be 0 or 1`);
    }
    if (typeList.includes("object")) {
      const properties = (schema.properties ?? {}) as Record<string, ToolSchema>;
      const keys = Object.keys(properties);
      propertyCount += keys.length;
      if (schema.additionalProperties !== false) {
        problems.push(`${path}: additionalProperties must be false`);
      }
      const required = (schema.required ?? []) as string[];
      for (const key of keys) {
        if (!required.includes(key)) problems.push(`${path}: "${key}" is not required`);
      }
      for (const key of required) {
        if (!keys.includes(key)) problems.push(`${path}: required "${key}" is not a property`);
      }
      for (const key of keys) walk(properties[key]!, `${path}.${key}`, depth + 1);
    }
    if (typeList.includes("array")) {
      if (typeof schema.items !== "object") problems.push(`${path}: an array needs items`);
      else walk(schema.items as ToolSchema, `${path}[]`, depth + 1);
    }
    if (Array.isArray(schema.anyOf)) {
      (schema.anyOf as ToolSchema[]).forEach((branch, index) =>
        walk(branch, `${path}|${index}`, depth + 1)
      );
    }
  };
  walk(root, "$", 1);
  if (propertyCount > 5000) problems.push("more than 5000 properties");
  return problems;
}

const NAME = /^[a-zA-Z0-9_-]{1,64}$/;

function schemasOf(): { label: string; name: string; schema: ToolSchema }[] {
  const out: { label: string; name: string; schema: ToolSchema }[] = [];
  for (const style of ["per-action", "single"] as const) {
    for (const tool of actionTools("openai", { style })) {
      assertEquals(tool.type, "function");
      assertEquals(tool.function.strict, true);
      out.push({
        label: `openai ${style}`,
        name: tool.function.name,
        schema: tool.function.parameters,
      });
    }
    for (const tool of actionTools("anthropic", { style })) {
      out.push({ label: `anthropic ${style}`, name: tool.name, schema: tool.input_schema });
    }
  }
  return out;
}

Deno.test("strictProblems() rejects the raw ACTION_SCHEMA, a top-level oneOf", () => {
  const problems = strictProblems(ACTION_SCHEMA as ToolSchema);
  assertEquals(problems.includes(`root: type must be "object"`), true);
  assertEquals(problems.includes(`root: "oneOf" is not allowed at the top`), true);
});

Deno.test("actionTools() returns schemas in the strict subset when in every format and style", () => {
  for (const { label, name, schema } of schemasOf()) {
    assertEquals(strictProblems(schema), [], `${label} ${name}`);
    assertEquals(NAME.test(name), true, `${label}: bad tool name "${name}"`);
  }
});

Deno.test("actionTools() returns one tool per action when the style is per-action", () => {
  assertEquals(actionTools("openai").map((tool) => tool.function.name), [...ACTION_NAMES]);
  assertEquals(actionTools("anthropic").map((tool) => tool.name), [...ACTION_NAMES]);
  const single = actionTools("anthropic", { style: "single", name: "browser" });
  assertEquals(single.map((tool) => tool.name), ["browser"]);
  assertEquals(
    (single[0]!.input_schema.properties as Record<string, ToolSchema>).action!.enum,
    [...ACTION_NAMES],
  );
});

Deno.test("actionTools() throws a TypeError when the format or style is unknown", () => {
  assertThrows(() => actionTools("gemini" as "openai"), TypeError, 'Unknown tool format "gemini"');
  assertThrows(
    () => actionTools("openai", { style: "many" as "single" }),
    TypeError,
    'Unknown tool style "many"',
  );
});

/** A call a strict-mode model could produce: every property present, null where not used. */
function generatedCall(schema: ToolSchema, action: Action): Record<string, unknown> {
  const call: Record<string, unknown> = {};
  for (const key of Object.keys(schema.properties as ToolSchema)) {
    call[key] = (action as Record<string, unknown>)[key] ?? null;
  }
  return call;
}

const SAMPLES: Action[] = [
  { action: "click", id: 3, button: "right", modifiers: ["Shift"] },
  { action: "click", id: 4 },
  { action: "dblclick", id: 5 },
  { action: "hover", id: 6 },
  { action: "drag", id: 6, to: 7 },
  { action: "drag", id: 6, dx: 40, dy: -10 },
  { action: "type", id: 7, text: "hello", mode: "append", enter: true },
  { action: "press", keys: "Control+A", id: 8 },
  { action: "select", id: 9, option: "Red", by: "value" },
  { action: "check", id: 10 },
  { action: "uncheck", id: 11 },
  { action: "scroll", direction: "down", amount: 300 },
  { action: "scroll", id: 12 },
  { action: "goto", url: "http://a.localhost/" },
  { action: "back" },
  { action: "forward" },
  { action: "reload" },
  { action: "switch_tab", tab: 1 },
  { action: "close_tab" },
  { action: "upload", id: 13, files: ["a.txt"] },
  { action: "dialog", accept: false, text: "no" },
  { action: "stop", answer: "42" },
];

Deno.test("parseToolCall() returns the action when a generated call of each action comes back", () => {
  assertEquals(new Set(SAMPLES.map((sample) => sample.action)), new Set(ACTION_NAMES));
  const perAction = new Map(actionTools("openai").map((tool) => [tool.function.name, tool]));
  const [single] = actionTools("anthropic", { style: "single" });
  for (const sample of SAMPLES) {
    const tool = perAction.get(sample.action)!;
    const { action: _action, ...fields } = sample as Record<string, unknown>;
    const args = generatedCall(tool.function.parameters, fields as Action);
    assertEquals(parseToolCall(tool.function.name, JSON.stringify(args)), sample);
    assertEquals(parseToolCall(single!.name, generatedCall(single!.input_schema, sample)), sample);
    assertEquals(parseAction(sample), sample);
  }
});

Deno.test("parseToolCall() throws an ActionError when the call is not an action", () => {
  assertThrows(() => parseToolCall("jump", {}), ActionError, 'Unknown tool "jump"');
  assertThrows(() => parseToolCall("click", "{"), ActionError, "not JSON");
  assertThrows(() => parseToolCall("click", "[]"), ActionError, "must be an object");
  assertThrows(() => parseToolCall("click", { id: 0 }), ActionError, '"id" must be a positive');
  assertThrows(() => parseToolCall("click", { action: "hover", id: 1 }), ActionError, '"action"');
  assertThrows(
    () => parseToolCall("act", { action: null }),
    ActionError,
    '"action" must be one of',
  );
});
