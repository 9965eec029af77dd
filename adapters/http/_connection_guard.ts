/**
 * A guard in front of the server's listener for what `Deno.serve` has no
 * knob for (Deno 2.9: no header, idle or connection limits; a connection
 * that sends nothing is held forever). The guard accepts each TCP
 * connection itself and relays its bytes to the server on a unix socket,
 * closing it:
 *
 * - when a request head (up to its blank line) has not arrived within
 *   `headerTimeoutMs`: the first from the accept (a silent client), a later
 *   one on a kept-alive connection from its first byte (slowloris);
 * - when no byte went either way for `idleTimeoutMs` (a half-open or
 *   abandoned connection; a WebSocket is pinged every 30 s, so a live one
 *   is never idle);
 * - at once, when `maxConnections` are open already.
 *
 * The guard reads no more HTTP than it needs: a request head ends at its
 * blank line; client bytes after the server began a response (other than
 * `100 Continue`) begin the next head; after a `101` (a WebSocket) the
 * connection is a tunnel, bounded by the idle timeout alone. Pipelined heads
 * sent before a response are bounded by the idle timeout and the cap.
 *
 * @module
 */
import { logFailure } from "../../engine/log.ts";

/** Options of {@linkcode ConnectionGuard}. */
export interface GuardOptions {
  /** How long the first request head may take, in milliseconds. */
  headerTimeoutMs: number;
  /** How long a connection may pass no byte either way, in milliseconds. */
  idleTimeoutMs: number;
  /** The cap on open connections. */
  maxConnections: number;
}

/** The most bytes a first request head may take before its blank line. */
const MAX_HEAD_BYTES = 64 * 1024;
const BLANK_LINE = [13, 10, 13, 10];

interface Guarded {
  client: Deno.Conn;
  server?: Deno.Conn;
  lastByte: number;
  /**
   * `head`: a request head is awaited (since `headSince`, or not begun when
   * undefined); `request`: the head arrived, the response is awaited;
   * `response`: the server answered, the next client byte begins a head;
   * `tunnel`: upgraded.
   */
  phase: "head" | "request" | "response" | "tunnel";
  headSince: number | undefined;
  /**
   * Set once the server is done with the connection (it answered and
   * closed, say a 413 before the body was read): the client's bytes are read
   * and dropped until then, so that closing does not reset the connection
   * under a client still sending and lose the answer it is owed.
   */
  lingerUntil?: number;
  /** Client bytes read and dropped while lingering. */
  dropped: number;
  closed: boolean;
}

/** How long, and for how many bytes, a client still sending is read after the server closed. */
const LINGER = { ms: 2_000, bytes: 8 << 20 };

const STATUS_PREFIX = "HTTP/1.1 1";

/** The size of a relay buffer: a read takes at most this much. */
const BUFFER_BYTES = 16 * 1024;
/** The most spare buffers kept (4 MiB): enough for the connections a busy server churns through. */
const MAX_SPARE = 256;

/**
 * The relay's buffers, reused across connections: each direction of a
 * connection holds one while it relays, and gives it back when its relay
 * ends (no read or write of it is in flight then), instead of allocating
 * two zeroed 16 KB buffers for every connection a client opens.
 */
class BufferPool {
  #spare: Uint8Array[] = [];
  /** Buffers allocated so far. */
  made = 0;

  take(): Uint8Array {
    const spare = this.#spare.pop();
    if (spare) return spare;
    this.made++;
    return new Uint8Array(BUFFER_BYTES);
  }

  give(buffer: Uint8Array): void {
    if (this.#spare.length < MAX_SPARE) this.#spare.push(buffer);
  }
}

const BUFFERS = new BufferPool();

/**
 * How many relay buffers the guards of this process allocated so far.
 *
 * @returns the count (two per connection open at once at the busiest, not per connection accepted)
 */
export function relayBuffersMade(): number {
  return BUFFERS.made;
}

/** Accepts connections on `listener` and relays them to the server, within bounds. */
export class ConnectionGuard {
  #listener: Deno.Listener;
  #upstream: () => Promise<Deno.Conn>;
  #options: GuardOptions;
  #open = new Set<Guarded>();
  #sweeper: ReturnType<typeof setInterval>;
  #accepting: Promise<void>;
  #cut = 0;
  #accepted = 0;

  /**
   * Starts accepting.
   *
   * @param listener where clients connect
   * @param upstream opens a connection to the server
   * @param options the bounds
   */
  constructor(listener: Deno.Listener, upstream: () => Promise<Deno.Conn>, options: GuardOptions) {
    this.#listener = listener;
    this.#upstream = upstream;
    this.#options = options;
    const every = Math.min(
      1000,
      Math.max(10, Math.min(options.headerTimeoutMs, options.idleTimeoutMs) / 4),
    );
    this.#sweeper = setInterval(() => this.#sweep(), every);
    Deno.unrefTimer(this.#sweeper);
    this.#accepting = this.#accept();
  }

  /** Connections open now. */
  get open(): number {
    return this.#open.size;
  }

  /** Connections accepted so far (a kept-alive client opens one for many requests). */
  get accepted(): number {
    return this.#accepted;
  }

  /** Connections closed for a bound (late head, idle, over the cap). */
  get cut(): number {
    return this.#cut;
  }

  /** Stops accepting and closes every connection. */
  async close(): Promise<void> {
    clearInterval(this.#sweeper);
    try {
      this.#listener.close();
    } catch {
      // closed already
    }
    await this.#accepting;
    for (const guarded of this.#open) this.#end(guarded);
  }

  async #accept(): Promise<void> {
    for (;;) {
      let client: Deno.Conn;
      try {
        client = await this.#listener.accept();
      } catch (error) {
        if (error instanceof Deno.errors.BadResource || error instanceof Deno.errors.Interrupted) {
          return;
        }
        logFailure("accept a connection", error);
        continue;
      }
      this.#accepted++;
      if (this.#open.size >= this.#options.maxConnections) {
        this.#cut++;
        close(client);
        continue;
      }
      const now = performance.now();
      const guarded: Guarded = {
        client,
        lastByte: now,
        phase: "head",
        headSince: now,
        dropped: 0,
        closed: false,
      };
      this.#open.add(guarded);
      this.#relay(guarded).catch((error) => logFailure("relay a connection", error));
    }
  }

  async #relay(guarded: Guarded): Promise<void> {
    let server: Deno.Conn;
    try {
      server = await this.#upstream();
    } catch (error) {
      logFailure("reach the server from the guard", error);
      return this.#end(guarded);
    }
    if (guarded.closed) return close(server);
    guarded.server = server;
    await Promise.all([
      this.#pump(guarded, guarded.client, server, true),
      this.#pump(guarded, server, guarded.client, false),
    ]);
    this.#end(guarded);
  }

  async #pump(guarded: Guarded, from: Deno.Conn, to: Deno.Conn, fromClient: boolean) {
    const buffer = BUFFERS.take();
    try {
      await this.#relayFrom(guarded, from, to, fromClient, buffer);
    } finally {
      BUFFERS.give(buffer);
    }
  }

  async #relayFrom(
    guarded: Guarded,
    from: Deno.Conn,
    to: Deno.Conn,
    fromClient: boolean,
    buffer: Uint8Array,
  ): Promise<void> {
    let matched = 0;
    let headBytes = 0;
    try {
      for (;;) {
        const n = await from.read(buffer);
        if (n === null) break;
        guarded.lastByte = performance.now();
        const chunk = buffer.subarray(0, n);
        if (fromClient && guarded.lingerUntil !== undefined) {
          guarded.dropped += n;
          if (guarded.dropped > LINGER.bytes) return this.#end(guarded);
          continue;
        }
        if (fromClient) {
          if (guarded.phase === "response") {
            guarded.phase = "head";
            guarded.headSince = guarded.lastByte;
            matched = 0;
            headBytes = 0;
          }
          if (guarded.phase === "head") {
            for (const byte of chunk) {
              matched = byte === BLANK_LINE[matched] ? matched + 1 : byte === 13 ? 1 : 0;
              if (matched === 4) {
                guarded.phase = "request";
                guarded.headSince = undefined;
                break;
              }
            }
            headBytes += n;
            if (guarded.phase === "head" && headBytes > MAX_HEAD_BYTES) {
              this.#cut++;
              return this.#end(guarded);
            }
          }
        } else if (guarded.phase === "request") {
          // The start of a response: 101 makes a tunnel, 100 Continue awaits the rest.
          const status = new TextDecoder().decode(chunk.subarray(0, 12));
          if (status.startsWith(`${STATUS_PREFIX}01`)) guarded.phase = "tunnel";
          else if (!status.startsWith(`${STATUS_PREFIX}00`)) guarded.phase = "response";
        }
        try {
          for (let written = 0; written < n;) written += await to.write(chunk.subarray(written));
        } catch (error) {
          // The server stopped reading (an early answer): drop the rest until its answer is out.
          if (!fromClient) throw error;
          guarded.lingerUntil ??= performance.now() + LINGER.ms;
        }
      }
      if (!fromClient) {
        // The answer is out: half-close, and read what the client still sends for a while.
        await to.closeWrite().catch(() => {});
        guarded.lingerUntil = Math.min(
          guarded.lingerUntil ?? Infinity,
          performance.now() + LINGER.ms,
        );
        return;
      }
      // The client is done sending and waits for the answer: pass the half-close on.
      if (guarded.lingerUntil !== undefined) return this.#end(guarded);
      await to.closeWrite().catch(() => {});
    } catch {
      // A side closed (by us, or reset): the relay ends.
      this.#end(guarded);
    }
  }

  #sweep(): void {
    const now = performance.now();
    const { headerTimeoutMs, idleTimeoutMs } = this.#options;
    for (const guarded of this.#open) {
      if (guarded.lingerUntil !== undefined && now > guarded.lingerUntil) {
        this.#end(guarded);
        continue;
      }
      const late = guarded.headSince !== undefined && now - guarded.headSince > headerTimeoutMs;
      if (late || now - guarded.lastByte > idleTimeoutMs) {
        this.#cut++;
        this.#end(guarded);
      }
    }
  }

  #end(guarded: Guarded): void {
    if (guarded.closed) return;
    guarded.closed = true;
    this.#open.delete(guarded);
    close(guarded.client);
    if (guarded.server) close(guarded.server);
  }
}

function close(conn: Deno.Conn): void {
  try {
    conn.close();
  } catch {
    // closed already
  }
}
