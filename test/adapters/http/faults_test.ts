// The server under bad input and broken parts: thousands of malformed
// requests never get a 5xx; a crashed renderer and a killed Chromium are
// env_error for the sessions they hit, and everything else goes on.
import { assert, assertEquals, assertMatch } from "@std/assert";
import { startServer } from "../../../adapters/http/server.ts";
import { WebServClient } from "../../../adapters/client/mod.ts";
import type { BrowserContext } from "../../../engine/browser/browser_context.ts";
import { waitFor } from "../../_util/wait.ts";
import type { Action } from "../../../adapters/client/types.ts";
import { browserInternals } from "../../../engine/browser/browser.ts";
import { xorshift32 } from "../../../fixtures/sites/kit/xorshift.ts";

function random(seed: number): () => number {
  const next = xorshift32(seed);
  return () => next() / 2 ** 32;
}

Deno.test("the server answers 5,000 malformed requests without a 5xx and stays healthy", async () => {
  await using server = await startServer({ port: 0, maxSessions: 4 });
  const client = new WebServClient(server.url);
  const live = await client.createSession({ site: "demo" });
  const closed = await client.createSession({ site: "demo" });
  await client.close(closed.id);
  const next = random(11);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)]!;
  const values: unknown[] = [
    null,
    true,
    -1,
    1e308,
    "",
    "x",
    [],
    {},
    [1, "a", null],
    { action: "click" },
    { action: "click", id: "7" },
    { action: "type", id: 1, text: 5 },
    { action: 42 },
    { task: 7 },
    { site: ["demo"] },
    { url: "javascript:alert(1)" },
    { url: "http://127.0.0.1:1/" },
    { seed: "seven" },
    { n: 1000, site: "demo" },
    { steps: [] },
    { steps: [{ session_id: 5 }] },
    { steps: "all" },
    { viewport: { width: -5, height: 1e9 } },
    { observation: "pictures" },
    { request_id: "" },
    { action: { action: "scroll", amount: -1 } },
  ];
  const nested = (depth: number): unknown => depth === 0 ? 0 : { a: [nested(depth - 1)] };
  const ids = [live.id, closed.id, "s-unknown", "", "%00", "..%2F..", "x".repeat(300)];
  const paths = [
    () => "/v1/sessions",
    () => `/v1/sessions/${pick(ids)}`,
    () => `/v1/sessions/${pick(ids)}/step`,
    () => `/v1/sessions/${pick(ids)}/observe?mode=${pick(["text", "json", "diff", "x", ""])}`,
    () => `/v1/sessions/${pick(ids)}/screenshot?marks=${pick(["true", "maybe"])}`,
    () => `/v1/sessions/${pick(ids)}/reset`,
    () => `/v1/sessions/${pick(ids)}/verify`,
    () => "/v1/groups",
    () => "/v1/batch/step",
    () => `/v1/tools?format=${pick(["openai", "anthropic", "xml"])}`,
    () => "/v1/tasks",
    () => "/health",
    () => "/nope",
    () => "/openapi.json",
  ];
  function body(): string | undefined {
    const r = next();
    if (r < 0.1) return undefined;
    if (r < 0.2) return "{not json";
    if (r < 0.25) return JSON.stringify(nested(2000));
    if (r < 0.27) return JSON.stringify({ text: "y".repeat(2 << 20) });
    if (r < 0.5) return JSON.stringify({ action: pick(values), request_id: pick(["a", "b", 3]) });
    return JSON.stringify(pick(values));
  }
  const statuses = new Map<number, number>();
  const failures: string[] = [];
  let sent = 0;
  const TOTAL = 5000;
  async function worker(): Promise<void> {
    while (sent < TOTAL) {
      sent++;
      const method = pick(["GET", "POST", "POST", "POST", "DELETE", "PUT"]);
      const path = pick(paths)();
      const payload = method === "GET" ? undefined : body();
      const headers: Record<string, string> = {};
      if (payload !== undefined && next() < 0.9) headers["content-type"] = "application/json";
      const response = await fetch(`${server.url}${path}`, {
        method,
        headers,
        ...(payload !== undefined ? { body: payload } : {}),
      });
      statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
      if (response.status >= 500) {
        // The refusal's body names the failure's code: what to look for when this fails.
        const answer = (await response.text()).slice(0, 300);
        failures.push(
          `${method} ${path.slice(0, 80)} ${payload?.slice(0, 80)} → ${response.status} ${answer}`,
        );
      } else await response.body?.cancel();
    }
  }
  await Promise.all(Array.from({ length: 8 }, worker));
  assertEquals(failures, [], JSON.stringify([...statuses]));

  assert(sent >= TOTAL);
  // Healthy afterwards: nothing left behind once the sessions close, new sessions open.
  for (const state of await client.list()) await client.close(state.id);
  const health = await client.health();
  assertEquals([health.status, health.live, health.free], ["healthy", 0, 4]);
  const fresh = await client.createSession({ task: "demo/add-note/1" });
  assertEquals((await client.step(fresh.id, { action: "reload" })).status, "ok");
});

Deno.test("step() reports env_error when a renderer crashes, and reset() recovers it", async () => {
  await using server = await startServer({ port: 0 });
  const client = new WebServClient(server.url);
  const victim = await client.createSession({ task: "demo/add-note/1" });
  const bystander = await client.createSession({ task: "demo/add-note/1" });
  const origin = new URL(victim.observation.url).origin;
  let page;
  for (const candidate of browserInternals(server.browser!).contexts.flatMap((c) => c.pages)) {
    const { result } = await candidate.session.send("Runtime.evaluate", {
      expression: "location.origin",
      returnByValue: true,
    });
    if (result.value === origin) page = candidate;
  }
  assert(page, "the victim's page");
  page.session.send("Page.crash").catch(() => {});
  let crashed = await client.step(victim.id, { action: "reload" });
  // The crash event may trail the command by a moment; the next step sees it.
  if (crashed.status === "ok") crashed = await client.step(victim.id, { action: "reload" });
  assertEquals(crashed.status, "env_error");
  assertEquals(crashed.reward, undefined);
  assertEquals(crashed.observation, null);
  assertEquals((await client.step(bystander.id, { action: "reload" })).status, "ok");
  const reset = await client.reset(victim.id);
  assert(reset.observation.text.includes("Notes"));
  assertEquals((await client.step(victim.id, { action: "reload" })).status, "ok");
});

Deno.test("step() reports env_error when Chromium dies, and the server starts a new one", async () => {
  await using server = await startServer({ port: 0 });
  const client = new WebServClient(server.url);
  const before = await client.createSession({ task: "demo/add-note/1" });
  const old = server.browser!;
  await browserInternals(old).process!.kill();
  const failed = await client.step(before.id, { action: "reload" });
  assertEquals(failed.status, "env_error");
  assertEquals(failed.info.error?.code, "browser-gone");
  assertEquals(failed.reward, undefined);
  // A new session lands on a new browser.
  const fresh = await client.createSession({ task: "demo/add-note/1" });
  assert(server.browser !== old && server.browser!.connected);
  assertEquals((await client.step(fresh.id, { action: "reload" })).status, "ok");
  // The old session recovers with a reset.
  await client.reset(before.id);
  assertEquals((await client.step(before.id, { action: "reload" })).status, "ok");
  assertEquals((await client.health()).browser, true);
});

Deno.test("step() reports env_error when the sandbox instance is killed from outside, and reset() recovers", async () => {
  await using server = await startServer({ port: 0 });
  const client = new WebServClient(server.url);
  const victim = await client.createSession({ task: "demo/add-note/1" });
  const bystander = await client.createSession({ task: "demo/add-note/1" });
  await server.sessions.instance(victim.id)!.destroy();
  const lost = await client.step(victim.id, { action: "reload" });
  assertEquals(lost.status, "env_error");
  assertEquals(lost.info.error?.code, "sandbox-lost");
  assertEquals(lost.reward, undefined);
  assertEquals((await client.step(bystander.id, { action: "reload" })).status, "ok");
  const reset = await client.reset(victim.id);
  assert(reset.observation.text.includes("Notes"), reset.observation.text);
  assertEquals((await client.step(victim.id, { action: "reload" })).status, "ok");
  assertEquals((await client.verify(victim.id)).reward, 0);
});

Deno.test("createSession() leaves no browser context behind when the env opens after its deadline", async () => {
  // The start page answers only when the test lets it, well after the deadline.
  const { promise: release, resolve: letGo } = Promise.withResolvers<void>();
  await using site = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async () => {
    await release;
    return new Response("<title>Late</title><button>Go</button>", {
      headers: { "content-type": "text/html" },
    });
  });
  await using server = await startServer({ port: 0, stepTimeoutMs: 1 });
  // Every context the browser opens, seen as it is made. The create opens
  // one, or none when its deadline passes first (a loaded machine); closing
  // what it opened is the last thing the abandoned start does.
  const browser = server.browser!;
  const opened: BrowserContext[] = [];
  let calls = 0;
  let ended = 0;
  const internals = browserInternals(browser);
  const open = internals.newContext.bind(internals);
  internals.newContext = async (options) => {
    calls++;
    try {
      const context = await open(options);
      opened.push(context);
      return context;
    } finally {
      ended++;
    }
  };
  // One create, not retried after its 503's Retry-After.
  const client = new WebServClient(server.url, { retries: 0 });
  const url = `http://127.0.0.1:${site.addr.port}/`;
  const refused = await client.createSession({ url }).catch((e) => e);
  assertEquals([refused.status, refused.code], [503, "timeout"]);
  assertEquals((await client.health()).live, 0);
  // Env.create closes what it opened when its deadline passes, even while the
  // start page is still loading: the one context it made is made and closed.
  await waitFor(() => ended === calls && opened.every((context) => context.closed), {
    message: "the abandoned create closes the context it opened",
  });
  assert(opened.length <= 1, `the create opened ${opened.length} contexts`);
  assertEquals(browserInternals(browser).contexts.length, 0);
  letGo();
  assertEquals([calls, browserInternals(browser).contexts.length], [opened.length, 0]);
});

Deno.test("step() reports an internal TypeError as env_error internal, never action_error", async () => {
  await using server = await startServer({ port: 0 });
  const client = new WebServClient(server.url);
  const victim = await client.createSession({ task: "demo/add-note/1" });
  const malformed = await client.step(victim.id, { action: "jump" } as unknown as Action);
  assertEquals(malformed.status, "action_error");
  assertEquals(malformed.info.error?.code, "invalid-action");
  const pages = browserInternals(server.browser!).contexts.flatMap((c) => c.pages);
  assertEquals(pages.length, 1);
  const session = pages[0]!.session;
  const send = session.send.bind(session);
  // An internal check throwing a TypeError mid-step, injected at the reload command.
  session.send = ((method: string, ...rest: unknown[]) => {
    if (method === "Page.reload") throw new TypeError("Cannot reload: an injected internal check");
    return (send as (method: string, ...rest: unknown[]) => Promise<unknown>)(method, ...rest);
  }) as typeof session.send;
  const failed = await client.step(victim.id, { action: "reload" });
  assertEquals(failed.status, "env_error");
  assertEquals(failed.info.error?.code, "internal");
  assertEquals(failed.reward, undefined);
  // Logged with its stack and counted: our bugs are never silent.
  const metrics = await (await fetch(`${server.url}/metrics`)).text();
  assertMatch(metrics, /^webserv_failures_total\{kind="internal"\} [1-9]/m);
  session.send = send;
  assertEquals((await client.reset(victim.id)).observation.url, victim.observation.url);
  assertEquals((await client.step(victim.id, { action: "reload" })).status, "ok");
});

Deno.test("a close that cuts an observe, a screenshot or a step in flight answers as a closed session: 410 or `expired`, never a 503 to retry", async () => {
  await using server = await startServer({ port: 0 });
  const client = new WebServClient(server.url);
  const calls: Record<string, (id: string) => Promise<number | string>> = {
    observe: async (id) => {
      const response = await fetch(`${server.url}/v1/sessions/${id}/observe?mode=text`);
      await response.body?.cancel();
      return response.status;
    },
    screenshot: async (id) => {
      const response = await fetch(`${server.url}/v1/sessions/${id}/screenshot`);
      await response.body?.cancel();
      return response.status;
    },
    step: async (id) => (await client.step(id, { action: "reload" })).status,
  };
  for (const [name, call] of Object.entries(calls)) {
    const session = await client.createSession({ task: "demo/add-note/1" });
    let page;
    for (const candidate of browserInternals(server.browser!).contexts.flatMap((c) => c.pages)) {
      const { result } = await candidate.session.send("Runtime.evaluate", {
        expression: "location.href",
        returnByValue: true,
      });
      if (result.value === session.observation.url) page = candidate;
    }
    assert(page, "the session's page");
    // The page's main thread held for 3 s: the call is in flight (its first
    // command sent, its answer held) when the close arrives.
    const send = page.session.send.bind(page.session);
    let sent!: () => void;
    const inFlight = new Promise<void>((resolve) => sent = resolve);
    await send("Runtime.evaluate", {
      expression: "setTimeout(() => { const t = Date.now() + 3000; while (Date.now() < t); })",
    });
    page.session.send = ((method: string, ...rest: unknown[]) => {
      sent();
      return (send as (method: string, ...rest: unknown[]) => Promise<unknown>)(method, ...rest);
    }) as typeof page.session.send;
    const answer = call(session.id);
    await inFlight;
    await client.close(session.id);
    const got = await answer;
    assertEquals(got, name === "step" ? "expired" : 410, `${name} cut by a close`);
  }
  assertEquals((await client.health()).status, "healthy");
});
