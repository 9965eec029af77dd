// The transport contract on TcpTransport (the default on Deno), and what it
// does apart: frames whole with Nagle off, large messages both ways, the
// frames Chromium never sends but a WebSocket peer may, failed handshakes.
import { assert, assertEquals, assertRejects, assertStringIncludes } from "@std/assert";
import { BrowserProcess } from "../../../engine/browser/browser_process.ts";
import { Connection } from "../../../engine/cdp/connection.ts";
import { type TcpConn, TcpTransport } from "../../../engine/cdp/tcp_transport.ts";
import { transportContract } from "./_transport_contract.ts";

transportContract({
  name: "TcpTransport",
  async open(wsEndpoint) {
    return { transport: await TcpTransport.connect(wsEndpoint), dispose: async () => {} };
  },
});

/** `Deno.connect`, recording each connection's `setNoDelay` calls and write sizes. */
function watchedConnect() {
  const noDelay: (boolean | undefined)[] = [];
  const writes: number[] = [];
  const connect = async (options: { hostname: string; port: number }): Promise<TcpConn> => {
    const conn = await Deno.connect(options);
    return {
      read: (p) => conn.read(p),
      write: (p) => {
        writes.push(p.length);
        return conn.write(p);
      },
      close: () => conn.close(),
      setNoDelay: (on) => {
        noDelay.push(on);
        conn.setNoDelay(on);
      },
    };
  };
  return { connect, noDelay, writes };
}

Deno.test("TcpTransport.send() writes a command's frame whole, with Nagle off, when it is 4 KiB to 1 MiB", async () => {
  // Deno's WebSocket wrote the header and the payload apart with Nagle on:
  // every such command waited ~40 ms for the browser's delayed ACK.
  await using process = await launch();
  const watched = watchedConnect();
  const connection = new Connection(
    await TcpTransport.connect(process.wsEndpoint, { connect: watched.connect }),
  );
  try {
    assertEquals(watched.noDelay, [true]);
    const page = await openPage(connection);
    for (const size of [4096, 32_768, 70_000, 1_048_576]) {
      watched.writes.length = 0;
      const { result } = await page.send("Runtime.evaluate", {
        expression: `"${"x".repeat(size)}".length`,
      }, { timeoutMs: 30_000 });
      assertEquals(result.value, size);
      assert(watched.writes.length >= 1, "the command was written");
      assert(
        watched.writes.every((n) => n > size),
        `each write carries a whole frame (header and payload) of ${size}: ${watched.writes}`,
      );
    }
  } finally {
    connection.close();
  }
});

Deno.test("TcpTransport.onmessage delivers a 5 MB answer intact when the browser sends it", async () => {
  await using process = await launch();
  const connection = new Connection(await TcpTransport.connect(process.wsEndpoint));
  try {
    const page = await openPage(connection);
    const { result } = await page.send("Runtime.evaluate", {
      expression: `Array.from({ length: 5e5 }, (_, i) => "é" + (i % 10)).join("")`,
      returnByValue: true,
    }, { timeoutMs: 30_000 });
    const value = String(result.value);
    assertEquals(value.length, 1e6);
    assertEquals(value.slice(0, 6), "é0é1é2");
    assertEquals(value.slice(-4), "é8é9");
  } finally {
    connection.close();
  }
});

Deno.test("TcpTransport.onmessage joins fragments, answers pings and reports the peer's close reason", async () => {
  // Chromium sends neither fragments nor pings: a raw peer of our own does.
  await using peer = await rawPeer(async (conn) => {
    await conn.write(serverFrame(0x1, false, "hello, "));
    await conn.write(serverFrame(0x9, true, "are you there"));
    await conn.write(serverFrame(0x0, true, "world"));
    const pong = await readFrame(conn);
    await conn.write(serverFrame(0x8, true, new Uint8Array([0x03, 0xe9, ...encode("bye")])));
    return pong;
  });
  const transport = await TcpTransport.connect(peer.url);
  const messages: unknown[] = [];
  const closed = new Promise<string>((resolve) => transport.onclose = resolve);
  transport.onmessage = (message) => messages.push(message);
  const pong = await peer.done;
  assertEquals(messages, ["hello, world"]);
  assertEquals(pong, { opcode: 0xa, masked: true, text: "are you there" });
  assertEquals(await closed, "bye");
  transport.close();
});

Deno.test("TcpTransport.connect() rejects with the endpoint's answer when it is not a WebSocket", async () => {
  await using server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    () => new Response("no such page", { status: 404 }),
  );
  const error = await assertRejects(
    () => TcpTransport.connect(`ws://127.0.0.1:${server.addr.port}/devtools/browser/x`),
    Error,
  );
  assertStringIncludes(error.message, "HTTP/1.1 404");
});

Deno.test("TcpTransport.connect() rejects within its timeout when the endpoint accepts and never answers", async () => {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const held: Deno.Conn[] = [];
  const accepting = (async () => {
    for await (const conn of listener) held.push(conn);
  })();
  try {
    const started = performance.now();
    const error = await assertRejects(
      () => TcpTransport.connect(`ws://127.0.0.1:${listener.addr.port}/`, { timeoutMs: 300 }),
      Error,
    );
    assertStringIncludes(error.message, "no answer within 300 ms");
    assert(performance.now() - started < 5_000, "it gave up instead of hanging");
  } finally {
    listener.close();
    for (const conn of held) conn.close();
    await accepting.catch(() => {});
  }
});

Deno.test("TcpTransport.connect() rejects with a TypeError when the URL is not ws://", async () => {
  await assertRejects(() => TcpTransport.connect("http://127.0.0.1:9222/"), TypeError, "ws://");
  assertEquals(TcpTransport.available("wss://127.0.0.1/"), false);
  assertEquals(TcpTransport.available("ws://127.0.0.1/"), true);
});

// ---------------------------------------------------------------- helpers

async function launch(): Promise<BrowserProcess & AsyncDisposable> {
  const process = await BrowserProcess.launch({ handleSignals: false });
  return Object.assign(process, {
    [Symbol.asyncDispose]: async () => {
      await process.kill();
    },
  });
}

async function openPage(connection: Connection) {
  const { targetId } = await connection.send("Target.createTarget", { url: "about:blank" });
  const { sessionId } = await connection.send("Target.attachToTarget", {
    targetId,
    flatten: true,
  });
  return connection.session(sessionId)!;
}

/** A TCP server that answers one WebSocket handshake, then runs `script` on the connection. */
function rawPeer<T>(script: (conn: Deno.Conn) => Promise<T>) {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const done = (async () => {
    const conn = await listener.accept();
    let head = "";
    const buf = new Uint8Array(4096);
    while (!head.includes("\r\n\r\n")) {
      const n = await conn.read(buf);
      if (n === null) throw new Error("closed in the handshake");
      head += new TextDecoder().decode(buf.subarray(0, n));
    }
    const key = /sec-websocket-key: *(\S+)/i.exec(head)![1]!;
    const digest = await crypto.subtle.digest(
      "SHA-1",
      new TextEncoder().encode(key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"),
    );
    const accept = btoa(String.fromCharCode(...new Uint8Array(digest)));
    await conn.write(
      new TextEncoder().encode(
        "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" +
          `Sec-WebSocket-Accept: ${accept}\r\n\r\n`,
      ),
    );
    try {
      return await script(conn);
    } finally {
      conn.close();
    }
  })();
  return {
    url: `ws://127.0.0.1:${listener.addr.port}/`,
    done,
    async [Symbol.asyncDispose]() {
      listener.close();
      await done.catch(() => {});
    },
  };
}

const encode = (text: string) => new TextEncoder().encode(text);

/** An unmasked server frame (payloads here are under 126 bytes). */
function serverFrame(opcode: number, fin: boolean, data: string | Uint8Array): Uint8Array {
  const payload = typeof data === "string" ? encode(data) : data;
  return new Uint8Array([(fin ? 0x80 : 0) | opcode, payload.length, ...payload]);
}

/** Reads one short client frame and unmasks it. */
async function readFrame(conn: Deno.Conn) {
  const buf = new Uint8Array(256);
  let got = 0;
  while (got < 2 || got < 6 + (buf[1]! & 0x7f)) {
    const n = await conn.read(buf.subarray(got));
    if (n === null) throw new Error("closed before a whole frame");
    got += n;
  }
  const length = buf[1]! & 0x7f;
  const mask = buf.subarray(2, 6);
  const payload = buf.slice(6, 6 + length).map((b, i) => b ^ mask[i & 3]!);
  return {
    opcode: buf[0]! & 0x0f,
    masked: (buf[1]! & 0x80) !== 0,
    text: new TextDecoder().decode(payload),
  };
}
