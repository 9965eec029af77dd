// The connection guard relays through buffers it reuses: connection after
// connection, each answer arrives whole and the guard allocates no new ones.
import { assert, assertEquals } from "@std/assert";
import { join } from "node:path";
import { ConnectionGuard, relayBuffersMade } from "../../../adapters/http/_connection_guard.ts";

/** One request on a connection of its own; the whole answer, read to the server's close. */
async function exchange(port: number, body: string): Promise<string> {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  try {
    const bytes = new TextEncoder().encode(body);
    const head = `POST /echo HTTP/1.1\r\nhost: 127.0.0.1:${port}\r\ncontent-type: text/plain\r\n` +
      `content-length: ${bytes.byteLength}\r\nconnection: close\r\n\r\n`;
    const request = new Uint8Array([...new TextEncoder().encode(head), ...bytes]);
    for (let written = 0; written < request.byteLength;) {
      written += await conn.write(request.subarray(written));
    }
    const chunks: Uint8Array[] = [];
    const buffer = new Uint8Array(8192);
    for (;;) {
      const n = await conn.read(buffer);
      if (n === null) break;
      chunks.push(buffer.slice(0, n));
    }
    return new TextDecoder().decode(new Uint8Array(chunks.flatMap((chunk) => [...chunk])));
  } finally {
    conn.close();
  }
}

Deno.test("ConnectionGuard relays connection after connection whole, on buffers it reuses", async () => {
  const folder = await Deno.makeTempDir({ prefix: "webserv-guard-test-" });
  const path = join(folder, "http.sock");
  const server = Deno.serve(
    { transport: "unix", path, onListen() {} },
    async (request) => new Response(await request.text()),
  );
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const guard = new ConnectionGuard(listener, () => Deno.connect({ transport: "unix", path }), {
    headerTimeoutMs: 10_000,
    idleTimeoutMs: 10_000,
    maxConnections: 16,
  });
  try {
    const before = relayBuffersMade();
    for (let i = 0; i < 20; i++) {
      // Bodies longer than a buffer, different each time: a reused buffer must not mix them.
      const body = `${i}:`.padEnd(40_000, String.fromCharCode(97 + i));
      const answer = await exchange(listener.addr.port, body);
      assert(answer.startsWith("HTTP/1.1 200"), answer.slice(0, 200));
      assertEquals(answer.slice(answer.indexOf("\r\n\r\n") + 4), body);
    }
    assertEquals(guard.accepted, 20);
    // Two for the connection open at a time (four when one's relay ends after the next began).
    assert(relayBuffersMade() - before <= 4, `made ${relayBuffersMade() - before} buffers`);
  } finally {
    await guard.close();
    await server.shutdown();
    await Deno.remove(folder, { recursive: true });
  }
});
