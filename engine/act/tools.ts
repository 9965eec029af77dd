/**
 * Tool definitions for LLM function calling: the action space in the shapes
 * OpenAI's and Anthropic's tool APIs accept, and the way back from a tool call
 * to an {@linkcode Action}.
 *
 * {@linkcode ACTION_SCHEMA} is plain JSON Schema (a top-level `oneOf`), which
 * those APIs reject. The tools here are derived from it and kept inside the
 * subset both APIs document for strict mode
 * (https://platform.openai.com/docs/guides/structured-outputs#supported-schemas,
 * https://docs.claude.com/en/docs/build-with-claude/structured-outputs):
 * `type: "object"` at the top and no top-level `oneOf`/`anyOf`, every property
 * listed in `required` (an optional one is nullable instead), and
 * `additionalProperties: false` on every object. Keywords one of the two
 * rejects (`minimum`, `minLength`, `uniqueItems`, `default`, `const`) are
 * turned into words in the description; {@linkcode parseToolCall} enforces
 * them through {@linkcode parseAction}.
 *
 * @module
 */
import { type Action, ACTION_SCHEMA, type ActionName, parseAction } from "./action.ts";
import { ActionError } from "./errors.ts";

/** A JSON Schema object, as the tool APIs take it. */
export type ToolSchema = { [key: string]: unknown };

/** A tool in the shape of OpenAI's Chat Completions `tools` list. */
export interface OpenAiTool {
  /** Always `"function"`. */
  type: "function";
  /** The function: its name, what it does, and its arguments. */
  function: {
    /** The tool's name: an action name, or the single tool's name. */
    name: string;
    /** What the tool does. */
    description: string;
    /** The arguments' schema, an object schema in the strict-mode subset. */
    parameters: ToolSchema;
    /** Always `true`: the schema fits strict mode. */
    strict: true;
  };
}

/** A tool in the shape of Anthropic's Messages API `tools` list. */
export interface AnthropicTool {
  /** The tool's name: an action name, or the single tool's name. */
  name: string;
  /** What the tool does. */
  description: string;
  /** The input's schema, an object schema in the strict-mode subset. */
  input_schema: ToolSchema;
}

/** Options of {@linkcode actionTools} and {@linkcode parseToolCall}. */
export interface ActionToolsOptions {
  /**
   * `"per-action"`: one tool per action, named after it (`click`, `type`…).
   * `"single"`: one tool whose `action` field names the action.
   *
   * @default {"per-action"}
   */
  style?: "per-action" | "single";
  /**
   * The name of the single tool (style `"single"`).
   *
   * @default {"act"}
   */
  name?: string;
}

/** The default name of the single tool. */
const SINGLE_NAME = "act";

interface Variant {
  name: ActionName;
  description: string;
  properties: Record<string, ToolSchema>;
  required: string[];
}

function variants(): Variant[] {
  return (ACTION_SCHEMA.oneOf as ToolSchema[]).map((variant) => {
    const { action: _action, ...properties } = variant.properties as Record<string, ToolSchema>;
    const action = (variant.properties as Record<string, ToolSchema>).action!;
    return {
      name: action.const as ActionName,
      description: String(variant.description),
      properties,
      required: (variant.required as string[]).filter((key) => key !== "action"),
    };
  });
}

function jsonType(value: unknown): string {
  if (typeof value === "string") return "string";
  if (typeof value === "boolean") return "boolean";
  if (Number.isInteger(value)) return "integer";
  return "number";
}

/** Rewrites one property schema into the strict subset; constraints become words. */
function strict(schema: ToolSchema, nullable: boolean): ToolSchema {
  const notes: string[] = [];
  const out: ToolSchema = {};
  let type = schema.type as string | undefined;
  let values = schema.enum as unknown[] | undefined;
  if (schema.const !== undefined) values = [schema.const];
  if (type === undefined && values !== undefined) type = jsonType(values[0]);
  if (type === undefined) throw new TypeError(`Cannot derive a tool schema: no type in a property`);
  if (typeof schema.minimum === "number") notes.push(`at least ${schema.minimum}`);
  if (typeof schema.exclusiveMinimum === "number") {
    notes.push(`greater than ${schema.exclusiveMinimum}`);
  }
  if (typeof schema.maximum === "number") notes.push(`at most ${schema.maximum}`);
  if (schema.minLength === 1) notes.push("not empty");
  else if (typeof schema.minLength === "number") {
    notes.push(`at least ${schema.minLength} characters`);
  }
  if (typeof schema.maxLength === "number") notes.push(`at most ${schema.maxLength} characters`);
  if (typeof schema.maxItems === "number") notes.push(`at most ${schema.maxItems} items`);
  if (schema.uniqueItems === true) notes.push("no repeats");
  if (schema.default !== undefined) notes.push(`default ${JSON.stringify(schema.default)}`);
  if (nullable) notes.push("null to leave out");
  out.type = nullable ? [type, "null"] : type;
  if (values !== undefined) out.enum = nullable ? [...values, null] : [...values];
  if (type === "array") {
    out.items = strict(schema.items as ToolSchema, false);
    const min = schema.minItems;
    if (min === 0 || min === 1) out.minItems = min;
    else if (typeof min === "number") notes.push(`at least ${min} items`);
  }
  const text = [schema.description, notes.join(", ")].filter(Boolean).join("; ");
  if (text !== "") out.description = text;
  return out;
}

function objectSchema(properties: Record<string, ToolSchema>): ToolSchema {
  return {
    type: "object",
    properties,
    required: Object.keys(properties),
    additionalProperties: false,
  };
}

function perAction(variant: Variant): { name: string; description: string; schema: ToolSchema } {
  const properties: Record<string, ToolSchema> = {};
  for (const [key, schema] of Object.entries(variant.properties)) {
    properties[key] = strict(schema, !variant.required.includes(key));
  }
  return { name: variant.name, description: variant.description, schema: objectSchema(properties) };
}

function single(
  all: Variant[],
  name: string,
): { name: string; description: string; schema: ToolSchema } {
  const users = new Map<string, { schema: ToolSchema; actions: string[] }>();
  for (const variant of all) {
    for (const [key, schema] of Object.entries(variant.properties)) {
      const entry = users.get(key);
      if (entry === undefined) users.set(key, { schema, actions: [variant.name] });
      else {
        if (entry.schema.type !== schema.type) {
          throw new TypeError(`Cannot merge the field "${key}": its type differs between actions`);
        }
        entry.actions.push(variant.name);
      }
    }
  }
  const properties: Record<string, ToolSchema> = {
    action: {
      type: "string",
      enum: all.map((variant) => variant.name),
      description: all.map((variant) => `${variant.name}: ${variant.description}`).join("; "),
    },
  };
  for (const [key, { schema, actions }] of users) {
    const field = strict(schema, true);
    field.description = `For ${actions.join(", ")}. ${field.description ?? ""}`.trim();
    properties[key] = field;
  }
  return {
    name,
    description: "Take one action on the page; set the fields the action uses, null the others",
    schema: objectSchema(properties),
  };
}

/**
 * The action space as tool definitions for an LLM API, in strict-mode form.
 *
 * @param format `"openai"` for Chat Completions `tools` entries, `"anthropic"` for Messages API ones
 * @param options one tool per action (default) or one tool with an `action` field
 * @returns the tools, ready to send as the request's `tools`
 * @throws {TypeError} when the format or style is unknown
 *
 * @example Offer every action to a model as its own tool
 * ```ts
 * import { actionTools } from "./tools.ts";
 * const tools = actionTools("openai");
 * console.assert(tools.some((tool) => tool.function.name === "click"));
 * ```
 */
export function actionTools(
  format: "openai",
  options?: ActionToolsOptions,
): OpenAiTool[];
/**
 * The action space as tool definitions for Anthropic's Messages API.
 *
 * @param format `"anthropic"`
 * @param options one tool per action (default) or one tool with an `action` field
 * @returns the tools, ready to send as the request's `tools`
 * @throws {TypeError} when the style is unknown
 */
export function actionTools(
  format: "anthropic",
  options?: ActionToolsOptions,
): AnthropicTool[];
/**
 * The action space as tool definitions, in the shape `format` names.
 *
 * @param format `"openai"` or `"anthropic"`
 * @param options one tool per action (default) or one tool with an `action` field
 * @returns the tools, ready to send as the request's `tools`
 * @throws {TypeError} when the format or style is unknown
 */
export function actionTools(
  format: "openai" | "anthropic",
  options?: ActionToolsOptions,
): OpenAiTool[] | AnthropicTool[];
export function actionTools(
  format: "openai" | "anthropic",
  options: ActionToolsOptions = {},
): OpenAiTool[] | AnthropicTool[] {
  const style = options.style ?? "per-action";
  if (style !== "per-action" && style !== "single") {
    throw new TypeError(`Unknown tool style "${String(style)}": use "per-action" or "single"`);
  }
  const all = variants();
  const defs = style === "single" ? [single(all, options.name ?? SINGLE_NAME)] : all.map(perAction);
  if (format === "openai") {
    return defs.map(({ name, description, schema }) => ({
      type: "function" as const,
      function: { name, description, parameters: schema, strict: true as const },
    }));
  }
  if (format === "anthropic") {
    return defs.map(({ name, description, schema }) => ({
      name,
      description,
      input_schema: schema,
    }));
  }
  throw new TypeError(`Unknown tool format "${String(format)}": use "openai" or "anthropic"`);
}

/**
 * Turns a tool call from a model back into an action: the arguments' nulls
 * are dropped (they stand for a left-out field) and the rest is validated by
 * {@linkcode parseAction}.
 *
 * @param name the called tool's name: an action name, or the single tool's name
 * @param args the call's arguments, as an object or as the JSON text the API returns
 * @param options the style's single-tool name, when it is not the default
 * @returns the validated action
 * @throws {ActionError} `invalid-action` when the name is not a tool, the arguments are not a
 *   JSON object, or the action is invalid
 *
 * @example Parse an OpenAI tool call
 * ```ts
 * import { parseToolCall } from "./tools.ts";
 * const action = parseToolCall("click", '{"id":12,"button":null,"modifiers":null}');
 * console.assert(action.action === "click" && !("button" in action));
 * ```
 */
export function parseToolCall(
  name: string,
  args: unknown,
  options: Pick<ActionToolsOptions, "name"> = {},
): Action {
  let input = args;
  if (typeof input === "string") {
    try {
      input = JSON.parse(input);
    } catch (error) {
      throw new ActionError(
        "invalid-action",
        `Invalid tool call "${name}": the arguments are not JSON`,
        {
          cause: error,
        },
      );
    }
  }
  if (typeof input !== "object" || input === null || Array.isArray(input)) {
    throw new ActionError(
      "invalid-action",
      `Invalid tool call "${name}": the arguments must be an object`,
    );
  }
  const fields: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(input)) {
    if (value !== null) fields[key] = value;
  }
  if (name === (options.name ?? SINGLE_NAME)) return parseAction(fields);
  if (!variants().some((variant) => variant.name === name)) {
    throw new ActionError(
      "invalid-action",
      `Unknown tool "${name}": expected an action name or "${options.name ?? SINGLE_NAME}"`,
    );
  }
  if ("action" in fields && fields.action !== name) {
    throw new ActionError(
      "invalid-action",
      `Invalid tool call "${name}": "action" must be absent or "${name}"`,
    );
  }
  return parseAction({ ...fields, action: name });
}
