/**
 * A WebSocket client of our own over a Deno TCP connection, with Nagle's
 * algorithm off. Deno's built-in WebSocket writes a frame's header and
 * payload apart and leaves Nagle on: a command of 1 to 64 KiB then waits for
 * the browser's delayed ACK when nothing else is in flight, about 40 ms
 * (`bench/results/cdp.md`).
 *
 * @module
 */
import type { OutgoingMessage, Transport } from "./transport.ts";

const GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";
const OP_CONTINUATION = 0x0;
const OP_TEXT = 0x1;
const OP_BINARY = 0x2;
const OP_CLOSE = 0x8;
const OP_PING = 0x9;

/** The parts of `Deno.TcpConn` the transport uses. */
export interface TcpConn {
  /** Reads into `p`; the byte count, or `null` at the end of the stream. */
  read(p: Uint8Array): Promise<number | null>;
  /** Writes some of `p`; the byte count written. */
  write(p: Uint8Array): Promise<number>;
  /** Closes the connection. */
  close(): void;
  /** Turns Nagle's algorithm off (`true`) or on. */
  setNoDelay(noDelay?: boolean): void;
}

/** Opens a TCP connection, as `Deno.connect` does. */
export type TcpConnect = (options: { hostname: string; port: number }) => Promise<TcpConn>;

/** How {@linkcode TcpTransport.connect} opens the connection. */
export interface TcpTransportOptions {
  /** How long the connection and handshake may take, in ms. @default {10000} */
  timeoutMs?: number;
  /** Opens the TCP connection. @default {`Deno.connect`} */
  connect?: TcpConnect;
}

/** `Deno.connect`, where the runtime has it. */
function denoConnect(): TcpConnect | undefined {
  const deno = (globalThis as { Deno?: { connect?: TcpConnect } }).Deno;
  return typeof deno?.connect === "function" ? deno.connect.bind(deno) : undefined;
}

/**
 * A {@linkcode Transport} speaking WebSocket over a TCP connection of its
 * own, with `TCP_NODELAY` set: each frame leaves in one write, at once.
 * Deno only, `ws://` only (a DevTools endpoint on this machine or a
 * tunnel); {@linkcode TcpTransport.available} says whether it can run.
 *
 * @example Connect to a browser endpoint
 * ```ts ignore
 * import { TcpTransport } from "@webserv/webserv/cdp";
 * const transport = await TcpTransport.connect("ws://127.0.0.1:9222/devtools/browser/…");
 * transport.close();
 * ```
 */
export class TcpTransport implements Transport {
  #conn: TcpConn;
  #closed = false;
  #writing: Promise<void> = Promise.resolve();
  #decoder = new TextDecoder();
  #encoder = new TextEncoder();
  /** Bytes read and not parsed yet: the first `#pendingLength` bytes of `#pending`. */
  #pending: Uint8Array = new Uint8Array(0);
  #pendingLength = 0;
  /** Payloads of a fragmented message so far. */
  #fragments: Uint8Array[] = [];
  #onmessage: ((message: unknown) => void) | undefined;
  /** Messages that arrived before anyone listened (a peer may speak first). */
  #early: string[] = [];
  /** Called once when the connection has closed. */
  onclose: ((reason: string) => void) | undefined;

  /**
   * Whether this runtime can open one (it has `Deno.connect`) for the URL.
   *
   * @param url a DevTools endpoint
   * @returns `true` for a `ws://` URL on Deno
   */
  static available(url: string): boolean {
    return url.startsWith("ws://") && denoConnect() !== undefined;
  }

  /**
   * Opens a connection and completes the WebSocket handshake.
   *
   * @param url a `ws://` DevTools endpoint
   * @param options how long to wait, and how to open the connection
   * @returns the open transport
   * @throws {TypeError} when the URL is not `ws://` or the runtime has no `Deno.connect`
   * @throws {Error} when the endpoint refuses, answers something else or not in time
   */
  static async connect(
    url: string,
    options: TcpTransportOptions = {},
  ): Promise<TcpTransport> {
    const connect = options.connect ?? denoConnect();
    if (!url.startsWith("ws://") || !connect) {
      throw new TypeError(
        `Cannot connect to "${url}": TcpTransport takes a ws:// URL and runs on Deno (use WebSocketTransport elsewhere)`,
      );
    }
    const target = new URL(url);
    const timeoutMs = options.timeoutMs ?? 10_000;
    let conn: TcpConn | undefined;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        try {
          conn?.close();
        } catch {
          // already closed
        }
        reject(new Error(`Cannot connect to "${url}": no answer within ${timeoutMs} ms`));
      }, timeoutMs);
    });
    try {
      return await Promise.race([
        (async () => {
          try {
            conn = await connect({
              hostname: target.hostname.replace(/^\[|\]$/g, ""),
              port: Number(target.port || 80),
            });
          } catch (error) {
            throw new Error(`Cannot connect to "${url}": ${(error as Error).message}`);
          }
          conn.setNoDelay(true);
          const rest = await handshake(conn, target, url);
          const transport = new TcpTransport(conn);
          transport.#append(rest);
          transport.#readLoop();
          return transport;
        })(),
        timeout,
      ]);
    } catch (error) {
      try {
        conn?.close();
      } catch {
        // already closed
      }
      throw error;
    } finally {
      clearTimeout(timer);
    }
  }

  private constructor(conn: TcpConn) {
    this.#conn = conn;
  }

  /** Receives every incoming message, as JSON text; those that came before it was set first. */
  get onmessage(): ((message: unknown) => void) | undefined {
    return this.#onmessage;
  }

  set onmessage(listener: ((message: unknown) => void) | undefined) {
    this.#onmessage = listener;
    while (listener && this.#early.length && this.#onmessage === listener) {
      listener(this.#early.shift());
    }
  }

  send(message: OutgoingMessage): void {
    if (this.#closed) return;
    this.#write(frame(OP_TEXT, this.#encoder.encode(JSON.stringify(message))));
  }

  close(): void {
    if (this.#closed) return;
    // Say goodbye if the socket still takes it, then drop the connection;
    // report the close now: a dead peer may never answer.
    const bye = this.#write(frame(OP_CLOSE, new Uint8Array([0x03, 0xe8])));
    this.#finish("transport closed");
    void bye.finally(() => this.#drop());
  }

  /** Writes one frame after those before it, whole. */
  #write(bytes: Uint8Array): Promise<void> {
    this.#writing = this.#writing.then(async () => {
      let offset = 0;
      while (offset < bytes.length) offset += await this.#conn.write(bytes.subarray(offset));
    }).catch((error) => {
      this.#finish(`socket write failed: ${(error as Error).message}`);
      this.#drop();
    });
    return this.#writing;
  }

  async #readLoop(): Promise<void> {
    const chunk = new Uint8Array(256 * 1024);
    let reason = "socket closed by the browser";
    try {
      this.#parse();
      while (!this.#closed) {
        const n = await this.#conn.read(chunk);
        if (n === null) break;
        this.#append(chunk.subarray(0, n));
        this.#parse();
      }
    } catch (error) {
      reason = `socket read failed: ${(error as Error).message}`;
    }
    this.#finish(reason);
    this.#drop();
  }

  /** Adds read bytes; the buffer doubles when full, so a large message costs linear copying. */
  #append(bytes: Uint8Array): void {
    const needed = this.#pendingLength + bytes.length;
    if (needed > this.#pending.length) {
      const grown = new Uint8Array(Math.max(needed, 2 * this.#pending.length));
      grown.set(this.#pending.subarray(0, this.#pendingLength));
      this.#pending = grown;
    }
    this.#pending.set(bytes, this.#pendingLength);
    this.#pendingLength = needed;
  }

  /** Takes every whole frame off the pending bytes. */
  #parse(): void {
    const buf = this.#pending;
    const end = this.#pendingLength;
    let at = 0;
    while (!this.#closed) {
      if (end - at < 2) break;
      const fin = (buf[at]! & 0x80) !== 0;
      const opcode = buf[at]! & 0x0f;
      const masked = (buf[at + 1]! & 0x80) !== 0;
      let length = buf[at + 1]! & 0x7f;
      let head = 2;
      if (length === 126) {
        if (end - at < 4) break;
        length = (buf[at + 2]! << 8) | buf[at + 3]!;
        head = 4;
      } else if (length === 127) {
        if (end - at < 10) break;
        const view = new DataView(buf.buffer, buf.byteOffset + at + 2, 8);
        length = view.getUint32(0) * 2 ** 32 + view.getUint32(4);
        head = 10;
      }
      const maskAt = at + head;
      if (masked) head += 4;
      if (end - at < head + length) break;
      const payload = buf.subarray(at + head, at + head + length);
      if (masked) unmask(payload, buf.slice(maskAt, maskAt + 4));
      at += head + length;
      this.#frame(fin, opcode, payload);
    }
    // Keep what is left (a partial frame) at the start of the buffer.
    if (at > 0) {
      buf.copyWithin(0, at, end);
      this.#pendingLength = end - at;
    }
  }

  #frame(fin: boolean, opcode: number, payload: Uint8Array): void {
    // `payload` is a view into the read buffer: copy what outlives this call.
    if (opcode === OP_PING) {
      this.#write(frame(0xa, payload));
      return;
    }
    if (opcode === OP_CLOSE) {
      const code = payload.length >= 2 ? (payload[0]! << 8) | payload[1]! : 1005;
      const text = this.#decoder.decode(payload.subarray(2));
      this.#finish(text || `code ${code}`);
      this.#drop();
      return;
    }
    if (opcode !== OP_TEXT && opcode !== OP_BINARY && opcode !== OP_CONTINUATION) return;
    if (!fin) {
      this.#fragments.push(payload.slice());
      return;
    }
    let whole = payload;
    if (this.#fragments.length) {
      this.#fragments.push(payload);
      whole = new Uint8Array(this.#fragments.reduce((n, part) => n + part.length, 0));
      let offset = 0;
      for (const part of this.#fragments) {
        whole.set(part, offset);
        offset += part.length;
      }
      this.#fragments = [];
    }
    const text = this.#decoder.decode(whole);
    if (this.#onmessage) this.#onmessage(text);
    else this.#early.push(text);
  }

  #drop(): void {
    try {
      this.#conn.close();
    } catch {
      // already closed
    }
  }

  #finish(reason: string): void {
    if (this.#closed) return;
    this.#closed = true;
    this.onclose?.(reason);
  }
}

/** Sends the upgrade request and reads the answer; returns the bytes read past it. */
async function handshake(conn: TcpConn, target: URL, url: string): Promise<Uint8Array> {
  const key = btoa(String.fromCharCode(...crypto.getRandomValues(new Uint8Array(16))));
  const request = `GET ${target.pathname}${target.search} HTTP/1.1\r\n` +
    `Host: ${target.host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
    `Sec-WebSocket-Key: ${key}\r\nSec-WebSocket-Version: 13\r\n\r\n`;
  const bytes = new TextEncoder().encode(request);
  let offset = 0;
  while (offset < bytes.length) offset += await conn.write(bytes.subarray(offset));
  let seen = new Uint8Array(0);
  const chunk = new Uint8Array(4096);
  for (;;) {
    const end = headerEnd(seen);
    if (end >= 0) {
      const head = new TextDecoder().decode(seen.subarray(0, end));
      const [status = "", ...lines] = head.split("\r\n");
      if (!/^HTTP\/1\.1 101\b/.test(status)) {
        throw new Error(`Cannot connect to "${url}": the endpoint answered "${status}"`);
      }
      const accept = lines.find((line) => /^sec-websocket-accept:/i.test(line))
        ?.slice("sec-websocket-accept:".length).trim();
      const digest = await crypto.subtle.digest("SHA-1", new TextEncoder().encode(key + GUID));
      const expected = btoa(String.fromCharCode(...new Uint8Array(digest)));
      if (accept !== expected) {
        throw new Error(`Cannot connect to "${url}": the endpoint's handshake does not match`);
      }
      return seen.slice(end + 4);
    }
    if (seen.length > 64 * 1024) {
      throw new Error(`Cannot connect to "${url}": the endpoint's answer has no end of headers`);
    }
    const n = await conn.read(chunk);
    if (n === null) {
      throw new Error(`Cannot connect to "${url}": the endpoint closed during the handshake`);
    }
    const joined = new Uint8Array(seen.length + n);
    joined.set(seen);
    joined.set(chunk.subarray(0, n), seen.length);
    seen = joined;
  }
}

function headerEnd(bytes: Uint8Array): number {
  for (let i = 3; i < bytes.length; i++) {
    if (bytes[i] === 10 && bytes[i - 1] === 13 && bytes[i - 2] === 10 && bytes[i - 3] === 13) {
      return i - 3;
    }
  }
  return -1;
}

/** One final client frame, masked as RFC 6455 requires, header and payload in one buffer. */
function frame(opcode: number, payload: Uint8Array): Uint8Array {
  const length = payload.length;
  const head = length < 126 ? 2 : length < 65536 ? 4 : 10;
  const out = new Uint8Array(head + 4 + length);
  out[0] = 0x80 | opcode;
  if (head === 2) out[1] = 0x80 | length;
  else if (head === 4) {
    out[1] = 0x80 | 126;
    out[2] = length >> 8;
    out[3] = length & 0xff;
  } else {
    out[1] = 0x80 | 127;
    const view = new DataView(out.buffer);
    view.setUint32(2, Math.floor(length / 2 ** 32));
    view.setUint32(6, length >>> 0);
  }
  const mask = crypto.getRandomValues(new Uint8Array(4));
  out.set(mask, head);
  out.set(payload, head + 4);
  unmask(out.subarray(head + 4), mask);
  return out;
}

/** XORs `data` with the 4-byte `mask`, in place (masking and unmasking are the same). */
function unmask(data: Uint8Array, mask: Uint8Array): void {
  for (let i = 0; i < data.length; i++) data[i] = data[i]! ^ mask[i & 3]!;
}
