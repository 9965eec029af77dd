/**
 * Narrowing helpers for the JSON the daemons send: used only by the
 * backends' decoding functions, the one place that JSON is cast.
 *
 * @module
 */

/** The value as an object, or a TypeError naming what was being decoded. */
export function record(value: unknown, what: string): Record<string, unknown> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new TypeError(`Cannot decode ${what}: expected an object`);
  }
  return value as Record<string, unknown>;
}

/** The value if it is a string, else `""`. */
export function text(value: unknown): string {
  return typeof value === "string" ? value : "";
}

/** The value if it is a number, else `0`. */
export function int(value: unknown): number {
  return typeof value === "number" ? value : 0;
}
