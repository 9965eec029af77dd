// The strict-query middleware refuses a query parameter its route does not
// declare, wherever the query string is, and lets a request with no query
// string (every step's) through without reading the route table.
import { assertEquals, assertStringIncludes } from "@std/assert";
import { createRoute, OpenAPIHono, z } from "@hono/zod-openapi";
import { strictRoutes } from "../../../adapters/http/_strict.ts";
import { HttpError } from "../../../adapters/http/http_error.ts";

function app(): OpenAPIHono {
  const app = new OpenAPIHono();
  const strict = strictRoutes(app, { openapi: "3.1.0", info: { title: "t", version: "1" } });
  app.use("*", strict.query);
  app.onError((error, c) =>
    error instanceof HttpError
      ? c.json({ code: error.code, message: error.message }, error.status)
      : c.json({ code: "internal" }, 500)
  );
  app.openapi(
    createRoute({
      method: "get",
      path: "/v1/items/{id}",
      request: {
        params: z.object({ id: z.string() }),
        query: z.object({ limit: z.string().optional() }),
      },
      responses: {
        200: { description: "ok", content: { "application/json": { schema: z.object({}) } } },
      },
    }),
    (c) => c.json({}, 200),
  );
  strict.prepare();
  return app;
}

Deno.test("strictRoutes().query refuses undeclared query parameters and passes requests without a query", async () => {
  const served = app();
  const status = async (path: string) => {
    const response = await served.request(path);
    return { status: response.status, body: await response.text() };
  };
  assertEquals((await status("/v1/items/7")).status, 200);
  assertEquals((await status("/v1/items/7?")).status, 200);
  assertEquals((await status("/v1/items/7?limit=2")).status, 200);
  assertEquals((await status("/v1/items/7?token=t")).status, 200);
  const refused = await status("/v1/items/7?limit=2&colour=red");
  assertEquals(refused.status, 400);
  assertStringIncludes(JSON.parse(refused.body).message, '"colour"');
  assertEquals((await status("/v1/items/7?colour")).status, 400);
});
