/**
 * The API's own description: `GET /openapi.json` (the OpenAPI 3.1 document
 * the declared routes make) and `GET /docs` (a page rendered from it, made
 * again only when the document changes).
 *
 * @module
 */
import type { OpenAPIHono } from "@hono/zod-openapi";
import type { Context } from "hono";
import { docsPage } from "./docs_page.ts";

/**
 * Declares `/openapi.json` and `/docs` on the app.
 *
 * @param app the app
 * @param document the OpenAPI document, made once for the routes declared
 */
export function openapiRoutes(app: OpenAPIHono, document: () => object): void {
  app.get("/openapi.json", (c: Context) => c.json(document()));
  let docs: { for: object; html: string } | undefined;
  app.get("/docs", (c: Context) => {
    const current = document();
    const page = docs?.for === current ? docs : docs = { for: current, html: docsPage(current) };
    return c.html(page.html);
  });
}
