/**
 * A CDP transport over
 * [chrome-remote-interface](https://github.com/cyrus-and/chrome-remote-interface),
 * for code that already speaks to Chromium through a CRI client.
 *
 * @example Drive a browser through chrome-remote-interface
 * ```ts ignore
 * import { Browser, newContext } from "@webserv/webserv/engine";
 * import { CriTransport } from "@webserv/webserv/adapters/cri";
 * const transport = await CriTransport.connect("ws://127.0.0.1:9222/devtools/browser/…");
 * await using browser = await Browser.connect(transport);
 * const page = await (await newContext(browser)).newPage();
 * ```
 *
 * @module
 */
import CDP from "chrome-remote-interface";
import type { OutgoingMessage, Transport } from "../engine/cdp/mod.ts";
import { bestEffort } from "../engine/log.ts";

/**
 * The part of a chrome-remote-interface client (`CDP.Client`) this transport
 * uses. A client made by `CDP({target, local: true})` fits it.
 */
export interface CriClient {
  /**
   * Sends a command; `callback` gets `(false, result)`, `(true, error)` for a
   * protocol error, or `(Error)` when the socket failed.
   */
  send(
    method: string,
    params: Record<string, unknown>,
    sessionId: string | undefined,
    callback: (error: unknown, response: unknown) => void,
  ): void;
  /** Adds a listener: `"event"` gets every raw event message, `"disconnect"` the socket's end. */
  on(event: "event" | "disconnect", listener: (message?: unknown) => void): unknown;
  /** Removes a listener added with `on`. */
  removeListener(event: "event" | "disconnect", listener: (message?: unknown) => void): unknown;
  /** Closes the socket. */
  close(): Promise<void>;
}

/** Options of chrome-remote-interface's `CDP()` that this adapter passes. */
interface CriConnectOptions {
  target: string;
  local: boolean;
}

/** The `CDP()` entry point of chrome-remote-interface, which ships no types. */
const connectCri = CDP as unknown as (options: CriConnectOptions) => Promise<CriClient>;

/**
 * A {@linkcode Transport} over a chrome-remote-interface client.
 *
 * Flat sessions pass through unchanged: a command's `sessionId` goes to CRI's
 * `send(method, params, sessionId, callback)`, and every event reaches
 * `onmessage` as the raw message CRI parsed, `sessionId` included. CRI keeps
 * its own command ids, so answers are handed on as `{id, result}` or
 * `{id, error: {code, message, data}}` under the connection's id.
 *
 * Limits: CRI reports a broken socket to each pending command as a plain
 * `Error` and may not emit `"disconnect"` when a caller closed the client; the
 * transport treats the first such failure as the end of the transport. A
 * client handed to the constructor stays open when the transport closes;
 * only one made by {@linkcode CriTransport.connect} is closed with it.
 *
 * @example Wrap a client you already have
 * ```ts ignore
 * import CDP from "chrome-remote-interface";
 * import { Browser } from "@webserv/webserv";
 * import { CriTransport } from "@webserv/webserv/adapters/cri";
 * const client = await CDP({ target: "ws://127.0.0.1:9222/devtools/browser/…", local: true });
 * const browser = await Browser.connect(new CriTransport(client));
 * await browser.close(); // the client stays open
 * await client.close();
 * ```
 */
export class CriTransport implements Transport {
  #client: CriClient;
  #ownsClient = false;
  #closed = false;
  /** Receives every incoming message, as parsed objects. */
  onmessage: ((message: unknown) => void) | undefined;
  /** Called once when the transport has closed. */
  onclose: ((reason: string) => void) | undefined;

  /**
   * Opens a chrome-remote-interface client on a browser endpoint. The
   * protocol description bundled with CRI is used, so nothing but the
   * WebSocket is fetched.
   *
   * @param endpoint a browser-level `ws://` or `wss://` DevTools URL
   * @returns the open transport, which closes the client when it closes
   * @throws {TypeError} when the URL is not a WebSocket URL
   * @throws {Error} when the socket cannot be opened
   *
   * @example Connect to a launched browser
   * ```ts ignore
   * import { BrowserProcess } from "@webserv/webserv/engine";
   * import { CriTransport } from "@webserv/webserv/adapters/cri";
   * const process = await BrowserProcess.launch();
   * const transport = await CriTransport.connect(process.wsEndpoint);
   * transport.close();
   * await process.kill();
   * ```
   */
  static async connect(endpoint: string): Promise<CriTransport> {
    if (!/^wss?:\/\//.test(endpoint)) {
      throw new TypeError(`Cannot connect to "${endpoint}": expected a ws:// or wss:// URL`);
    }
    let client: CriClient;
    try {
      client = await connectCri({ target: endpoint, local: true });
    } catch (error) {
      const detail = error instanceof Error ? error.message : String(error);
      throw new Error(`Cannot connect to "${endpoint}": ${detail}`, { cause: error });
    }
    const transport = new CriTransport(client);
    transport.#ownsClient = true;
    return transport;
  }

  /**
   * Wraps a connected client. The caller keeps ownership: closing the
   * transport stops listening but leaves the client open.
   *
   * @param client a connected chrome-remote-interface client, at browser level
   */
  constructor(client: CriClient) {
    this.#client = client;
    keepEarlyAnswers(client);
    client.on("event", this.#onEvent);
    client.on("disconnect", this.#onDisconnect);
  }

  /**
   * Sends one command through the client. Never throws: a closed socket is
   * reported through `onclose`.
   *
   * @param message the command, with its connection id and optional `sessionId`
   */
  send(message: OutgoingMessage): void {
    if (this.#closed) return;
    const { id } = message;
    try {
      this.#client.send(
        message.method,
        message.params ?? {},
        message.sessionId,
        (error, response) => this.#answer(id, error, response),
      );
    } catch (error) {
      // CRI throws synchronously only when its socket is not open.
      this.#finish(`chrome-remote-interface: ${describe(error)}`);
    }
  }

  /** Stops listening, closes the client if this transport opened it, and calls `onclose`. */
  close(): void {
    if (this.#closed) return;
    this.#finish("transport closed");
    if (this.#ownsClient) {
      bestEffort("closing the chrome-remote-interface client", this.#client.close());
    }
  }

  #answer(id: number, error: unknown, response: unknown): void {
    if (this.#closed) return;
    if (error instanceof Error) {
      // A socket failure, not an answer: CRI fails every pending command this
      // way when the socket closes, before (or instead of) "disconnect".
      this.#finish(`chrome-remote-interface: ${error.message}`);
      return;
    }
    this.onmessage?.(error ? { id, error: response } : { id, result: response });
  }

  #onEvent = (message?: unknown): void => {
    if (!this.#closed) this.onmessage?.(message);
  };

  #onDisconnect = (): void => this.#finish("chrome-remote-interface: socket closed");

  #finish(reason: string): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#client.removeListener("event", this.#onEvent);
    this.#client.removeListener("disconnect", this.#onDisconnect);
    this.onclose?.(reason);
  }
}

/** The private parts of a chrome-remote-interface 0.34 client that {@linkcode keepEarlyAnswers} wraps. */
interface CriInternals {
  _handleMessage?: (message: { id?: number }) => void;
  _callbacks?: Record<number, unknown>;
  [EARLY_ANSWERS]?: true;
}

const EARLY_ANSWERS = Symbol("webserv.earlyAnswers");

/**
 * chrome-remote-interface 0.34 registers a command's callback only when the
 * WebSocket reports that the command was written (`_enqueueCommand`, in the
 * send's completion callback), and drops an answer that finds no callback
 * (`_handleMessage`). When the machine is busy, the browser's answer can be
 * read before that completion runs: the command then never ends (seen as
 * `Target.setAutoAttach` on a new page hanging until its deadline, with both
 * cores loaded). This keeps such early answers and hands each to its
 * callback as soon as CRI registers it. A client without those internals
 * (another CRI version) is left as it is.
 */
function keepEarlyAnswers(client: CriClient): void {
  const internals = client as unknown as CriInternals;
  const handle = internals._handleMessage;
  const callbacks = internals._callbacks;
  if (typeof handle !== "function" || typeof callbacks !== "object" || callbacks === null) return;
  if (internals[EARLY_ANSWERS]) return;
  internals[EARLY_ANSWERS] = true;
  const early = new Map<number, { id?: number }>();
  const original = handle.bind(client);
  internals._callbacks = new Proxy(callbacks, {
    set(target, key, value) {
      const done = Reflect.set(target, key, value);
      const id = Number(key);
      const answer = early.get(id);
      if (answer !== undefined) {
        early.delete(id);
        original(answer);
      }
      return done;
    },
  });
  internals._handleMessage = (message) => {
    const id = message.id;
    if (typeof id === "number" && id > 0 && !(id in (internals._callbacks ?? {}))) {
      early.set(id, message);
      return;
    }
    original(message);
  };
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

// The transport contract this class implements, so this entry point's
// documentation stands alone.
export type { OutgoingMessage, Transport } from "../engine/cdp/mod.ts";
