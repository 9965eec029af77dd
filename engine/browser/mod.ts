/**
 * Launch or connect to Chromium; contexts, pages, popups and frames.
 *
 * @module
 */
export * from "./browser.ts";
export * from "./browser_context.ts";
export * from "./browser_process.ts";
export * from "./find_chrome.ts";
export * from "./page.ts";
