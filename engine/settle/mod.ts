/**
 * Network-aware settling: wait after an action until the page is quiet, and
 * no longer.
 *
 * @module
 */
export { Settler } from "./settler.ts";
export type { SettleOptions, SettleResult, SettlerOptions, SettleSignal } from "./settler.ts";
