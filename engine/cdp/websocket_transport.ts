/**
 * The default transport: Deno's built-in WebSocket.
 *
 * @module
 */
import type { OutgoingMessage, Transport } from "./transport.ts";

/**
 * A {@linkcode Transport} over Deno's built-in WebSocket.
 *
 * @example Connect to a browser endpoint
 * ```ts ignore
 * import { WebSocketTransport } from "@webserv/webserv/cdp";
 * const transport = await WebSocketTransport.connect("ws://127.0.0.1:9222/devtools/browser/…");
 * transport.close();
 * ```
 */
export class WebSocketTransport implements Transport {
  #socket: WebSocket;
  #closed = false;
  /** Receives every incoming message, as JSON text. */
  onmessage: ((message: unknown) => void) | undefined;
  /** Called once when the socket has closed. */
  onclose: ((reason: string) => void) | undefined;

  /**
   * Opens a WebSocket to a CDP endpoint.
   *
   * @param url a `ws://` or `wss://` DevTools endpoint
   * @param options how long to wait for the socket to open
   * @returns the open transport
   * @throws {TypeError} when the URL is not a WebSocket URL
   * @throws {Error} when the socket cannot be opened in time
   */
  static connect(
    url: string,
    options: { timeoutMs?: number } = {},
  ): Promise<WebSocketTransport> {
    if (!/^wss?:\/\//.test(url)) {
      throw new TypeError(`Cannot connect to "${url}": expected a ws:// or wss:// URL`);
    }
    const timeoutMs = options.timeoutMs ?? 10_000;
    if (typeof WebSocket === "undefined") {
      // Deno, Node 22 and later, Bun and browsers have one; Node 20 does not.
      return Promise.reject(
        new Error(
          `Cannot connect to "${url}": this runtime has no global WebSocket (use Node 22 or later, or pass a Transport from "@webserv/webserv/adapters")`,
        ),
      );
    }
    return new Promise((resolve, reject) => {
      const socket = new WebSocket(url);
      const timer = setTimeout(() => {
        socket.close();
        reject(new Error(`Cannot connect to "${url}": no answer within ${timeoutMs} ms`));
      }, timeoutMs);
      socket.onopen = () => {
        clearTimeout(timer);
        resolve(new WebSocketTransport(socket));
      };
      socket.onerror = (event) => {
        clearTimeout(timer);
        // Node has no global ErrorEvent: its error events carry `message` all the same.
        const message = (event as { message?: unknown }).message;
        const detail = typeof message === "string" && message !== "" ? message : "socket error";
        reject(new Error(`Cannot connect to "${url}": ${detail}`));
      };
    });
  }

  /**
   * Wraps an open WebSocket.
   *
   * @param socket an open WebSocket
   */
  constructor(socket: WebSocket) {
    this.#socket = socket;
    socket.onmessage = (event) => this.onmessage?.(event.data);
    socket.onerror = () => {};
    socket.onclose = (event) => this.#finish(event.reason || `code ${event.code}`);
  }

  send(message: OutgoingMessage): void {
    if (this.#closed || this.#socket.readyState !== WebSocket.OPEN) return;
    this.#socket.send(JSON.stringify(message));
  }

  close(): void {
    if (this.#closed) return;
    try {
      this.#socket.close();
    } finally {
      // Report the close now: a dead peer may never complete the handshake.
      this.#finish("transport closed");
    }
  }

  #finish(reason: string): void {
    if (this.#closed) return;
    this.#closed = true;
    this.onclose?.(reason);
  }
}
