/**
 * Reads what the final page says it is ({@linkcode PageSignals}): the body's
 * class and MediaWiki's page configuration, from the document the
 * application rendered. The verifier judges that page, not its URL's text.
 *
 * @module
 */
import type { Page } from "./browser/page.ts";
import type { PageSignals } from "./task.ts";

// Runs in the page: the body's class attribute and the scalar entries of
// MediaWiki's `RLCONF`, which its pages set in an inline script before any
// other script runs.
const READ = `(() => {
  const config = globalThis.RLCONF;
  const scalars = {};
  if (config && typeof config === "object") {
    for (const [key, value] of Object.entries(config)) {
      if (value === null || ["string", "number", "boolean"].includes(typeof value)) {
        scalars[key] = value;
      }
    }
  }
  const navigation = performance.getEntriesByType("navigation")[0];
  return {
    bodyClass: document.body ? document.body.getAttribute("class") ?? "" : "",
    config: config && typeof config === "object" ? scalars : undefined,
    status: navigation && navigation.responseStatus > 0 ? navigation.responseStatus : undefined,
  };
})()`;

/**
 * Decodes what the page returned; `undefined` when it is not the shape read.
 *
 * @param value the value `Runtime.evaluate` returned by value
 * @returns the signals
 */
export function decodePageSignals(value: unknown): PageSignals | undefined {
  if (typeof value !== "object" || value === null) return undefined;
  const { bodyClass, config, status } = value as Record<string, unknown>;
  if (typeof bodyClass !== "string") return undefined;
  const served = typeof status === "number" && Number.isInteger(status) ? { status } : {};
  if (config === undefined || config === null) return { bodyClass, ...served };
  if (typeof config !== "object") return undefined;
  const scalars: Record<string, string | number | boolean | null> = {};
  for (const [key, entry] of Object.entries(config)) {
    if (entry === null || ["string", "number", "boolean"].includes(typeof entry)) {
      scalars[key] = entry as string | number | boolean | null;
    }
  }
  return { bodyClass, config: scalars, ...served };
}

/**
 * Reads a page's signals.
 *
 * @param page the page
 * @returns the signals, or `undefined` when the page has no document to read
 */
export async function readPageSignals(page: Page): Promise<PageSignals | undefined> {
  const { result, exceptionDetails } = await page.session.send("Runtime.evaluate", {
    expression: READ,
    returnByValue: true,
  });
  if (exceptionDetails) return undefined;
  return decodePageSignals(result.value);
}
