// Hostile input on the fork routes (POST /v1/sessions/{id}/fork and the MCP
// fork tool) and on the dashboard's run scoping: bodies too large or too
// deep, counts of every wrong shape, unknown fields, a flood of concurrent
// forks against the session cap, a run named by a path, a huge query string.
// Each is refused with a typed, actionable answer, nothing leaks, and the
// server goes on serving.
import { assert, assertEquals, assertMatch, assertStringIncludes } from "@std/assert";
import { startServer } from "../../../adapters/http/server.ts";
import { WebServClient } from "../../../adapters/client/mod.ts";
import { rawRequest } from "./_hostile.ts";

/** `{"a":{"a":…}}`, `depth` objects deep. */
function nested(depth: number): string {
  return `${'{"a":'.repeat(depth)}1${"}".repeat(depth)}`;
}

/** A JSON answer, read field by field. */
// deno-lint-ignore no-explicit-any
type Answer = any;

/** A POST with a JSON body, answered as status and parsed body. */
async function post(url: string, body: string): Promise<{ status: number; body: Answer }> {
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body,
  });
  const text = await response.text();
  return { status: response.status, body: text === "" ? undefined : JSON.parse(text) };
}

/**
 * The server's `webserv_live_sessions` gauge. A flood leaves the server at its
 * connection cap until it has reaped the flood's sockets, and at the cap a new
 * connection is closed at once (documented), so a refused connection is tried
 * again, for at most ten seconds.
 */
async function liveGauge(url: string): Promise<number> {
  const deadline = Date.now() + 10_000;
  let text: string;
  for (;;) {
    try {
      text = await (await fetch(`${url}/metrics`)).text();
      break;
    } catch (error) {
      if (!(error instanceof TypeError) || Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  const value = text.match(/^webserv_live_sessions(?:\{[^}]*\})? (\d+)$/m)?.[1];
  if (value === undefined) throw new Error(`no webserv_live_sessions in /metrics:\n${text}`);
  return Number(value);
}

const BAD_COUNTS: [string, unknown][] = [
  ["0", 0],
  ["-1", -1],
  ["1e9", 1e9],
  ['"4"', "4"],
  ["4.5", 4.5],
  ["null", null],
];

Deno.test("POST /v1/sessions/{id}/fork refuses a 1 MB body (413), a 10,000-deep one (400), every wrong n and unknown fields (400), then forks", async () => {
  await using server = await startServer({ port: 0, maxSessions: 3 });
  const client = new WebServClient(server.url);
  const parent = await client.createSession({ task: "demo/add-note/1" });
  const route = `${server.url}/v1/sessions/${parent.id}/fork`;

  const huge = await post(route, JSON.stringify({ n: 1, pad: "x".repeat(1 << 20) }));
  assertEquals([huge.status, huge.body.code], [413, "too-large"]);
  const deep = await post(route, `{"n":1,"pad":${nested(10_000)}}`);
  assertEquals([deep.status, deep.body.code], [400, "too-deep"]);

  for (const [label, n] of BAD_COUNTS) {
    const refused = await post(route, JSON.stringify({ n }));
    assertEquals(refused.status, 400, `n = ${label}`);
    assertStringIncludes(JSON.stringify(refused.body), "n", `n = ${label}: the answer names n`);
  }
  const missing = await post(route, "{}");
  assertEquals(missing.status, 400, "no n");
  const unknown = await post(route, JSON.stringify({ n: 1, copies: 2 }));
  assertEquals(unknown.status, 400, "an unknown field");
  assertStringIncludes(JSON.stringify(unknown.body), "copies");

  // None of that opened a session; a good request still forks.
  assertEquals(await liveGauge(server.url), 1);
  const { sessions } = await client.fork(parent.id, 1);
  assertEquals(sessions.length, 1);
  assertEquals(await liveGauge(server.url), 2);
});

Deno.test("10,000 concurrent forks: as many as the cap holds fork, the rest get 429 with a usable message or find the connection cap, none leaks, the server goes on", async () => {
  const maxSessions = 4;
  await using server = await startServer({ port: 0, maxSessions });
  const client = new WebServClient(server.url, { timeoutMs: 600_000 });
  const parent = await client.createSession({ task: "demo/add-note/1" });
  const route = `${server.url}/v1/sessions/${parent.id}/fork`;
  // The flood's own connection pool, closed after it, so its idle keep-alive
  // sockets do not hold the server at its connection cap for what follows.
  const flood = Deno.createHttpClient({});
  const answers = await Promise.all(
    Array.from({ length: 10_000 }, async () => {
      try {
        const response = await fetch(route, {
          client: flood,
          method: "POST",
          headers: { "content-type": "application/json" },
          body: '{"n":1}',
        });
        return {
          status: response.status,
          retryAfter: response.headers.get("retry-after"),
          body: await response.json() as Answer,
        };
      } catch {
        // Past --max-connections (512) a connection is closed at once: the
        // server's first bound, before any route runs.
        return { status: 0, retryAfter: null, body: undefined };
      }
    }),
  );
  flood.close();
  const forked = answers.filter((a) => a.status === 201);
  const refused = answers.filter((a) => a.status === 429);
  const closed = answers.filter((a) => a.status === 0);
  // An admitted fork that the flood starves past its deadline is ours: a
  // typed 503, its copies torn down.
  const failed = answers.filter((a) => a.status === 503);
  const statuses = [...new Set(answers.map((a) => a.status))].join(", ");
  assertEquals(
    forked.length + refused.length + closed.length + failed.length,
    answers.length,
    `every answer is 201, 429, 503 or a closed connection: ${statuses}`,
  );
  for (const answer of failed) assertEquals(typeof answer.body.code, "string");
  assert(refused.length > 0, "the session cap answered some with 429");
  assert(forked.length <= maxSessions - 1, `${forked.length} forks: past the cap`);
  for (const answer of refused) {
    assertEquals(answer.body.code, "capacity");
    assertMatch(answer.body.message, /Cannot fork 1 session\(s\): \d+ of 4 are live/);
    assert(Number(answer.retryAfter) > 0, "with Retry-After");
  }
  assertEquals(await liveGauge(server.url), 1 + forked.length, "only the answered forks live");

  // Closing the forks frees their places: no sandbox or slot stayed behind.
  for (const answer of forked) await client.close(answer.body.sessions[0].id);
  assertEquals(await liveGauge(server.url), 1);
  assertEquals((await client.health()).live, 1);
  const again = await client.fork(parent.id, maxSessions - 1);
  assertEquals(again.sessions.length, maxSessions - 1);
  const observed = await client.observe(again.sessions[0]!.id);
  assertStringIncludes(observed.text, "button");
});

Deno.test("the MCP fork tool refuses every wrong n and unknown fields with a JSON-RPC error, a 10,000-deep call at the body, and forks after", async () => {
  await using server = await startServer({ port: 0, maxSessions: 3 });
  const client = new WebServClient(server.url);
  const parent = await client.createSession({ task: "demo/add-note/1" });
  const mcp = `${server.url}/mcp?session=${parent.id}`;
  const call = (args: unknown) =>
    post(
      mcp,
      JSON.stringify({
        jsonrpc: "2.0",
        id: 7,
        method: "tools/call",
        params: { name: "fork", arguments: args },
      }),
    );

  for (const [label, n] of [...BAD_COUNTS, ["17", 17]] as [string, unknown][]) {
    const refused = await call({ n });
    assertEquals(refused.status, 200, `n = ${label}: a JSON-RPC answer`);
    assertEquals(refused.body.id, 7);
    assert(refused.body.error !== undefined, `n = ${label}: ${JSON.stringify(refused.body)}`);
    assertStringIncludes(refused.body.error.message, "Invalid fork arguments", `n = ${label}`);
  }
  const unknown = await call({ n: 1, copies: 2 });
  assertStringIncludes(unknown.body.error?.message ?? "", "Invalid fork arguments");
  const notAnObject = await call("4");
  assert(notAnObject.body.error !== undefined, JSON.stringify(notAnObject.body));
  const deep = await post(
    mcp,
    `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":${nested(10_000)}}`,
  );
  assertEquals([deep.status, deep.body.code], [400, "too-deep"]);
  const huge = await call({ n: 1, pad: "x".repeat(1 << 20) });
  assertEquals([huge.status, huge.body.code], [413, "too-large"]);

  assertEquals(await liveGauge(server.url), 1, "no refused call opened a session");
  const forked = await call({ n: 2 });
  assertEquals(forked.body.error, undefined, JSON.stringify(forked.body));
  assertEquals(forked.body.result.structuredContent.sessions.length, 2);
  const full = await call({ n: 1 });
  assertEquals(full.body.error.data, { status: 429, code: "capacity" });
  assertStringIncludes(full.body.error.message, "of 3 are live");
});

Deno.test("the dashboard refuses a run named by a path or a huge query with a 404 naming the runs, and goes on serving", async () => {
  const runDir = await Deno.makeTempDir();
  try {
    await using server = await startServer({ port: 0, runDir });
    const client = new WebServClient(server.url);
    const session = await client.createSession({ site: "demo" });
    await client.step(session.id, { action: "scroll", direction: "down" });
    const routes = [
      "/dashboard/stats",
      "/dashboard/episodes",
      `/dashboard/trajectories/${session.id}`,
      `/dashboard/sessions/${session.id}`,
      "/dashboard/files/screenshots/x.png",
    ];
    for (const run of ["../../etc", "../../../../etc/passwd", "/etc", "%2e%2e%2f%2e%2e%2fetc"]) {
      for (const route of routes) {
        const response = await fetch(`${server.url}${route}?run=${encodeURIComponent(run)}`);
        const body = await response.json();
        assertEquals([response.status, body.code], [404, "not-found"], `${route} ?run=${run}`);
        assertStringIncludes(body.message, "GET /dashboard/runs lists them", route);
      }
    }
    // A 16 KiB run name: refused, its echo cut short.
    const long = "r".repeat(16 << 10);
    for (const route of routes) {
      const response = await fetch(`${server.url}${route}?run=${long}`);
      assert([400, 404, 414].includes(response.status), `${route}: ${response.status}`);
      const text = await response.text();
      assert(text.length < 4_096, `${route}: the answer does not echo the query (${text.length})`);
    }
    // A 1 MiB query string (fetch builds no such URL: sent raw) is refused
    // before a route runs, or its connection closed.
    const port = Number(new URL(server.url).port);
    const enormous = await rawRequest(port, [
      `GET /dashboard/stats?run=${"q".repeat(1 << 20)} HTTP/1.1`,
      `host: 127.0.0.1:${port}`,
    ]).catch(() => ({ status: 0, body: "" }));
    assert(enormous.status === 0 || enormous.status >= 400, `status ${enormous.status}`);
    assert(enormous.body.length < 4_096, "the answer does not echo the query");

    // The dashboard and the session still answer.
    const stats = await fetch(`${server.url}/dashboard/stats`);
    assertEquals(stats.status, 200);
    await stats.body?.cancel();
    const observed = await client.observe(session.id);
    assertStringIncludes(observed.text, "#");
  } finally {
    await Deno.remove(runDir, { recursive: true });
  }
});

/** A counter or gauge of `/metrics`, by name. */
async function metric(url: string, name: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const value = text.match(new RegExp(`^${name}(?:\\{[^}]*\\})? (\\d+)$`, "m"))?.[1];
  if (value === undefined) throw new Error(`no ${name} in /metrics:\n${text}`);
  return Number(value);
}

Deno.test("a client that drops its fork request half-way leaks nothing: the forks made are leased, reaped when idle, and the same fork works after", async () => {
  // Idle sessions are reaped after 2 s; the parent is kept alive by observing it.
  await using server = await startServer({ port: 0, maxSessions: 4, idleTimeoutMs: 2_000 });
  const client = new WebServClient(server.url);
  const parent = await client.createSession({ task: "demo/add-note/1" });
  const created = await metric(server.url, "webserv_sessions_created_total");

  // The request is dropped while the server copies the episode three ways.
  const dropped = new AbortController();
  const request = fetch(`${server.url}/v1/sessions/${parent.id}/fork`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ n: 3 }),
    signal: dropped.signal,
  }).catch((error: unknown) => error);
  // Dropped once the server holds it: the live gauge counts a fork under way.
  const holding = Date.now() + 10_000;
  while ((await liveGauge(server.url)) === 1) {
    assert(Date.now() < holding, "the server never took the fork request");
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  dropped.abort();
  assert((await request) instanceof Error, "the client's request was dropped");

  // The server finished the fork it was asked for: three leased sessions, then reaped.
  const reaped = Date.now() + 30_000;
  let live = await liveGauge(server.url);
  while (live > 1) {
    assert(Date.now() < reaped, `${live - 1} dropped fork(s) still live after 30 s`);
    await client.observe(parent.id);
    await new Promise((resolve) => setTimeout(resolve, 250));
    live = await liveGauge(server.url);
  }
  assertEquals(live, 1, "only the parent is live");
  assertEquals(
    await metric(server.url, "webserv_sessions_created_total"),
    created + 3,
    "the dropped request's three forks were made, then reaped",
  );

  // The capacity they held is back: the same fork of three fits again.
  const again = await client.fork(parent.id, 3);
  assertEquals(again.sessions.length, 3);
  for (const fork of again.sessions) await client.close(fork.id);
  await client.close(parent.id);
});
