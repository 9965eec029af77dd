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

Deno.test("Gateway.request() gets a 502 page when the instance does not answer", async () => {
  await using gateway = new Gateway();
  const route = gateway.add({ unix: "/nonexistent/webserv.sock" });
  const response = await gateway.request(route.origin, "/");
  assertEquals(response.status, 502);
  assertStringIncludes(await response.text(), `env-${route.id}`);
});

Deno.test("Gateway() throws RangeError when the address is not loopback", () => {
  assertThrows(() => new Gateway({ hostname: "0.0.0.0" }), RangeError);
});
