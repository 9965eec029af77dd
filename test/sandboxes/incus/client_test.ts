import { assertEquals, assertRejects, assertStringIncludes, assertThrows } from "@std/assert";
import { SandboxError } from "../../../sandboxes/errors.ts";
import { IncusClient } from "../../../sandboxes/incus/client.ts";

// The tests that start instances live in incus_sandbox_test.ts, run in order.

Deno.test("IncusClient() throws TypeError when a remote url has no client certificate", () => {
  assertThrows(
    () => new IncusClient({ url: "https://127.0.0.1:8443" }),
    TypeError,
  );
});

Deno.test("IncusClient.request() throws SandboxError with Incus's message when the path is unknown", async () => {
  using incus = new IncusClient();
  const error = await assertRejects(
    () => incus.request("GET", "/1.0/instances/webserv-no-such-instance"),
    SandboxError,
  );
  assertEquals(error.status, 404);
  assertStringIncludes(error.daemonMessage, "not found");
});

/**
 * A stand-in for incusd's unix socket that answers every request with an
 * empty sync response and records, per connection, whether it carried a
 * request before its client closed it.
 */
function fakeIncusSocket(path: string) {
  const listener = Deno.listen({ transport: "unix", path });
  const connections: { requests: number; closed: PromiseWithResolvers<void> }[] = [];
  const body = JSON.stringify({ type: "sync", status: "Success", status_code: 200, metadata: {} });
  const response = new TextEncoder().encode(
    `HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n${body}`,
  );
  const served = (async () => {
    for await (const conn of listener) {
      const record = { requests: 0, closed: Promise.withResolvers<void>() };
      connections.push(record);
      (async () => {
        const buffer = new Uint8Array(65536);
        let pending = "";
        try {
          for (;;) {
            const n = await conn.read(buffer);
            if (n === null) break;
            pending += new TextDecoder().decode(buffer.subarray(0, n));
            while (pending.includes("\r\n\r\n")) {
              pending = pending.slice(pending.indexOf("\r\n\r\n") + 4);
              record.requests++;
              await conn.write(response);
            }
          }
        } catch {
          // A reset by the client ends the connection like a close.
        } finally {
          conn.close();
          record.closed.resolve();
        }
      })();
    }
  })();
  return {
    connections,
    async [Symbol.asyncDispose]() {
      listener.close();
      await served.catch(() => {});
      await Deno.remove(path).catch(() => {});
    },
  };
}

Deno.test("IncusClient.request() leaves no connection open on the unix socket once answered", async () => {
  // Incus 6 accepts no other client on its socket while one connection has
  // sent nothing (it peeks at each connection's first bytes in its accept
  // loop), and a container's start hooks reach incusd over that socket: an
  // idle pooled connection made every start in the test suite time out.
  const dir = await Deno.makeTempDir();
  await using incus = fakeIncusSocket(`${dir}/unix.socket`);
  using client = new IncusClient({ socket: `${dir}/unix.socket` });
  for (let round = 0; round < 5; round++) {
    await Promise.all(Array.from({ length: 6 }, () => client.request("GET", "/1.0")));
    await client.request("GET", "/1.0/instances");
  }
  // Every connection the client opened is closed by it, each after carrying
  // a request: the close is the event that proves nothing stays parked.
  let timer: ReturnType<typeof setTimeout> | undefined;
  const closedInTime = await Promise.race([
    Promise.all(incus.connections.map((c) => c.closed.promise)).then(() => true),
    new Promise<false>((resolve) => timer = setTimeout(() => resolve(false), 5_000)),
  ]);
  clearTimeout(timer);
  assertEquals(
    closedInTime,
    true,
    "a connection of the client was still open 5 s after its answer",
  );
  assertEquals(incus.connections.filter((c) => c.requests === 0).length, 0);
  await Deno.remove(dir, { recursive: true });
});
