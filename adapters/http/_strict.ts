/**
 * What the routes' declarations imply beyond their schemas: a query
 * parameter a documented route does not declare is refused (400), and a
 * path served under other methods answers 405 with `Allow`, not 404.
 * Both are read from the app's own OpenAPI document and route table, so a
 * new route needs nothing here.
 *
 * @module
 */
import type { OpenAPIHono } from "@hono/zod-openapi";
import type { Context, Next } from "hono";
import { HttpError } from "./http_error.ts";

/** Query parameters every route takes: the bearer token's fallback. */
const ALWAYS = ["token"];

interface Documented {
  pattern: RegExp;
  query: Map<string, Set<string>>;
}

function patternOf(path: string): RegExp {
  const source = path.split("/").map((part) =>
    /^\{.+\}$/.test(part) || part.startsWith(":")
      ? "[^/]+"
      : part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")
  ).join("/");
  return new RegExp(`^${source}$`);
}

/**
 * The checks, for one app.
 *
 * @param app the app, with its routes declared
 * @param document the OpenAPI document's config, as `app.doc31` takes it
 * @returns a middleware refusing undeclared query parameters, the answer
 * for an unmatched request (405 or `undefined` for a 404), and `prepare`,
 * which reads the routes now (call it once they are declared), and the
 * OpenAPI document, made once for the routes declared
 */
export function strictRoutes(
  app: OpenAPIHono,
  document: Parameters<OpenAPIHono["getOpenAPI31Document"]>[0],
): {
  query: (c: Context, next: Next) => Promise<void>;
  methodNotAllowed: (c: Context) => Response | undefined;
  prepare: () => void;
  document: () => ReturnType<OpenAPIHono["getOpenAPI31Document"]>;
} {
  let documented: Documented[] | undefined;
  let generated: ReturnType<OpenAPIHono["getOpenAPI31Document"]> | undefined;
  // The routes declared when the document was made: one declared since makes it again.
  let declared = -1;
  // Generating the document takes some 50 ms of CPU: once, not per request
  // (a client polling `/openapi.json` or `/docs` held the loop that long each time).
  const openapi = () => {
    const routes = app.openAPIRegistry.definitions.length;
    if (routes !== declared) documented = generated = undefined;
    declared = routes;
    return generated ??= app.getOpenAPI31Document(document);
  };
  const table = () => {
    const paths = openapi().paths;
    documented ??= Object.entries(paths ?? {}).map(
      ([path, item]) => {
        const query = new Map<string, Set<string>>();
        for (const [method, operation] of Object.entries(item ?? {})) {
          const parameters = (operation as { parameters?: { in: string; name: string }[] })
            .parameters ?? [];
          query.set(
            method.toUpperCase(),
            new Set([...ALWAYS, ...parameters.filter((p) => p.in === "query").map((p) => p.name)]),
          );
        }
        return { pattern: patternOf(path), query };
      },
    );
    return documented;
  };
  return {
    // Generating the document takes some 50 ms of CPU: at startup, not in the first request.
    prepare: () => void table(),
    document: openapi,
    async query(c, next) {
      // No query string, nothing to refuse: most requests (every step) skip the route scan.
      if (!c.req.url.includes("?")) return await next();
      const method = c.req.method === "HEAD" ? "GET" : c.req.method;
      const route = table().find((r) => r.pattern.test(c.req.path) && r.query.has(method));
      const allowed = route?.query.get(method);
      if (allowed) {
        const unknown = [...new URL(c.req.url).searchParams.keys()].filter((k) => !allowed.has(k));
        if (unknown.length > 0) {
          throw new HttpError(
            400,
            "bad-request",
            `Unknown query parameter(s) ${unknown.map((k) => `"${k}"`).join(", ")}` +
              (allowed.size > ALWAYS.length
                ? `: this route takes ${
                  [...allowed].filter((k) => !ALWAYS.includes(k)).map((k) => `"${k}"`).join(", ")
                }`
                : ": this route takes none"),
          );
        }
      }
      await next();
    },
    methodNotAllowed(c) {
      const methods = new Set<string>();
      for (const route of app.routes) {
        if (route.method === "ALL" || route.path.includes("*")) continue;
        if (patternOf(route.path).test(c.req.path)) methods.add(route.method);
      }
      if (methods.size === 0 || methods.has(c.req.method)) return undefined;
      if (methods.has("GET")) methods.add("HEAD");
      const allow = [...methods].sort().join(", ");
      return c.json(
        {
          code: "method-not-allowed",
          message: `${c.req.method} is not served on "${c.req.path}": use ${allow}`,
        },
        405,
        { Allow: allow },
      );
    },
  };
}
