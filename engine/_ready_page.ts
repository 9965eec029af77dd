/**
 * What an episode's "ready page" is: a fresh context with its origin policy
 * and viewport, the settler and the observer installed on it, and one blank
 * tab opened in it (its target attached, its document-start scripts
 * installed, its CDP domains enabled and its emulation set by the context's
 * initializers). The one place an episode's context and first tab are made,
 * whether an episode makes them when it starts or the context pool makes
 * them ahead.
 *
 * @module
 */
import type { Browser, Viewport } from "./browser/browser.ts";
import { newContext } from "./browser/browser.ts";
import type { BrowserContext } from "./browser/browser_context.ts";
import type { Page } from "./browser/page.ts";
import { withSignal } from "./cdp/abort_scope.ts";
import { logFailure } from "./log.ts";
import { Observer } from "./observe/observer.ts";
import { Settler, type SettlerOptions } from "./settle/settler.ts";

/** Everything a ready page is made from: what holds on a context for its whole life. */
export interface ReadySpec {
  /** The only origins the context's pages may reach; every origin when absent. */
  onlyOrigins?: readonly string[];
  /** The viewport of every page of the context. */
  viewport: Viewport;
  /** The settler's waits and caps. */
  settle?: SettlerOptions;
}

/** A context and its first tab, blank, ready to load an episode's start page. */
export interface ReadyPage {
  /** The context: no cookies, storage or history of any other. */
  context: BrowserContext;
  /** The settler installed on the context before its first tab. */
  settler: Settler;
  /** The observer attached to the context before its first tab. */
  observer: Observer;
  /** The first tab, on `about:blank`, never navigated. */
  page: Page;
}

/**
 * The key of a spec: two specs with the same key make interchangeable
 * ready pages (a pooled one holds whatever a fresh one would).
 *
 * @param spec the spec
 * @returns a string equal for equal specs
 */
export function readyKey(spec: ReadySpec): string {
  const settle = spec.settle ?? {};
  return JSON.stringify([
    spec.onlyOrigins ?? null,
    spec.viewport.width,
    spec.viewport.height,
    Object.keys(settle).sort().map((k) => [k, settle[k as keyof SettlerOptions]]),
  ]);
}

/**
 * Makes a ready page: a context with the spec's policy, the settler and the
 * observer, and its blank first tab. Runs outside any abort scope (a context
 * created but never heard of would leak); on failure the context is closed.
 *
 * @param browser the browser
 * @param spec the origin policy, viewport and settle options
 * @returns the ready page
 * @throws {Error} when the browser fails it
 */
export async function openReadyPage(browser: Browser, spec: ReadySpec): Promise<ReadyPage> {
  return await withSignal(undefined, async () => {
    const context = await newContext(browser, {
      ...(spec.onlyOrigins ? { onlyOrigins: [...spec.onlyOrigins] } : {}),
      viewport: spec.viewport,
    });
    try {
      // Both add initializers: installed before the first tab attaches.
      const settler = Settler.install(context, spec.settle);
      const observer = Observer.attach(context);
      const page = await context.newPage();
      return { context, settler, observer, page };
    } catch (error) {
      await closeContext(context);
      throw error;
    }
  });
}

/** Closes a context outside any abort scope; a failure is logged (the browser may be gone). */
export async function closeContext(context: BrowserContext): Promise<void> {
  try {
    await withSignal(undefined, () => context.close());
  } catch (error) {
    logFailure("closing an env's context", error);
  }
}
