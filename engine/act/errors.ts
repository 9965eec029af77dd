/**
 * The errors an action can end with. One class, told apart by `code`, so an
 * agent or a server can map each kind to a message or a status in one place.
 * After any of them the page and the env stay usable.
 *
 * @module
 */

/**
 * Why an action failed:
 * - `invalid-action`: the input is not a valid action (a missing or
 *   ill-typed field, an unknown key name, a URL that does not parse, a file
 *   that cannot be read); the message says which field and why;
 * - `unknown-id`: no element ever had this id;
 * - `stale-id`: the element is gone from the page;
 * - `not-visible`: the element has no visible box, even after scrolling;
 * - `disabled`: the element is disabled;
 * - `covered`: another element receives the pointer at every point of the
 *   target (the message names it);
 * - `not-editable`: typing into something that takes no text;
 * - `option-not-found`: no option with this label or value;
 * - `navigation-failed`: a page did not load, or there is no history entry;
 * - `timeout`: the browser did not finish the action in time;
 * - `dialog-open`: a JavaScript dialog waits for an answer first;
 * - `no-dialog`: answering a dialog when none is open;
 * - `not-allowed`: the URL or tab is out of bounds;
 * - `value-not-set`: typing ended and the field does not hold the text (the
 *   message says what it holds and, for dates and numbers, the format), or
 *   `check`/`uncheck` clicked and the control's checked state did not change,
 *   or a `drag` ended and the page shows no change;
 * - `too-long`: the text to type is longer than the cap (5,000 characters);
 * - `target-moved`: the target moved away, vanished or got covered between
 *   aiming and pressing (hover effects), and could not be aimed at again.
 */
export type ActionErrorCode =
  | "invalid-action"
  | "unknown-id"
  | "stale-id"
  | "not-visible"
  | "disabled"
  | "covered"
  | "not-editable"
  | "option-not-found"
  | "navigation-failed"
  | "timeout"
  | "dialog-open"
  | "no-dialog"
  | "not-allowed"
  | "value-not-set"
  | "too-long"
  | "target-moved";

/** Options of an {@linkcode ActionError}. */
export interface ActionErrorOptions extends ErrorOptions {
  /** The element id the action targeted. */
  id?: number;
  /** For `covered`: a short description of the covering element. */
  cover?: string;
}

/**
 * An action could not be done. The `code` says why.
 *
 * @example Tell a covered target from other failures
 * ```ts
 * import { ActionError } from "./errors.ts";
 * const error = new ActionError("covered", 'Element 12 is covered by div#cookie-banner "We use cookies"', {
 *   id: 12,
 *   cover: 'div#cookie-banner "We use cookies"',
 * });
 * console.assert(error.code === "covered" && error.cover !== undefined);
 * ```
 */
export class ActionError extends Error {
  /** Why the action failed. */
  readonly code: ActionErrorCode;
  /** The element id the action targeted, if any. */
  readonly id: number | undefined;
  /** For `covered`: the covering element. */
  readonly cover: string | undefined;

  /**
   * Creates an action error.
   *
   * @param code why the action failed
   * @param message what happened, in sentence case, for people and agents
   * @param options the element id, the cover and the cause
   */
  constructor(code: ActionErrorCode, message: string, options: ActionErrorOptions = {}) {
    super(message, options);
    this.name = "ActionError";
    this.code = code;
    this.id = options.id;
    this.cover = options.cover;
  }
}
