// The OpenAPI document is made once for the routes declared, not per request:
// making it takes some 50 ms of CPU, so a client polling `/openapi.json` or
// `/docs` held the server's loop that long each time.
import { assert, assertEquals } from "@std/assert";
import { createRoute, OpenAPIHono, z } from "@hono/zod-openapi";
import { strictRoutes } from "../../../adapters/http/_strict.ts";

function route(path: string) {
  return createRoute({
    method: "get",
    path,
    responses: {
      200: { description: "ok", content: { "application/json": { schema: z.object({}) } } },
    },
  });
}

Deno.test("the OpenAPI document is made once, and again only when a route is declared", () => {
  const app = new OpenAPIHono();
  app.openapi(route("/a"), (c) => c.json({}, 200));
  let made = 0;
  const generate = app.getOpenAPI31Document.bind(app);
  app.getOpenAPI31Document = (config) => {
    made++;
    return generate(config);
  };
  const strict = strictRoutes(app, { openapi: "3.1.0", info: { title: "t", version: "1" } });
  strict.prepare();
  const first = strict.document();
  assertEquals(strict.document(), first);
  strict.prepare();
  assertEquals(made, 1, "made once for the routes declared");
  app.openapi(route("/b"), (c) => c.json({}, 200));
  const second = strict.document();
  assertEquals(made, 2, "made again once a route was declared");
  assert(second.paths?.["/b"], "the new route is in it");
});
