/**
 * Actions: the action space with its JSON Schema, and an executor that acts
 * with real input events and waits for the page to settle.
 *
 * @module
 */
export * from "./action.ts";
export * from "./actor.ts";
export * from "./element_resolver.ts";
export * from "./errors.ts";
export * from "./tools.ts";
