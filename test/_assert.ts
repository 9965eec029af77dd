/**
 * A stand-in for `jsr:@std/assert@^1`, built on `node:assert`.
 *
 * Why: JSR is not reachable from the machines this project is built on, so
 * `deno.json` maps the name `@std/assert` here. The functions and signatures
 * match the JSR module for the subset the tests use; where JSR is reachable,
 * pointing the import map at `jsr:@std/assert@^1` is the only change needed.
 *
 * @module
 */
import nodeAssert from "node:assert";

/** An assertion failed. */
export class AssertionError extends Error {
  /** @param message what failed */
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "AssertionError";
  }
}

function wrap(fn: () => void): void {
  try {
    fn();
  } catch (error) {
    if (error instanceof nodeAssert.AssertionError) {
      throw new AssertionError(error.message, { cause: error });
    }
    throw error;
  }
}

/** Asserts that `expr` is truthy. */
export function assert(expr: unknown, msg = ""): asserts expr {
  if (!expr) throw new AssertionError(msg || "Expected actual to be truthy");
}

/** Asserts that `expr` is falsy. */
export function assertFalse(expr: unknown, msg = ""): void {
  if (expr) throw new AssertionError(msg || "Expected actual to be falsy");
}

/** Asserts deep equality. */
export function assertEquals<T>(actual: T, expected: T, msg?: string): void {
  wrap(() => nodeAssert.deepStrictEqual(actual, expected, msg));
}

/** Asserts deep inequality. */
export function assertNotEquals<T>(actual: T, expected: T, msg?: string): void {
  wrap(() => nodeAssert.notDeepStrictEqual(actual, expected, msg));
}

/** Asserts `Object.is` equality. */
export function assertStrictEquals<T>(
  actual: unknown,
  expected: T,
  msg?: string,
): asserts actual is T {
  wrap(() => nodeAssert.strictEqual(actual, expected, msg));
}

/** Asserts that a value is neither `null` nor `undefined`. */
export function assertExists<T>(
  actual: T,
  msg?: string,
): asserts actual is NonNullable<T> {
  if (actual === undefined || actual === null) {
    throw new AssertionError(
      msg ?? `Expected actual: "${actual}" to not be null or undefined`,
    );
  }
}

/** Asserts that `actual` matches the regular expression. */
export function assertMatch(
  actual: string,
  expected: RegExp,
  msg?: string,
): void {
  wrap(() => nodeAssert.match(actual, expected, msg));
}

/** Asserts that `actual` does not match the regular expression. */
export function assertNotMatch(
  actual: string,
  expected: RegExp,
  msg?: string,
): void {
  wrap(() => nodeAssert.doesNotMatch(actual, expected, msg));
}

/** Asserts that `actual` includes `expected`. */
export function assertStringIncludes(
  actual: string,
  expected: string,
  msg?: string,
): void {
  if (!actual.includes(expected)) {
    throw new AssertionError(
      msg ?? `Expected actual: "${actual}" to contain: "${expected}"`,
    );
  }
}

/** Asserts that `actual` includes every value in `expected`. */
export function assertArrayIncludes<T>(
  actual: ArrayLike<T>,
  expected: ArrayLike<T>,
  msg?: string,
): void {
  const missing = Array.from(expected).filter((e) =>
    !Array.from(actual).some((a) => {
      try {
        nodeAssert.deepStrictEqual(a, e);
        return true;
      } catch {
        return false;
      }
    })
  );
  if (missing.length > 0) {
    throw new AssertionError(
      msg ?? `Expected actual to include: ${JSON.stringify(missing)}`,
    );
  }
}

/** Asserts that `actual` is an instance of `expectedType`. */
export function assertInstanceOf<
  // deno-lint-ignore no-explicit-any
  T extends abstract new (...args: any[]) => any,
>(
  actual: unknown,
  expectedType: T,
  msg = "",
): asserts actual is InstanceType<T> {
  if (!(actual instanceof expectedType)) {
    throw new AssertionError(
      msg ||
        `Expected object to be an instance of "${expectedType.name}"`,
    );
  }
}

/** Asserts `actual > expected`. */
export function assertGreater<T>(actual: T, expected: T, msg?: string): void {
  if (!(actual > expected)) {
    throw new AssertionError(msg ?? `Expect ${actual} > ${expected}`);
  }
}

/** Asserts `actual >= expected`. */
export function assertGreaterOrEqual<T>(
  actual: T,
  expected: T,
  msg?: string,
): void {
  if (!(actual >= expected)) {
    throw new AssertionError(msg ?? `Expect ${actual} >= ${expected}`);
  }
}

/** Asserts `actual < expected`. */
export function assertLess<T>(actual: T, expected: T, msg?: string): void {
  if (!(actual < expected)) {
    throw new AssertionError(msg ?? `Expect ${actual} < ${expected}`);
  }
}

/** Asserts `actual <= expected`. */
export function assertLessOrEqual<T>(
  actual: T,
  expected: T,
  msg?: string,
): void {
  if (!(actual <= expected)) {
    throw new AssertionError(msg ?? `Expect ${actual} <= ${expected}`);
  }
}

/** Asserts that `actual` has every property of `expected`, deeply. */
export function assertObjectMatch(
  actual: Record<PropertyKey, unknown>,
  expected: Record<PropertyKey, unknown>,
  msg?: string,
): void {
  const picked: Record<PropertyKey, unknown> = {};
  for (const key of Object.keys(expected)) picked[key] = actual[key];
  wrap(() => nodeAssert.deepStrictEqual(picked, expected, msg));
}

/** Always fails. */
export function fail(msg?: string): never {
  throw new AssertionError(`Failed assertion${msg ? `: ${msg}` : "."}`);
}

/** Marks code that must not be reached. */
export function unreachable(msg?: string): never {
  throw new AssertionError(msg ?? "Unreachable");
}

// deno-lint-ignore no-explicit-any
type ErrorClass<E extends Error> = abstract new (...args: any[]) => E;

function checkError<E extends Error>(
  error: unknown,
  ErrorClass?: ErrorClass<E>,
  msgIncludes?: string,
  msg?: string,
): E {
  if (!(error instanceof Error)) {
    throw new AssertionError(msg ?? "A non-Error object was thrown");
  }
  if (ErrorClass && !(error instanceof ErrorClass)) {
    throw new AssertionError(
      msg ??
        `Expected error to be instance of "${ErrorClass.name}", but was "${error.constructor.name}": ${error.message}`,
    );
  }
  if (msgIncludes !== undefined && !error.message.includes(msgIncludes)) {
    throw new AssertionError(
      msg ??
        `Expected error message to include "${msgIncludes}", but got "${error.message}"`,
    );
  }
  return error as E;
}

/** Asserts that `fn` throws, optionally of a class and with a message. */
export function assertThrows<E extends Error = Error>(
  fn: () => unknown,
  ErrorClass?: ErrorClass<E>,
  msgIncludes?: string,
  msg?: string,
): E {
  try {
    fn();
  } catch (error) {
    return checkError(error, ErrorClass, msgIncludes, msg);
  }
  throw new AssertionError(msg ?? "Expected function to throw");
}

/** Asserts that `fn` rejects, optionally of a class and with a message. */
export async function assertRejects<E extends Error = Error>(
  fn: () => PromiseLike<unknown>,
  ErrorClass?: ErrorClass<E>,
  msgIncludes?: string,
  msg?: string,
): Promise<E> {
  try {
    await fn();
  } catch (error) {
    return checkError(error, ErrorClass, msgIncludes, msg);
  }
  throw new AssertionError(msg ?? "Expected function to reject");
}
