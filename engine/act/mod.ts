/**
 * Actions: the action space with its JSON Schema and its LLM tool
 * definitions, and an executor that acts with real input events and waits
 * for the page to settle.
 *
 * @module
 */
export { ACTION_NAMES, ACTION_SCHEMA, ACTIONS, parseAction } from "./action.ts";
export type { Action, ActionName, ActionSchemaOf, Modifier } from "./action.ts";
export { actionTools, parseToolCall } from "./tools.ts";
export type { ActionToolsOptions, AnthropicTool, OpenAiTool, ToolSchema } from "./tools.ts";
export { Actor } from "./actor.ts";
export type {
  ActorOptions,
  ActResult,
  DialogAnswer,
  DialogInfo,
  DialogPolicy,
  DialogType,
} from "./actor.ts";
export type { PressOutcome } from "./_pointer.ts";
export type { ElementLocation, ElementRef, ElementResolver } from "./element_resolver.ts";
export { ActionError } from "./errors.ts";
export type { ActionErrorCode, ActionErrorOptions } from "./errors.ts";
