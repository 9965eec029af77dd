/**
 * Network-aware settling: wait after an action until the page is quiet, and
 * no longer.
 *
 * @module
 */
export * from "./settler.ts";
