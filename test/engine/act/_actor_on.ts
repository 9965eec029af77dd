/**
 * What the actions tests open: a new browser context on a page, with a
 * settler, and an actor that finds its ids by CSS selectors
 * ({@linkcode SelectorResolver}), so actions are tested without the observer.
 *
 * @module
 */
import { Actor } from "../../../engine/act/actor.ts";
import { type Browser, newContext } from "../../../engine/browser/browser.ts";
import type { BrowserContext } from "../../../engine/browser/browser_context.ts";
import type { Page } from "../../../engine/browser/page.ts";
import { Settler } from "../../../engine/settle/settler.ts";
import { SelectorResolver } from "./_selector_resolver.ts";

/** A page with its actor; dispose `context` to close both. */
export interface ActorPage {
  /** The new context. */
  context: BrowserContext;
  /** Its page, loaded. */
  page: Page;
  /** The actor on it. */
  actor: Actor;
}

/**
 * Opens `url` in a new context with a settler, and an actor whose ids are `ids`' selectors.
 *
 * @param browser the browser
 * @param url the page
 * @param ids each element id and the selector that finds it
 * @returns the context, the page and the actor
 */
export async function actorOn(
  browser: Browser,
  url: string,
  ids: Record<number, string>,
): Promise<ActorPage> {
  const context = await newContext(browser);
  const settler = Settler.install(context);
  const page = await context.newPage(url);
  const actor = new Actor(context, { resolver: new SelectorResolver(page, ids), settler });
  return { context, page, actor };
}
