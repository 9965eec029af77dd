/**
 * What every route module shares: the response entry of a JSON schema, the
 * refusals every session route documents, the session id in a path, and
 * the hook that turns a request its schema refuses into our 400.
 *
 * @module
 */
import { OpenAPIHono, z } from "@hono/zod-openapi";
import type { Catalog } from "../catalog.ts";
import type { Metrics } from "../metrics.ts";
import { ErrorBody } from "../protocol.ts";
import type { SessionManager } from "../sessions.ts";

/** What the routes are served from. */
export interface RouteDeps {
  /** The sessions. */
  readonly sessions: SessionManager;
  /** The sites and tasks. */
  readonly catalog: Catalog;
  /** The counters. */
  readonly metrics: Metrics;
  /** Whether the browser is connected now. */
  readonly browserConnected: () => boolean;
}

/**
 * A JSON response entry of an OpenAPI route.
 *
 * @param schema the body's schema
 * @param description what it is
 * @returns the entry
 */
export function json<T extends z.ZodType>(
  schema: T,
  description: string,
): { content: { "application/json": { schema: T } }; description: string } {
  return { content: { "application/json": { schema } }, description };
}

/** The refusals of the session API, as its routes document them. */
export const ERRORS = {
  400: json(ErrorBody, "Bad input"),
  401: json(ErrorBody, "Missing or wrong bearer token"),
  403: json(ErrorBody, "A foreign Host or Origin (DNS rebinding, cross-site requests)"),
  404: json(ErrorBody, "Unknown session, task or site"),
  409: json(ErrorBody, "Not possible in the session's state"),
  410: json(ErrorBody, "The session expired or was closed"),
  422: json(ErrorBody, "A bare start URL did not load"),
  405: json(ErrorBody, "The path is served under other methods; see Allow"),
  413: json(ErrorBody, "The body is larger than the server takes"),
  415: json(ErrorBody, 'The body is not sent as "content-type: application/json"'),
  429: json(ErrorBody, "Too many live sessions; see Retry-After"),
  500: json(ErrorBody, "Our bug (logged with its stack); retrying will not help"),
  503: json(ErrorBody, "Our side failed (browser, site, sandbox); see Retry-After"),
} as const;

/** A session's id in a path. */
export const SessionId: z.ZodObject<{ id: z.ZodString }> = z.object({
  id: z.string().min(1).max(100).openapi({ param: { name: "id", in: "path" } }),
});

/**
 * The app every face is declared on: a request its schema refuses is the
 * caller's 400 `bad-request`, naming the field.
 *
 * @param metrics the counters the refusal is counted on
 * @returns the app, with no route yet
 */
export function routeApp(metrics: Metrics): OpenAPIHono {
  return new OpenAPIHono({
    defaultHook(result, c) {
      if (!result.success) {
        const issue = result.error.issues[0];
        const where = issue?.path.length ? `"${issue.path.join(".")}": ` : "";
        metrics.error("bad-request");
        return c.json({
          code: "bad-request",
          message: `Invalid request: ${where}${issue?.message}`,
        }, 400);
      }
    },
  });
}
