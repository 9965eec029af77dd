/**
 * The one door every request body comes through: JSON only (415 otherwise,
 * so a browser's cross-site "simple" request never reaches a route), at most
 * `maxBytes` (413, streamed bodies included) and at most `maxDepth` arrays
 * and objects deep (400 `too-deep`). The depth is read from the raw text in
 * one linear pass before `JSON.parse` runs, so no route, recorder or event
 * stream ever holds a value too deep to serialise again.
 *
 * The checked text goes into Hono's body cache, where `c.req.text()`,
 * `c.req.json()` and the routes' validators read it, and the value parsed
 * for the check is what the first `c.req.json()` returns: a body is read
 * and parsed once. A route that wants the text reads `c.req.text()`; the
 * raw request's stream is spent.
 *
 * @module
 */
import type { Context, Next } from "hono";
import { HttpError } from "./http_error.ts";

/** The deepest nesting a body may have: far past any action, spec or JSON-RPC message. */
export const MAX_JSON_DEPTH = 64;

/** The largest body by default, in bytes. */
export const MAX_BODY_BYTES = 1 << 20;

/** What {@linkcode jsonBodies} bounds. */
export interface BodyBounds {
  /** The largest body, in bytes. */
  maxBytes: number;
  /** The deepest nesting of arrays and objects. */
  maxDepth: number;
}

const JSON_TYPE = /^application\/(?:[\w.-]+\+)?json\s*(?:;|$)/i;

/**
 * Where a JSON text first nests deeper than `maxDepth`, in one pass over
 * it; brackets inside strings do not count. The text need not be valid
 * JSON: `JSON.parse` judges that afterwards.
 *
 * @param text the raw JSON text
 * @param maxDepth the deepest nesting allowed
 * @returns the offset of the first bracket past the bound, or `-1`
 *
 * @example A depth of three
 * ```ts
 * import { excessDepthAt } from "./_json_body.ts";
 * console.assert(excessDepthAt('[[["]]]]"]]]', 3) === -1);
 * console.assert(excessDepthAt("[[[[]]]]", 3) === 3);
 * ```
 */
export function excessDepthAt(text: string, maxDepth: number): number {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++; // a backslash: the next character is escaped
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) {
      inString = true;
    } else if (c === 0x5b || c === 0x7b) {
      if (++depth > maxDepth) return i;
    } else if (c === 0x5d || c === 0x7d) {
      depth--;
    }
  }
  return -1;
}

/**
 * Reads a body, refusing it past `maxBytes` without reading on.
 *
 * @param request the request
 * @param maxBytes the bound
 * @param tooLarge the error past the bound (the door's 413 unless given)
 * @returns the bytes (none when the request has no body)
 * @throws {HttpError} 413 past the bound
 */
export async function readBounded(
  request: Request,
  maxBytes: number,
  tooLarge: () => HttpError = () =>
    new HttpError(
      413,
      "too-large",
      `The request body is larger than ${maxBytes} bytes: send less (an action, a spec or ` +
        "a batch of at most 256 steps fits)",
      UNREAD,
    ),
): Promise<Uint8Array> {
  const declared = Number(request.headers.get("content-length") ?? NaN);
  if (declared > maxBytes) {
    await request.body?.cancel().catch(() => {});
    throw tooLarge();
  }
  if (!request.body) return new Uint8Array();
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = request.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > maxBytes) {
      await reader.cancel().catch(() => {});
      throw tooLarge();
    }
    chunks.push(value);
  }
  const bytes = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return bytes;
}

function notJson(type: string): HttpError {
  return new HttpError(
    415,
    "unsupported-media-type",
    `The body must be JSON sent as "content-type: application/json" (got ${
      type === "" ? "no content-type" : `"${type.slice(0, 100)}"`
    })`,
    UNREAD,
  );
}

/**
 * The header of an answer given before the body was read: the connection
 * cannot carry another request (the rest of the body is still in it), so the
 * client is told not to reuse it rather than find it closed under its next
 * request.
 */
const UNREAD: Record<string, string> = { connection: "close" };

/**
 * The middleware: checks every request that carries a body.
 *
 * @param bounds the size and depth bounds
 * @returns the middleware
 */
export function jsonBodies(bounds: BodyBounds): (c: Context, next: Next) => Promise<void> {
  return async (c, next) => {
    const request = c.req.raw;
    // No body (aiohttp labels even an empty one "application/octet-stream"): nothing to check.
    if (request.body === null || request.headers.get("content-length") === "0") {
      return await next();
    }
    const type = request.headers.get("content-type") ?? "";
    const json = JSON_TYPE.test(type);
    // A body that says it is something else is refused unread; an unlabelled one may be empty.
    if (!json && type !== "") throw notJson(type);
    const bytes = await readBounded(request, bounds.maxBytes);
    if (bytes.byteLength === 0) {
      // No body after all (a bare POST or DELETE): nothing to check.
      cacheText(c, "");
      return await next();
    }
    if (!json) throw notJson(type);
    let text: string;
    try {
      text = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(bytes);
    } catch {
      throw new HttpError(400, "bad-request", "The body is not UTF-8 text: send JSON in UTF-8");
    }
    const at = excessDepthAt(text, bounds.maxDepth);
    if (at >= 0) {
      throw new HttpError(
        400,
        "too-deep",
        `The body's JSON is nested more than ${bounds.maxDepth} levels deep (at character ` +
          `${at}): flatten it; no action or spec nests that deep`,
      );
    }
    // Every later `c.req.text()` reads this text from Hono's body cache, not
    // the spent stream: no second Request, no second copy of the body.
    cacheText(c, text);
    if (text.trim() !== "") {
      let parsed: unknown;
      try {
        parsed = JSON.parse(text);
      } catch (error) {
        throw new HttpError(
          400,
          "bad-request",
          `The body is not JSON: ${(error as Error).message}`,
        );
      }
      handOn(c, text, parsed);
    }
    await next();
  };
}

/**
 * Makes the request's first `c.req.json()` return the value the check
 * parsed (nobody else holds it); later calls parse the text again, so no two
 * readers share one object that either might change.
 */
function handOn(c: Context, text: string, parsed: unknown): void {
  let first: { value: unknown } | undefined = { value: parsed };
  // deno-lint-ignore no-explicit-any
  c.req.json = <T = any>(): Promise<T> => {
    const value = first ? first.value : JSON.parse(text);
    first = undefined;
    return Promise.resolve(value as T);
  };
}

/**
 * Puts the body's text in Hono's body cache. Its type names the values, but
 * `HonoRequest` stores (and awaits) promises of them there: so does this.
 */
function cacheText(c: Context, text: string): void {
  (c.req.bodyCache as Record<string, unknown>).text = Promise.resolve(text);
}
