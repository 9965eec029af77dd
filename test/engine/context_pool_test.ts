// ContextPool with real Chromium and the fixture backend: forks take contexts made ahead on the
// gateway's spare origins, each handed out once, holding nothing of another env, within the
// pool's bound, refilled, with the env's options, and closed with the browser.
import { assert, assertEquals, assertNotEquals, assertRejects } from "@std/assert";
import type { DatabaseSync } from "node:sqlite";
import { type BranchAt, Browser, Env, type EnvBranch } from "../../mod.ts";
import { browserInternals, ContextPool, envInternals } from "../../engine/mod.ts";
import { FixtureSandbox } from "../../sandboxes/fixture/fixture_sandbox.ts";
import { Gateway } from "../../sandboxes/gateway.ts";
import type { Instance, Site } from "../../sandboxes/types.ts";

/** A page that sets a server cookie. */
const site: Site = {
  name: "poolpage",
  seed(db: DatabaseSync) {
    db.exec("CREATE TABLE t (id INTEGER PRIMARY KEY)");
  },
  app() {
    return () =>
      new Response("<!doctype html><title>Pool</title><p>page</p>", {
        headers: { "content-type": "text/html", "set-cookie": "srv=1; Path=/" },
      });
  },
  state() {
    return () => Response.json({});
  },
};

/** A branch that copies `instance` onto the spare origin it is handed. */
function brancher(instance: Instance, copies: Instance[]): (at?: BranchAt) => Promise<EnvBranch> {
  return async (at) => {
    const copy = await instance.fork!(at ?? {});
    copies.push(copy);
    return { site: copy, release: () => copy.destroy() };
  };
}

/** Waits, at most 20 s, until `done()` holds. */
async function until(what: string, done: () => boolean): Promise<void> {
  const deadline = performance.now() + 20_000;
  while (!done()) {
    if (performance.now() > deadline) throw new Error(`Timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** The ids of the browser's open contexts. */
function contextIds(browser: Browser): Set<string> {
  return new Set(browserInternals(browser).contexts.map((c) => c.id));
}

/**
 * A browser, a gateway, the fixture site's sandbox on it and the browser's
 * pool, disposed in the reverse order after the copies a test's forks made.
 */
async function poolRig(launch: Parameters<typeof Browser.launch>[0] = {}) {
  const browser = await Browser.launch(launch);
  const gateway = new Gateway();
  const sandbox = new FixtureSandbox(site, { gateway });
  const copies: Instance[] = [];
  return {
    browser,
    sandbox,
    copies,
    pool: ContextPool.of(browser),
    async [Symbol.asyncDispose]() {
      for (const copy of copies) await copy.destroy();
      await sandbox[Symbol.asyncDispose]();
      await gateway[Symbol.asyncDispose]();
      await browser[Symbol.asyncDispose]();
    },
  };
}

Deno.test("ContextPool: a fork takes a pooled context that holds nothing of another env", async () => {
  await using rig = await poolRig({ contextPool: 1 });
  const { browser, sandbox, pool, copies } = rig;
  assertEquals(pool.size, 1, "sized by the launch option");
  const a = await sandbox.create();
  const b = await sandbox.create();
  await using envA = await Env.create(browser, { site: a });
  await using envB = await Env.create(browser, { site: b });
  await envA.evaluate(`document.cookie = "who=a; path=/"; localStorage.setItem("k", "a")`);
  await envB.evaluate(`document.cookie = "who=b; path=/"; localStorage.setItem("k", "b")`);
  // A fork of A warms the pool; the ready contexts it leaves are made before B's fork.
  const [forkA] = await envA.fork(1, { branch: brancher(a, copies) });
  await until("the pool to refill", () => pool.ready === pool.size);
  const pooled = contextIds(browser);
  const [forkB] = await envB.fork(1, { branch: brancher(b, copies) });
  const context = envInternals(forkB!).context;
  assert(pooled.has(context.id), "the fork of B took a context from the pool");
  assertEquals(
    await forkB!.evaluate(`[document.cookie, localStorage.getItem("k"), localStorage.length]`),
    ["srv=1; who=b", "b", 1],
  );
  // The whole context: no cookie of A's origin, nor of any host but the fork's.
  const { cookies } = await browserInternals(browser).connection.send("Storage.getCookies", {
    browserContextId: context.id,
  });
  const host = new URL(forkB!.site!.origin).hostname;
  assertEquals(cookies.map((c) => c.domain).filter((d) => d !== host), []);
  assertEquals(cookies.map((c) => `${c.name}=${c.value}`).sort(), ["srv=1", "who=b"]);
  await forkA!.close();
  await forkB!.close();
});

Deno.test("ContextPool: concurrent forks never share a context, and the pool stays within its bound and refills", async () => {
  await using rig = await poolRig();
  const { browser, sandbox, pool, copies } = rig;
  pool.size = 2;
  const a = await sandbox.create();
  const b = await sandbox.create();
  await using envA = await Env.create(browser, { site: a });
  await using envB = await Env.create(browser, { site: b });
  // Warm the one kind both share (same gateway, viewport and settle options).
  await Promise.all((await envA.fork(1, { branch: brancher(a, copies) })).map((f) => f.close()));
  await until("the pool to fill", () => pool.ready === 2);
  assertEquals(pool.filling, 0);
  const [fromA, fromB] = await Promise.all([
    envA.fork(3, { branch: brancher(a, copies) }),
    envB.fork(3, { branch: brancher(b, copies) }),
  ]);
  const forks = [...fromA, ...fromB];
  const ids = forks.map((f) => envInternals(f).context.id);
  ids.push(envInternals(envA).context.id, envInternals(envB).context.id);
  assertEquals(new Set(ids).size, ids.length, "every env has a context of its own");
  // Each fork reaches its own copy: a context handed twice would show another origin.
  for (const fork of forks) {
    assertEquals(await fork.evaluate("location.origin"), fork.site!.origin);
  }
  // Refilled, never past the bound.
  assert(pool.ready + pool.filling <= 2, `${pool.ready} ready + ${pool.filling} filling`);
  await until("the pool to refill", () => pool.ready === 2);
  assertEquals(pool.ready + pool.filling, 2);
  // Shrunk, then off: the contexts it held are closed.
  const before = browserInternals(browser).contexts.length;
  pool.size = 1;
  assertEquals(pool.ready, 1);
  pool.size = 0;
  assertEquals(pool.ready, 0);
  await until(
    "the pooled contexts to close",
    () => browserInternals(browser).contexts.length === before - 2,
  );
  // Off: a fork makes its own context and nothing is warmed.
  const [cold] = await envA.fork(1, { branch: brancher(a, copies) });
  assertEquals(pool.ready + pool.filling, 0);
  await cold!.close();
  for (const fork of forks) await fork.close();
});

Deno.test("ContextPool: a pooled context keeps the env's viewport and origin policy", async () => {
  await using rig = await poolRig();
  const { browser, sandbox, pool, copies } = rig;
  const wide = await sandbox.create();
  const narrow = await sandbox.create();
  const other = await sandbox.create();
  await using envWide = await Env.create(browser, {
    site: wide,
    viewport: { width: 1100, height: 700 },
  });
  await using envNarrow = await Env.create(browser, {
    site: narrow,
    viewport: { width: 500, height: 400 },
  });
  await Promise.all(
    (await envWide.fork(1, { branch: brancher(wide, copies) })).map((f) => f.close()),
  );
  await until("the wide kind to fill", () => pool.ready === pool.size);
  const pooled = contextIds(browser);
  // The narrow env's fork must not take a wide context: its kind is its own.
  const [narrowFork] = await envNarrow.fork(1, { branch: brancher(narrow, copies) });
  assert(!pooled.has(envInternals(narrowFork!).context.id));
  assertEquals(await narrowFork!.evaluate("[innerWidth, innerHeight]"), [500, 400]);
  await until("both kinds to fill", () => pool.ready === 2 * pool.size);
  const pooledAgain = contextIds(browser);
  const [wideFork] = await envWide.fork(1, { branch: brancher(wide, copies) });
  assert(pooledAgain.has(envInternals(wideFork!).context.id));
  assertEquals(await wideFork!.evaluate("[innerWidth, innerHeight]"), [1100, 700]);
  // Its origin policy is the copy's origin alone: another env's is refused.
  assertEquals(await wideFork!.evaluate("fetch('/').then((r) => r.status)"), 200);
  const refused = await wideFork!.evaluate(
    `fetch(${
      JSON.stringify(other.origin + "/")
    }, { mode: "no-cors" }).then(() => "reached", () => "refused")`,
  );
  assertEquals(refused, "refused");
  // The narrow kind, warmed by the narrow fork, serves the next one.
  const pooledNarrow = contextIds(browser);
  const [narrowAgain] = await envNarrow.fork(1, { branch: brancher(narrow, copies) });
  assert(pooledNarrow.has(envInternals(narrowAgain!).context.id));
  assertNotEquals(envInternals(narrowAgain!).context.id, envInternals(narrowFork!).context.id);
  assertEquals(await narrowAgain!.evaluate("[innerWidth, innerHeight]"), [500, 400]);
  for (const fork of [narrowFork!, wideFork!, narrowAgain!]) await fork.close();
});

Deno.test("ContextPool: forks of an env with no site use it; forks of a site with no spare origins leave it empty", async () => {
  await using rig = await poolRig();
  const { browser, sandbox, pool, copies } = rig;
  // A site without `spares` (as a container backend's): the pool cannot know a copy's origin.
  const a = await sandbox.create();
  const bare = { origin: a.origin, reset: () => a.reset() };
  await using envA = await Env.create(browser, { site: bare });
  const [forkA] = await envA.fork(1, {
    branch: async (at) => {
      assertEquals(at, undefined);
      const copy = await a.fork!();
      copies.push(copy);
      return { site: copy, release: () => copy.destroy() };
    },
  });
  assertEquals(pool.ready + pool.filling, 0);
  await forkA!.close();
  // No site: every fork has the parent's spec, so ready pages of it serve the next fork.
  await using envB = await Env.create(browser, {
    startUrl: "data:text/html,<title>bare</title>",
    viewport: { width: 640, height: 480 },
  });
  await Promise.all((await envB.fork(1)).map((f) => f.close()));
  await until("the pool to fill", () => pool.ready === pool.size);
  const pooled = contextIds(browser);
  const [forkB] = await envB.fork(1);
  assert(pooled.has(envInternals(forkB!).context.id));
  assertEquals(await forkB!.evaluate("[document.title, innerWidth]"), ["bare", 640]);
  await forkB!.close();
});

Deno.test("Browser.launch() refuses a context pool size that is not a whole number", async () => {
  await assertRejects(() => Browser.launch({ contextPool: -1 }), RangeError, "contextPool");
  await assertRejects(() => Browser.launch({ contextPool: 1.5 }), RangeError, "contextPool");
});

Deno.test("ContextPool: closing a browser leaves none of its pooled contexts behind", async () => {
  await using host = await Browser.launch();
  const endpoint = browserInternals(host).process!.wsEndpoint;
  const hostConnection = browserInternals(host).connection;
  const browser = await Browser.connect(endpoint);
  const pool = ContextPool.of(browser);
  await using gateway = new Gateway();
  await using sandbox = new FixtureSandbox(site, { gateway });
  const copies: Instance[] = [];
  let pooled: Set<string>;
  try {
    const a = await sandbox.create();
    const env = await Env.create(browser, { site: a });
    await Promise.all(
      (await env.fork(1, { branch: brancher(a, copies) })).map((f) => f.close()),
    );
    await until("the pool to fill", () => pool.ready === pool.size);
    pooled = contextIds(browser);
    await env.close();
  } finally {
    await browser.close();
    for (const copy of copies) await copy.destroy();
  }
  const { browserContextIds } = await hostConnection.send("Target.getBrowserContexts");
  assertEquals(browserContextIds.filter((id) => pooled.has(id)), []);
  const { targetInfos } = await hostConnection.send("Target.getTargets");
  assertEquals(
    targetInfos.filter((t) => t.browserContextId && pooled.has(t.browserContextId)),
    [],
  );
  // The spare origins the pool held are given back to the gateway.
  assertEquals(gateway.size, 1);
});
