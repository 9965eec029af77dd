/**
 * What the engine's browser tests ask a page directly, past the engine: an
 * expression's value in the page's main world, and the action error a
 * promise must reject with.
 *
 * @module
 */
import { assertEquals, assertRejects, assertStringIncludes } from "@std/assert";
import { ActionError, type ActionErrorCode } from "../../engine/act/errors.ts";
import type { Page } from "../../engine/browser/page.ts";

/** Options of {@linkcode evaluate}. */
export interface EvaluateOptions {
  /**
   * Waits for a promise the expression returns and gives its value.
   *
   * @default {false}
   */
  awaitPromise?: boolean;
}

/**
 * An expression's value in the page's main world, as JSON.
 *
 * @param page the page
 * @param expression the JavaScript to run
 * @param options whether to await a promise it returns
 * @returns its value (`undefined` for what JSON cannot hold)
 */
export async function evaluate(
  page: Page,
  expression: string,
  options: EvaluateOptions = {},
): Promise<unknown> {
  const { result } = await page.session.send("Runtime.evaluate", {
    expression,
    returnByValue: true,
    ...(options.awaitPromise ? { awaitPromise: true } : {}),
  });
  return result.value;
}

/**
 * Asserts that `promise` rejects with an {@linkcode ActionError} of `code`
 * whose message holds `text`.
 *
 * @param promise the action
 * @param code the error's code
 * @param text a part of its message, when given
 * @returns the error
 */
export async function rejectsWith(
  promise: Promise<unknown>,
  code: ActionErrorCode,
  text?: string,
): Promise<ActionError> {
  const error = await assertRejects(() => promise, ActionError);
  assertEquals(error.code, code, error.message);
  if (text) assertStringIncludes(error.message, text);
  return error;
}
