/**
 * Opening a page of the fixture apps in a fresh Env and reading values from
 * it: the set-up the widget-library tests share.
 *
 * @module
 */
import { assert, assertEquals } from "@std/assert";
import type { Browser } from "../../../engine/browser/browser.ts";
import { Env, envInternals } from "../../../engine/env.ts";
import type { AppServer } from "../../../fixtures/apps/mod.ts";

/**
 * Evaluates an expression in the Env's open tab, awaiting a promise it returns.
 *
 * @param env an Env with a tab open
 * @param expression JavaScript evaluated in the page
 * @returns the value, by value
 */
export async function pageValue(env: Env, expression: string): Promise<unknown> {
  const page = envInternals(env).page;
  assert(page, "a tab is open");
  const { result } = await page.session.send("Runtime.evaluate", {
    expression,
    awaitPromise: true,
    returnByValue: true,
  });
  return result.value;
}

/**
 * An Env on one app page, once the page sets `window.__appReady` (the app
 * mounted its widgets); fails the test if that takes over 15 s.
 *
 * @param browser the browser the Env opens its tab in
 * @param server the fixture apps' server
 * @param path the page's path on it
 * @returns the Env, ready to observe
 */
export async function openAppPage(browser: Browser, server: AppServer, path: string): Promise<Env> {
  const env = await Env.create(browser, { startUrl: server.url(path) });
  const ready = await pageValue(
    env,
    `new Promise((resolve) => { const start = Date.now();
      const poll = () => window.__appReady ? resolve(true) : Date.now() - start > 15000 ? resolve(false) : setTimeout(poll, 10);
      poll(); })`,
  );
  assertEquals(ready, true, "the page got ready");
  return env;
}
