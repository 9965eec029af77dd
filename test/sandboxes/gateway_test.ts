import { assertEquals, assertStringIncludes, assertThrows } from "@std/assert";
import { join } from "node:path";
import { Gateway } from "../../sandboxes/gateway.ts";

interface Upstream extends AsyncDisposable {
  path: string;
}

async function unixUpstream(
  handler: (request: Request) => Response | Promise<Response>,
): Promise<Upstream> {
  const directory = await Deno.makeTempDir({ prefix: "webserv-gw-" });
  const path = join(directory, "site.sock");
  const server = Deno.serve({ path, onListen() {} }, handler);
  return {
    path,
    async [Symbol.asyncDispose]() {
      await server.shutdown();
      await Deno.remove(directory, { recursive: true });
    },
  };
}

function echo(request: Request): Response {
  if (request.headers.get("upgrade") === "websocket") {
    const { socket, response } = Deno.upgradeWebSocket(request);
    socket.onmessage = (event) => socket.send(`echo ${event.data}`);
    return response;
  }
  const url = new URL(request.url);
  return new Response(request.body, {
    headers: {
      "x-host": request.headers.get("host") ?? "",
      "x-path": url.pathname + url.search,
      "x-method": request.method,
    },
  });
}

Deno.test("Gateway.request() gets a 404 page when the host names no route", async () => {
  await using gateway = new Gateway();
  const response = await gateway.request("http://env-nothere.localhost", "/");
  assertEquals(response.status, 404);
  assertStringIncludes(await response.text(), "No such environment");
  const other = await gateway.request("http://example.localhost", "/");
  assertEquals(other.status, 404);
  await other.body?.cancel();
});

Deno.test("Gateway.add() routes a virtual host to a unix socket when the target is one", async () => {
  await using upstream = await unixUpstream(echo);
  await using gateway = new Gateway();
  const route = gateway.add({ unix: upstream.path });
  const response = await gateway.request(route.origin, "/a/b?c=1", {
    method: "POST",
    body: "hello",
  });
  assertEquals(response.status, 200);
  assertEquals(await response.text(), "hello");
  assertEquals(response.headers.get("x-host"), new URL(route.origin).host);
  assertEquals(response.headers.get("x-path"), "/a/b?c=1");
  assertEquals(response.headers.get("x-method"), "POST");
});

Deno.test("Gateway.add() routes a virtual host to a loopback port when the target is one", async () => {
  await using server = Deno.serve({ port: 0, onListen() {} }, echo);
  await using gateway = new Gateway();
  const route = gateway.add({ port: server.addr.port });
  const response = await gateway.request(route.origin, "/x");
  assertEquals(response.headers.get("x-path"), "/x");
  assertEquals(response.headers.get("x-host"), new URL(route.origin).host);
  await response.body?.cancel();
});

Deno.test("Gateway.request() gets the page intact when the upstream compresses it", async () => {
  // Apache's mod_deflate compresses when asked; some servers compress unasked.
  const html = "<p>a page that compresses well</p>".repeat(200);
  const gzipped = new Uint8Array(
    await new Response(
      new Blob([html]).stream().pipeThrough(new CompressionStream("gzip")),
    ).arrayBuffer(),
  );
  const seen: (string | null)[] = [];
  await using server = Deno.serve({ port: 0, onListen() {} }, (request) => {
    const accepted = request.headers.get("accept-encoding");
    seen.push(accepted);
    const always = new URL(request.url).pathname === "/always";
    return always || /gzip/.test(accepted ?? "")
      ? new Response(gzipped, {
        headers: { "content-type": "text/html", "content-encoding": "gzip" },
      })
      : new Response(html, { headers: { "content-type": "text/html" } });
  });
  await using gateway = new Gateway();
  const route = gateway.add({ port: server.addr.port });
  for (const path of ["/", "/always"]) {
    for (const headers of [{}, { "accept-encoding": "gzip, deflate, br" }]) {
      const response = await gateway.request(route.origin, path, { headers });
      assertEquals(response.status, 200);
      assertEquals(await response.text(), html, `${path} with ${JSON.stringify(headers)}`);
    }
  }
  // The upstream is asked for the page as it is: compressing on loopback only costs CPU.
  assertEquals(seen.filter((value) => value !== "identity"), []);
});

Deno.test("Gateway.add() gives each route its own origin when several are added", async () => {
  await using gateway = new Gateway();
  const a = gateway.add({ handler: () => new Response("a") });
  const b = gateway.add({ handler: () => new Response("b") });
  assertEquals(await (await gateway.request(a.origin, "/")).text(), "a");
  assertEquals(await (await gateway.request(b.origin, "/")).text(), "b");
  b.retarget({ handler: () => new Response("b2") });
  assertEquals(await (await gateway.request(b.origin, "/")).text(), "b2");
  a.remove();
  const gone = await gateway.request(a.origin, "/");
  assertEquals(gone.status, 404);
  await gone.body?.cancel();
});

Deno.test("Gateway.request() streams the response when the body arrives in parts", async () => {
  let release = () => {};
  const released = new Promise<void>((resolve) => release = resolve);
  await using upstream = await unixUpstream(() => {
    const body = new ReadableStream<Uint8Array>({
      async start(controller) {
        controller.enqueue(new TextEncoder().encode("first"));
        await released;
        controller.enqueue(new TextEncoder().encode(" second"));
        controller.close();
      },
    });
    return new Response(body);
  });
  await using gateway = new Gateway();
  const route = gateway.add({ unix: upstream.path });
  const response = await gateway.request(route.origin, "/");
  const reader = response.body!.getReader();
  const first = await reader.read();
  assertEquals(new TextDecoder().decode(first.value), "first");
  release();
  let rest = "";
  for (let r = await reader.read(); !r.done; r = await reader.read()) {
    rest += new TextDecoder().decode(r.value);
  }
  assertEquals(rest, " second");
});

Deno.test("Gateway.add() passes WebSockets through when the client upgrades", async () => {
  await using upstream = await unixUpstream(echo);
  await using gateway = new Gateway();
  const route = gateway.add({ unix: upstream.path });
  // Connect to 127.0.0.1 with the env's Host header: resolving the env's
  // name from Deno would be a DNS query (Chromium resolves it to loopback).
  const client = Deno.createHttpClient({ allowHost: true });
  const socket = new WebSocket(`ws://127.0.0.1:${gateway.port}/ws`, {
    headers: { host: new URL(route.origin).host },
    client,
  });
  const reply = await new Promise<string>((resolve, reject) => {
    socket.onopen = () => socket.send("ping");
    socket.onmessage = (event) => resolve(String(event.data));
    socket.onerror = () => reject(new Error("WebSocket failed"));
  });
  assertEquals(reply, "echo ping");
  const closed = new Promise((resolve) => socket.onclose = resolve);
  socket.close();
  await closed;
  client.close();
});

Deno.test("Gateway() throws RangeError when the address is not loopback", () => {
  assertThrows(() => new Gateway({ hostname: "0.0.0.0" }), RangeError);
});

/** A loopback TCP server that accepts connections and never answers on them. */
function silentUpstream(): { port: number; connected: Promise<void> } & AsyncDisposable {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const held: Deno.Conn[] = [];
  let onConnect = () => {};
  const connected = new Promise<void>((resolve) => onConnect = resolve);
  const accepting = (async () => {
    try {
      for await (const conn of listener) {
        held.push(conn);
        onConnect();
      }
    } catch {
      // the listener closed
    }
  })();
  return {
    port: listener.addr.port,
    connected,
    async [Symbol.asyncDispose]() {
      listener.close();
      for (const conn of held) conn.close();
      await accepting;
    },
  };
}

/** Whether `work` settles before a generous bound; a hang shows as false, not as a stuck test. */
async function settlesInTime(work: Promise<unknown>, ms = 15_000): Promise<boolean> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<false>((resolve) => timer = setTimeout(() => resolve(false), ms));
  try {
    return await Promise.race([work.then(() => true as const), late]);
  } finally {
    clearTimeout(timer);
  }
}

Deno.test("Gateway.close() returns when a request to an upstream never answers", async () => {
  await using upstream = silentUpstream();
  const gateway = new Gateway();
  const route = gateway.add({ port: upstream.port });
  const pending = gateway.request(route.origin, "/").then(
    (response) => response.body?.cancel(),
    () => undefined,
  );
  await upstream.connected; // the request is in flight, held by the upstream
  assertEquals(await settlesInTime(gateway.close()), true);
  await pending;
});

Deno.test("Gateway.close() returns when an in-process handler never answers", async () => {
  let release = () => {};
  const never = new Promise<Response>((resolve) => {
    release = () => resolve(new Response("late"));
  });
  const gateway = new Gateway();
  let called!: () => void;
  const entered = new Promise<void>((resolve) => called = resolve);
  const route = gateway.add({
    handler: () => {
      called();
      return never;
    },
  });
  const pending = gateway.request(route.origin, "/").then(
    (response) => response.body?.cancel(),
    () => undefined,
  );
  await entered;
  assertEquals(await settlesInTime(gateway.close()), true);
  release();
  await pending;
});

Deno.test("Gateway.request() gets a plain 502 page without internal errors when the upstream fails", async () => {
  await using gateway = new Gateway();
  const route = gateway.add({ unix: "/nonexistent/webserv.sock" });
  const response = await gateway.request(route.origin, "/");
  assertEquals(response.status, 502);
  const text = await response.text();
  assertStringIncludes(text, "Bad gateway");
  for (const leak of ["Error", "error", "/nonexistent", "webserv.sock", "env-", "os "]) {
    assertEquals(text.includes(leak), false, `the page shows "${leak}": ${text}`);
  }
});

Deno.test("Gateway.reserve() holds an origin that answers 503 until claimed, then the claimer's pages", async () => {
  await using gateway = new Gateway();
  const spare = gateway.reserve();
  assertEquals(gateway.size, 1);
  const waiting = await gateway.request(spare.origin, "/");
  assertEquals(waiting.status, 503);
  await waiting.body?.cancel();
  const route = gateway.claim(spare.origin, { handler: () => new Response("mine") });
  assertEquals(route.origin, spare.origin);
  assertEquals(await (await gateway.request(spare.origin, "/")).text(), "mine");
  // Claimed: its release leaves the claimer's route alone, and it cannot be claimed again.
  spare.release();
  assertEquals(await (await gateway.request(spare.origin, "/")).text(), "mine");
  assertThrows(
    () => gateway.claim(spare.origin, { handler: () => new Response("other") }),
    RangeError,
    "not a spare route",
  );
  route.remove();
  assertEquals(gateway.size, 0);
});

Deno.test("Gateway.reserve()'s release removes an unclaimed route, which can no longer be claimed", async () => {
  await using gateway = new Gateway();
  const spare = gateway.reserve();
  spare.release();
  assertEquals(gateway.size, 0);
  const gone = await gateway.request(spare.origin, "/");
  assertEquals(gone.status, 404);
  await gone.body?.cancel();
  assertThrows(
    () => gateway.claim(spare.origin, { handler: () => new Response("late") }),
    RangeError,
    "not a spare route",
  );
});
