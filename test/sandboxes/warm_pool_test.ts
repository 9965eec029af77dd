import { assertEquals, assertNotEquals, assertThrows } from "@std/assert";
import { FixtureSandbox } from "../../sandboxes/fixture/fixture_sandbox.ts";
import { Gateway } from "../../sandboxes/gateway.ts";
import { WarmPool } from "../../sandboxes/warm_pool.ts";
import demoSite from "../../fixtures/sites/demo/mod.ts";

Deno.test("WarmPool.acquire() hands out a ready instance and refills when the pool is filled", async () => {
  await using gateway = new Gateway();
  await using sandbox = new FixtureSandbox(demoSite, { gateway });
  await using pool = new WarmPool(sandbox, { size: 2, spec: { seed: 3 } });
  await pool.filled();
  assertEquals(pool.idle.length, 2);
  const first = pool.idle[0];
  await using instance = await pool.acquire();
  assertEquals(instance, first);
  const page = await gateway.request(instance.origin, "/");
  assertEquals(page.status, 200);
  await page.body?.cancel();
  await pool.filled();
  assertEquals(pool.idle.length, 2);
  assertNotEquals(pool.idle[0], instance);
});

Deno.test("WarmPool.acquire() replaces an instance when it died while idle", async () => {
  await using gateway = new Gateway();
  await using sandbox = new FixtureSandbox(demoSite, { gateway });
  await using pool = new WarmPool(sandbox, { size: 2 });
  await pool.filled();
  const dead = pool.idle[0];
  await dead?.destroy();
  await using a = await pool.acquire();
  await a.check();
  assertNotEquals(a, dead);
  assertEquals(pool.replaced, 1);
});

Deno.test("WarmPool.acquire() creates an instance when the pool is empty", async () => {
  await using gateway = new Gateway();
  await using sandbox = new FixtureSandbox(demoSite, { gateway });
  await using pool = new WarmPool(sandbox, { size: 0 });
  await using instance = await pool.acquire();
  await instance.check();
});

Deno.test("WarmPool() throws RangeError when the size is negative", () => {
  assertThrows(() => new WarmPool({ create: () => Promise.reject() }, { size: -1 }), RangeError);
});
