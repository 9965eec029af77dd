/**
 * The navigation actions of the active tab: `goto` a URL the policy allows,
 * and `back`/`forward` through the tab's history.
 *
 * @module
 */
import type { Page } from "../browser/page.ts";
import { CdpTimeoutError, ProtocolError } from "../cdp/errors.ts";
import { ActionError } from "./errors.ts";

/** Options of {@linkcode goto}. */
export interface GotoOptions {
  /** Which URLs may be opened. */
  allowUrl: (url: URL) => boolean;
  /** Timeout of every browser command, in milliseconds. */
  timeoutMs: number;
}

/**
 * Opens `url`, resolved against the page's URL, in the page.
 *
 * @throws {ActionError} `invalid-action` when `url` is not a URL
 * @throws {ActionError} `not-allowed` when the policy refuses it, `navigation-failed` when it fails to load
 */
export async function goto(page: Page, url: string, options: GotoOptions): Promise<void> {
  const { allowUrl, timeoutMs } = options;
  let target: URL;
  try {
    const { frameTree } = await page.session.send("Page.getFrameTree", undefined, { timeoutMs });
    target = new URL(url, frameTree.frame.url);
  } catch (error) {
    if (error instanceof ProtocolError || error instanceof CdpTimeoutError) throw error;
    throw new ActionError("invalid-action", `Invalid "goto" action: "${url}" is not a URL`);
  }
  if (!allowUrl(target)) {
    throw new ActionError("not-allowed", `Cannot open "${target.href}": the URL is not allowed`);
  }
  const { errorText } = await page.session.send("Page.navigate", { url: target.href }, {
    timeoutMs,
  });
  if (errorText) {
    throw new ActionError("navigation-failed", `Cannot open "${target.href}": ${errorText}`);
  }
}

/**
 * Goes one entry back (`-1`) or forward (`1`) in the page's history.
 *
 * @throws {ActionError} `navigation-failed` when there is no such entry
 */
export async function history(page: Page, delta: -1 | 1, timeoutMs: number): Promise<void> {
  const options = { timeoutMs };
  const { currentIndex, entries } = await page.session.send(
    "Page.getNavigationHistory",
    undefined,
    options,
  );
  const entry = entries[currentIndex + delta];
  if (!entry) {
    throw new ActionError(
      "navigation-failed",
      `Cannot go ${delta < 0 ? "back" : "forward"}: there is no ${
        delta < 0 ? "previous" : "next"
      } page in history`,
    );
  }
  await page.session.send("Page.navigateToHistoryEntry", { entryId: entry.id }, options);
}
