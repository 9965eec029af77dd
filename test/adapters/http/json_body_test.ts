// The body door (jsonBodies) hands the body it checked on: the request is
// not rebuilt, the text is read once, the JSON parsed once for the check and
// the route together.
import { assert, assertEquals } from "@std/assert";
import { Hono } from "hono";
import { jsonBodies } from "../../../adapters/http/_json_body.ts";
import { HttpError } from "../../../adapters/http/http_error.ts";

function app(): Hono {
  const app = new Hono();
  app.onError((error, c) =>
    error instanceof HttpError
      ? c.json({ code: error.code }, error.status as 400)
      : c.json({ code: "internal" }, 500)
  );
  let arrived: Request | undefined;
  app.use("*", async (c, next) => {
    arrived = c.req.raw;
    await next();
  });
  app.use("*", jsonBodies({ maxBytes: 1 << 20, maxDepth: 8 }));
  app.post("/echo", async (c) => {
    const first = await c.req.json();
    const second = await c.req.json();
    assert(first !== second, "two readers share one object");
    return c.json({
      first,
      second,
      text: await c.req.text(),
      sameRequest: c.req.raw === arrived,
    });
  });
  return app;
}

/** Runs `body` counting the calls of `JSON.parse` made meanwhile. */
async function countingParses<T>(body: () => T | Promise<T>): Promise<[T, number]> {
  const parse = JSON.parse;
  let calls = 0;
  JSON.parse = (...args: Parameters<typeof parse>) => {
    calls++;
    return parse(...args);
  };
  try {
    return [await body(), calls];
  } finally {
    JSON.parse = parse;
  }
}

Deno.test("jsonBodies() hands the checked body on: same request, one parse for the check and the route", async () => {
  const text = '{"action":{"action":"click","id":2}}';
  const [answer, parses] = await countingParses(() =>
    app().request("/echo", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: text,
    })
  );
  assertEquals(answer.status, 200);
  const body = await answer.json();
  assertEquals(body, {
    first: { action: { action: "click", id: 2 } },
    second: { action: { action: "click", id: 2 } },
    text,
    sameRequest: true,
  });
  // The check's parse, handed to the first c.req.json(); the second parses again.
  assertEquals(parses, 2);
});

Deno.test("jsonBodies() still refuses a body that is not JSON, or too deep, before the route", async () => {
  for (
    const [body, code] of [["{nope", "bad-request"], ["[[[[[[[[[1]]]]]]]]]", "too-deep"]] as const
  ) {
    const answer = await app().request("/echo", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body,
    });
    assertEquals([answer.status, (await answer.json()).code], [400, code]);
  }
});
