// The TypeScript client's deadline, Retry-After retries, abort signal and
// network error, against small loopback servers that refuse on cue or never
// answer (the refusals of the real server are in test/adapters/http/).
import { assert, assertEquals, assertRejects } from "@std/assert";
import { WebServClient, WebServError, WebServNetworkError } from "../../../adapters/client/mod.ts";

function busyServer(refusals: number): { server: Deno.HttpServer<Deno.NetAddr>; calls: number[] } {
  const calls: number[] = [];
  const server = Deno.serve({ port: 0, hostname: "127.0.0.1", onListen() {} }, () => {
    calls.push(performance.now());
    if (calls.length <= refusals) {
      return Response.json({ code: "capacity", message: "full" }, {
        status: 429,
        headers: { "retry-after": "1" },
      });
    }
    return Response.json({ status: "healthy", live: 0, max: 1, free: 1, browser: true });
  });
  return { server, calls };
}

Deno.test("WebServClient honours Retry-After a bounded number of times", async () => {
  const { server, calls } = busyServer(2);
  await using _ = server;
  const url = `http://127.0.0.1:${server.addr.port}`;
  assertEquals((await new WebServClient(url, { retries: 3 }).health()).status, "healthy");
  assertEquals(calls.length, 3);
  assert(calls[1]! - calls[0]! >= 900);
  calls.length = 0;
  const refused = await new WebServClient(url, { retries: 0 }).health().catch((e) => e);
  assert(refused instanceof WebServError);
  assertEquals([refused.status, refused.retryAfter, calls.length], [429, 1, 1]);
  calls.length = 0;
  // A wait that would pass the deadline is not taken.
  const late = await new WebServClient(url, { retries: 3, timeoutMs: 500 }).health().catch((e) =>
    e
  );
  assertEquals([late.status, calls.length], [429, 1]);
});

Deno.test("WebServClient turns an unreachable server and a passed deadline into WebServNetworkError", async () => {
  const listener = Deno.listen({ port: 0, hostname: "127.0.0.1" });
  const port = listener.addr.port;
  listener.close();
  const down = await new WebServClient(`http://127.0.0.1:${port}`).health().catch((e) => e);
  assert(down instanceof WebServNetworkError, String(down));
  assertEquals(down.timedOut, false);

  const { promise: never, resolve: release } = Promise.withResolvers<Response>();
  await using silent = Deno.serve({ port: 0, hostname: "127.0.0.1", onListen() {} }, () => never);
  try {
    const url = `http://127.0.0.1:${silent.addr.port}`;
    const late = await new WebServClient(url, { timeoutMs: 300 }).health().catch((e) => e);
    assert(late instanceof WebServNetworkError, String(late));
    assertEquals(late.timedOut, true);
    // The caller's own signal aborts with its reason, not a network error.
    const controller = new AbortController();
    const pending = new WebServClient(url, { signal: controller.signal }).health();
    controller.abort(new Error("stop"));
    await assertRejects(() => pending, Error, "stop");
  } finally {
    release(new Response("late"));
  }
});
