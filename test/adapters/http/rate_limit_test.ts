// The per-client sliding window: a client past its limit waits until its oldest request
// leaves the window; other clients are not held back; the clients remembered are bounded.
import { assertEquals, assertThrows } from "@std/assert";
import { RateLimit } from "../../../adapters/http/_rate_limit.ts";

Deno.test("RateLimit.take() refuses past the limit until the window slides, per client", () => {
  let now = 0;
  const rate = new RateLimit({ limit: 2, windowMs: 1_000, now: () => now });
  assertEquals(rate.take("a"), 0);
  now = 100;
  assertEquals(rate.take("a"), 0);
  assertEquals(rate.take("a"), 900, "the first request leaves the window at 1000");
  assertEquals(rate.take("b"), 0, "another client has its own window");
  now = 1_000;
  assertEquals(rate.take("a"), 0);
  assertEquals(rate.take("a"), 100);
  assertThrows(() => new RateLimit({ limit: 0 }), RangeError);
});

Deno.test("RateLimit.take() forgets the client seen longest ago past maxClients", () => {
  const now = 0;
  const rate = new RateLimit({ limit: 1, maxClients: 2, now: () => now });
  assertEquals(rate.take("a"), 0);
  assertEquals(rate.take("b"), 0);
  assertEquals(rate.take("c"), 0);
  assertEquals(rate.take("a"), 0, "a was forgotten, so it starts a new window");
  assertEquals(rate.take("c") > 0, true, "c is remembered");
});
