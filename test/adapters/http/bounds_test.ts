// Everything a client can grow has a bound and is retired (DESIGN.md, "A hostile policy is the
// normal case"): seeds (their templates, bases, spares, runtimes) once idle past a grace period,
// the oldest idle first past --max-seeds, and a new seed refused with 429 when every held seed
// is busy; proposals by count and size, listed in pages; a WebSocket's queued steps once it
// leaves, and past a cap per connection; connections that send nothing.
import { assert, assertEquals, assertMatch } from "@std/assert";
import { startServer } from "../../../adapters/http/server.ts";
import { WebServClient } from "../../../adapters/client/mod.ts";
import { waitFor, within } from "../../_util/wait.ts";
import { siteByName } from "../../../fixtures/sites/mod.ts";
import { seededDatabase } from "../../../fixtures/sites/kit/mod.ts";

/** A gauge's value in the server's `/metrics`, or `undefined` when it is not there. */
async function gauge(url: string, name: string): Promise<number | undefined> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const value = text.match(new RegExp(`^${name} (\\d+)$`, "m"))?.[1];
  return value === undefined ? undefined : Number(value);
}

Deno.test("an idle seed's state is retired after the grace period, and back to 0 once every session closed", async () => {
  await using server = await startServer({ port: 0, maxSeeds: 8, seedGraceMs: 20 });
  const client = new WebServClient(server.url);
  const ids: string[] = [];
  for (const seed of [1, 2, 3, 4]) {
    ids.push((await client.createSession({ site: "demo", seed })).id);
  }
  assertEquals(await gauge(server.url, "webserv_seeds"), 4);
  assertEquals(await gauge(server.url, "webserv_seed_state"), 4, "one template per seed");
  for (const id of ids) await client.close(id);
  await waitFor(async () => (await gauge(server.url, "webserv_seed_state")) === 0, {
    message: "the templates of seeds 1..4 are retired once their sessions closed",
  });
  assertEquals(await gauge(server.url, "webserv_seeds"), 0);
  // A retired seed opens again, seeded anew.
  const again = await client.createSession({ site: "demo", seed: 2 });
  assertEquals(await gauge(server.url, "webserv_seed_state"), 1);
  await client.close(again.id);
});

Deno.test("past --max-seeds the least recently used idle seed is retired, and a new seed is refused with 429 while all are busy", async () => {
  await using server = await startServer({ port: 0, maxSeeds: 2, seedGraceMs: 600_000 });
  const client = new WebServClient(server.url);
  const one = await client.createSession({ site: "demo", seed: 1 });
  const two = await client.createSession({ site: "demo", seed: 2 });
  // Another session on a held seed is no new seed.
  const twoAgain = await client.createSession({ site: "demo", seed: 2 });
  const refused = await fetch(`${server.url}/v1/sessions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ site: "demo", seed: 3 }),
  });
  assertEquals(refused.status, 429);
  assertEquals((await refused.json()).code, "seed-capacity");
  assert(Number(refused.headers.get("retry-after")) > 0, "with Retry-After");
  assertEquals(await gauge(server.url, "webserv_seed_state"), 2);

  await client.close(one.id);
  // Seed 1 is idle (its grace far from over): seed 3 takes its place, at once.
  const three = await client.createSession({ site: "demo", seed: 3 });
  assertEquals(await gauge(server.url, "webserv_seeds"), 2);
  assertEquals(await gauge(server.url, "webserv_seed_state"), 2);
  const text = await (await fetch(`${server.url}/metrics`)).text();
  assertMatch(text, /^webserv_seeds_retired_total 1$/m);
  for (const id of [two.id, twoAgain.id, three.id]) await client.close(id);
});

/** Opens a WebSocket to the server's `/ws` and waits until it is open. */
async function openSocket(url: string): Promise<WebSocket> {
  const socket = new WebSocket(`${url.replace("http", "ws")}/ws`);
  await new Promise((resolve, reject) => {
    socket.onopen = resolve;
    socket.onerror = reject;
  });
  return socket;
}

/** The next message of a socket. */
function nextMessage(socket: WebSocket): Promise<{ type: string; data: Record<string, unknown> }> {
  return new Promise((resolve) => {
    socket.addEventListener("message", (event) => resolve(JSON.parse(event.data)), { once: true });
  });
}

Deno.test("a WebSocket client that queues 3,000 steps and leaves: its queue is dropped, and another session steps meanwhile", async () => {
  await using server = await startServer({ port: 0, wsMaxQueued: 5_000 });
  const client = new WebServClient(server.url);
  const other = await client.createSession({ task: "demo/add-note/3" });
  const socket = await openSocket(server.url);
  const opened = nextMessage(socket);
  socket.send(
    JSON.stringify({ type: "reset", data: { task: "demo/add-note/4", max_steps: 10_000 } }),
  );
  assertEquals((await within(opened, { message: "the reset answers" })).type, "observation");
  for (let i = 0; i < 3_000; i++) {
    socket.send(JSON.stringify({ type: "step", data: { action: "reload" } }));
  }
  await waitFor(async () => ((await gauge(server.url, "webserv_ws_queued")) ?? 0) > 100, {
    message: "the server queues the client's steps",
  });
  // Meanwhile another session's step answers.
  assertEquals((await client.step(other.id, { action: "reload" })).status, "ok");
  const closed = new Promise((resolve) => socket.onclose = resolve);
  socket.close();
  await within(closed, { message: "the socket closes" });
  assertEquals((await client.step(other.id, { action: "reload" })).status, "ok");
  await waitFor(async () => (await gauge(server.url, "webserv_ws_queued")) === 0, {
    message: "the queue of a client that left is dropped",
  });
  const text = await (await fetch(`${server.url}/metrics`)).text();
  const ran = Number(text.match(/^webserv_steps_total\{status="ok"\} (\d+)$/m)?.[1] ?? 0);
  assert(ran < 3_000, `the dropped steps never ran (${ran} ran)`);
  await waitFor(() => server.sessions.live === 1, { message: "the socket's session closes" });
  await client.close(other.id);
});

Deno.test("a WebSocket connection's queue is capped: a message past the cap is refused with an error", async () => {
  await using server = await startServer({ port: 0, wsMaxQueued: 4 });
  const socket = await openSocket(server.url);
  const opened = nextMessage(socket);
  socket.send(
    JSON.stringify({ type: "reset", data: { task: "demo/add-note/5", max_steps: 1_000 } }),
  );
  assertEquals((await within(opened, { message: "the reset answers" })).type, "observation");
  const refused = new Promise<Record<string, unknown>>((resolve) => {
    socket.addEventListener("message", (event) => {
      const message = JSON.parse(event.data);
      if (message.type === "error" && message.data.reason === "queue-full") resolve(message.data);
    });
  });
  for (let i = 0; i < 50; i++) {
    socket.send(JSON.stringify({ type: "step", data: { action: "reload" } }));
  }
  const data = await within(refused, { message: "a step past the cap is refused" });
  assertEquals(data.code, "CAPACITY_REACHED");
  const closed = new Promise((resolve) => socket.onclose = resolve);
  socket.close();
  await within(closed, { message: "the socket closes" });
  await waitFor(async () => (await gauge(server.url, "webserv_ws_queued")) === 0, {
    message: "the queue empties once the client left",
  });
});

Deno.test("proposals are bounded: the oldest retired past maxProposals, one too large refused with 413, the list paged", async () => {
  await using server = await startServer({ port: 0, maxProposals: 3 });
  const db = seededDatabase(siteByName("forum"), 4);
  const forum = db.prepare("SELECT id, slug FROM forums ORDER BY id LIMIT 1").get()!;
  const propose = (instruction: string) =>
    fetch(`${server.url}/v1/tasks/proposals`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        site: "forum",
        seed: 4,
        instruction,
        read: { table: "subscriptions", where: { forum_id: Number(forum["id"]) }, count: true },
        op: "number",
      }),
    });
  const ids: string[] = [];
  for (const variant of ["a", "b", "c", "d", "e"]) {
    const accepted = await propose(`How many members does f/${forum["slug"]} have, ${variant}?`);
    assertEquals(accepted.status, 201);
    ids.push((await accepted.json()).id);
  }
  const all = await (await fetch(`${server.url}/v1/tasks/proposals`)).json();
  assertEquals(
    all.proposals.map((p: { id: string }) => p.id),
    ids.slice(2),
    "the oldest two retired",
  );
  assertEquals(await gauge(server.url, "webserv_proposals"), 3);

  const first = await (await fetch(`${server.url}/v1/tasks/proposals?limit=2`)).json();
  assertEquals(first.proposals.map((p: { id: string }) => p.id), ids.slice(2, 4));
  assertEquals(typeof first.next_cursor, "string");
  const second = await (await fetch(
    `${server.url}/v1/tasks/proposals?limit=2&cursor=${first.next_cursor}`,
  )).json();
  assertEquals(second.proposals.map((p: { id: string }) => p.id), ids.slice(4));
  assertEquals(second.next_cursor, null);
  const badLimit = await fetch(`${server.url}/v1/tasks/proposals?limit=0`);
  assertEquals(badLimit.status, 400);
  await badLimit.body?.cancel();

  const huge = await propose(
    `How many members does f/${forum["slug"]} have? ${"x".repeat(100_000)}`,
  );
  assertEquals(huge.status, 413);
  assertEquals((await huge.json()).code, "proposal-too-large");
});

/** Reads from a connection until the server closes it: `true` at its end or a reset. */
async function closedByServer(conn: Deno.Conn): Promise<true> {
  const buffer = new Uint8Array(4096);
  for (;;) {
    try {
      if (await conn.read(buffer) === null) return true;
    } catch (error) {
      if (error instanceof Deno.errors.ConnectionReset) return true;
      throw error;
    }
  }
}

Deno.test("a connection that sends nothing, or its request head slowly, or nothing after a response, is closed", async () => {
  await using server = await startServer({
    port: 0,
    headerTimeoutMs: 300,
    connectionIdleTimeoutMs: 500,
  });
  const connect = () => Deno.connect({ hostname: "127.0.0.1", port: server.port });
  const encode = (text: string) => new TextEncoder().encode(text);
  const silent = await connect();
  const slow = await connect();
  await slow.write(encode(`GET /health HTTP/1.1\r\nHost: 127.0.0.1:${server.port}\r\n`));
  const drip = setInterval(() => slow.write(encode("X-A: b\r\n")).catch(() => {}), 50);
  const kept = await connect();
  await kept.write(encode(`GET /health HTTP/1.1\r\nHost: 127.0.0.1:${server.port}\r\n\r\n`));
  const first = new Uint8Array(4096);
  const answered = await kept.read(first);
  assert(answered !== null && new TextDecoder().decode(first).startsWith("HTTP/1.1 200"));
  try {
    const bound = { timeoutMs: 10_000 };
    await within(closedByServer(silent), { ...bound, message: "a silent connection is closed" });
    await within(closedByServer(slow), { ...bound, message: "a slow request head is cut" });
    await within(closedByServer(kept), { ...bound, message: "an idle keep-alive is closed" });
  } finally {
    clearInterval(drip);
    for (const conn of [silent, slow, kept]) {
      try {
        conn.close();
      } catch {
        // closed already
      }
    }
  }
  // The server still serves.
  assertEquals((await (await fetch(`${server.url}/health`)).json()).status, "healthy");
});

Deno.test("by default a session at the session cap may reset onto a new seed (the seed cap leaves room for it)", async () => {
  await using server = await startServer({ port: 0, maxSessions: 2 });
  const client = new WebServClient(server.url);
  const one = await client.createSession({ site: "demo", seed: 1 });
  const two = await client.createSession({ site: "demo", seed: 2 });
  const reset = await fetch(`${server.url}/v1/sessions/${one.id}/reset`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ seed: 3 }),
  });
  assertEquals(reset.status, 200, await reset.clone().text());
  await reset.body?.cancel();
  await client.close(one.id);
  await client.close(two.id);
});

Deno.test("a kept-alive connection that sends its next request head slowly is closed", async () => {
  await using server = await startServer({
    port: 0,
    headerTimeoutMs: 300,
    connectionIdleTimeoutMs: 600_000,
  });
  const encode = (text: string) => new TextEncoder().encode(text);
  const kept = await Deno.connect({ hostname: "127.0.0.1", port: server.port });
  await kept.write(encode(`GET /health HTTP/1.1\r\nHost: 127.0.0.1:${server.port}\r\n\r\n`));
  const first = new Uint8Array(4096);
  assert(await kept.read(first) !== null);
  await kept.write(encode(`GET /health HTTP/1.1\r\nHost: 127.0.0.1:${server.port}\r\n`));
  const drip = setInterval(() => kept.write(encode("X-A: b\r\n")).catch(() => {}), 50);
  try {
    await within(closedByServer(kept), { message: "a slow second request head is cut" });
  } finally {
    clearInterval(drip);
    kept.close();
  }
});

Deno.test("a WebSocket is a tunnel to the guard: its messages after the upgrade are no request heads", async () => {
  // A second, not less: the gauge reads below are new connections too, and on a loaded machine a
  // tighter deadline could cut one of them before its head is read, counting a cut of ours.
  await using server = await startServer({ port: 0, headerTimeoutMs: 1_000 });
  const socket = await openSocket(server.url);
  const closed = new Promise((resolve) => socket.onclose = resolve);
  const ask = async (message: unknown) => {
    const answered = nextMessage(socket);
    socket.send(JSON.stringify(message));
    return (await within(answered, { message: "the socket answers" })).type;
  };
  assertEquals(await ask({ type: "reset", data: { task: "demo/add-note/2" } }), "observation");
  const before = (await gauge(server.url, "webserv_connections_cut_total")) ?? 0;
  assertEquals(await ask({ type: "state" }), "state");
  // A silent connection opened after that message is cut past the header timeout: by then a
  // WebSocket taken for a request head would have been cut too.
  const silent = await Deno.connect({ hostname: "127.0.0.1", port: server.port });
  try {
    await within(closedByServer(silent), { message: "the silent connection is cut" });
  } finally {
    silent.close();
  }
  await waitFor(
    async () => (await gauge(server.url, "webserv_connections_cut_total")) === before + 1,
    {
      message: "the guard counts the silent connection cut",
    },
  );
  assertEquals(await ask({ type: "state" }), "state");
  assertEquals(await gauge(server.url, "webserv_connections_cut_total"), before + 1);
  socket.close();
  await within(closed, { message: "the socket closes" });
});

Deno.test("a connection past maxConnections is closed at once, and the others still serve", async () => {
  await using server = await startServer({ port: 0, maxConnections: 2 });
  const connect = () => Deno.connect({ hostname: "127.0.0.1", port: server.port });
  const held = [await connect(), await connect()];
  await waitFor(async () => (await gaugeOver(held[0]!, "webserv_connections")) === 2, {
    message: "both connections are open",
  });
  const third = await connect();
  try {
    await within(closedByServer(third), { message: "the third connection is closed at once" });
  } finally {
    third.close();
  }
  // A held connection still serves a request.
  assertEquals(await gaugeOver(held[1]!, "webserv_connections"), 2);
  for (const conn of held) conn.close();
});

/** A gauge read over a raw kept-alive connection (a fetch would open another). */
async function gaugeOver(conn: Deno.Conn, name: string): Promise<number | undefined> {
  await conn.write(new TextEncoder().encode(
    `GET /metrics HTTP/1.1\r\nHost: 127.0.0.1:${(conn.remoteAddr as Deno.NetAddr).port}\r\n\r\n`,
  ));
  let text = "";
  const buffer = new Uint8Array(64 * 1024);
  const decoder = new TextDecoder();
  while (!/^webserv_connections \d+$/m.test(text)) {
    const n = await conn.read(buffer);
    if (n === null) break;
    text += decoder.decode(buffer.subarray(0, n), { stream: true });
  }
  const value = text.match(new RegExp(`^${name} (\\d+)$`, "m"))?.[1];
  return value === undefined ? undefined : Number(value);
}

Deno.test("deno task serve takes --max-seeds and --seed-grace, and refuses a cap of 0", async () => {
  const run = (...args: string[]) =>
    new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "--allow-all",
        new URL("../../../adapters/http/serve.ts", import.meta.url).pathname,
        ...args,
      ],
      stdout: "piped",
      stderr: "piped",
    }).output();
  const help = await run("--help");
  const usage = new TextDecoder().decode(help.stdout);
  assertMatch(usage, /--max-seeds N/);
  assertMatch(usage, /--seed-grace SECONDS/);
  const zero = await run("--max-seeds", "0");
  assertEquals(zero.code, 2);
  assertMatch(new TextDecoder().decode(zero.stderr), /max-seeds/);
});
