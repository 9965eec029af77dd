// Leases: a session held by an open connection is never reaped for idling,
// its idle time counts from the release, and its own idle timeout counts.
import { assertEquals } from "@std/assert";
import { Expiry } from "../../../adapters/http/_expiry.ts";

const HOUR = 3_600_000;

Deno.test("Expiry.due() never reaps a held session for idling, and does once released", () => {
  const expiry = new Expiry({ idleTimeoutMs: 1000, lifetimeMs: HOUR });
  const now = 1_000_000;
  const idle = { createdAt: now - 60_000, lastUsed: now - 60_000, busy: 0, spec: {} };
  assertEquals(expiry.due({ ...idle, attached: 1 }, now), undefined);
  assertEquals(expiry.due({ ...idle, attached: 0 }, now), "idle");
  // The lifetime still ends a held session: a reset on its connection opens a new one.
  assertEquals(expiry.due({ ...idle, attached: 1, createdAt: now - 2 * HOUR }, now), "lifetime");
  // A session's own idle_timeout_s overrides the server's.
  const own = { ...idle, attached: 0, spec: { idle_timeout_s: 120 } };
  assertEquals(expiry.due(own, now), undefined);
  assertEquals(expiry.lease(own).idle_timeout_s, 120);
});
