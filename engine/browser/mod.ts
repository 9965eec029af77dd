/**
 * Launch or connect to Chromium; contexts, pages, popups and frames.
 *
 * @module
 */
export { Browser, browserInternals, newContext } from "./browser.ts";
export type {
  BrowserEvents,
  BrowserInternals,
  ConnectOptions,
  LaunchOptions,
  NewContextOptions,
  Viewport,
} from "./browser.ts";
export { BrowserContext } from "./browser_context.ts";
export type { AttachedTarget, BrowserContextEvents, TargetInitializer } from "./browser_context.ts";
export { BrowserLaunchError, BrowserProcess } from "./browser_process.ts";
export type { BrowserExit, BrowserProcessOptions, BrowserSandbox } from "./browser_process.ts";
export { BrowserNotFoundError, findChrome } from "./find_chrome.ts";
export type { FindChromeOptions } from "./find_chrome.ts";
export { Page } from "./page.ts";
export type { PageCrash, PageEvents } from "./page.ts";
