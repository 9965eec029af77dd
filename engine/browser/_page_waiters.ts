/**
 * Waiting for the page of a target the browser created: `Target.createTarget`
 * answers before the target attaches, so the caller waits for the attach.
 *
 * @module
 */
import { abortError, currentSignal } from "../cdp/abort_scope.ts";
import { CdpTimeoutError } from "../cdp/errors.ts";
import type { Page } from "./page.ts";

/** A caller waiting for a target's page: settled when it attaches or the connection closes. */
export interface PageWaiter {
  /** Hands over the attached page. */
  resolve(page: Page): void;
  /** Fails the wait. */
  reject(error: Error): void;
}

/**
 * The page of a created target once it attached; rejects after the
 * connection's timeout, when the connection closes, or when the caller's
 * abort scope aborts (see `engine/cdp/abort_scope.ts`).
 *
 * @param waiters the browser's waiters by target id: this wait is added to it, and removed once it settles
 * @param targetId the created target
 * @param timeoutMs how long to wait, in milliseconds
 * @returns the attached page
 * @throws {CdpTimeoutError} when the target does not attach in time
 */
export function waitForPage(
  waiters: Map<string, PageWaiter>,
  targetId: string,
  timeoutMs: number,
): Promise<Page> {
  const signal = currentSignal();
  return new Promise<Page>((resolve, reject) => {
    const cleanup = () => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
      waiters.delete(targetId);
    };
    const fail = (error: Error) => {
      cleanup();
      reject(error);
    };
    const onAbort = () => fail(abortError(signal!));
    const timer = setTimeout(
      () => fail(new CdpTimeoutError("Target.attachedToTarget", timeoutMs)),
      timeoutMs,
    );
    waiters.set(targetId, {
      resolve: (page) => {
        cleanup();
        resolve(page);
      },
      reject: fail,
    });
    if (signal?.aborted) onAbort();
    else signal?.addEventListener("abort", onAbort, { once: true });
  });
}
