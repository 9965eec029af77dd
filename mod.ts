/**
 * WebServ: a web environment for training and evaluating LLM web agents.
 *
 * The engine talks raw Chrome DevTools Protocol to Chromium: launch or
 * connect to a browser, open isolated contexts and pages, and send typed CDP
 * commands.
 *
 * @example Launch a browser and evaluate in a page
 * ```ts ignore
 * import { Browser } from "@webserv/webserv";
 * await using browser = await Browser.launch();
 * const context = await browser.newContext();
 * const page = await context.newPage("data:text/html,<title>Hi</title>");
 * const { result } = await page.session.send("Runtime.evaluate", { expression: "document.title" });
 * console.log(result.value); // "Hi"
 * ```
 *
 * @module
 */
export * from "./engine/cdp/mod.ts";
export { bestEffort, logFailure } from "./engine/log.ts";
export * from "./engine/browser/mod.ts";
export * from "./engine/settle/mod.ts";
export * from "./engine/observe/mod.ts";
export * from "./engine/act/mod.ts";
export * from "./engine/env.ts";
export * from "./engine/env_error.ts";
export type * from "./engine/task.ts";
