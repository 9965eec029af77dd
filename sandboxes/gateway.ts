/**
 * The loopback gateway: one port on 127.0.0.1, one virtual host per instance.
 *
 * The browser opens `http://env-<id>.localhost:<port>/`; Chromium resolves
 * every `*.localhost` name to loopback (RFC 6761), so each instance gets its
 * own origin, and so its own cookies and storage, behind a single listener.
 * The gateway reads the `Host` header, finds the route and forwards the
 * request to the instance's unix socket, loopback port or in-process handler,
 * streaming bodies both ways. WebSocket upgrades are relayed message by
 * message. A host that names no route gets a 404 page.
 *
 * @module
 */
import { logFailure } from "../engine/log.ts";
import type { SiteHandler } from "./types.ts";

/** Where a route sends its requests. */
export type GatewayTarget =
  | {
    /** A unix socket the instance's HTTP server listens on. */
    unix: string;
  }
  | {
    /** A TCP port on a loopback address. */
    port: number;
    /**
     * The loopback address of that port.
     *
     * @default {"127.0.0.1"}
     */
    hostname?: string;
  }
  | {
    /** A handler in this process. */
    handler: SiteHandler;
  };

/** One virtual host of the gateway. */
export interface GatewayRoute {
  /** The id in `env-<id>.localhost`. */
  readonly id: string;
  /** The route's origin, such as `http://env-ab12cd34.localhost:8800`. */
  readonly origin: string;
  /**
   * Sends later requests somewhere else; the origin stays the same.
   *
   * @param target the new target
   */
  retarget(target: GatewayTarget): void;
  /** Removes the route; later requests to its host get a 404 page. */
  remove(): void;
}

/** An origin the gateway reserved ahead for an instance not made yet. */
export interface SpareRoute {
  /** The reserved route's origin. */
  readonly origin: string;
  /** Removes the route, unless an instance claimed it (then the instance owns it). */
  release(): void;
}

/** Options of {@linkcode Gateway}. */
export interface GatewayOptions {
  /**
   * The loopback address to listen on.
   *
   * @default {"127.0.0.1"}
   */
  hostname?: string;
  /**
   * The port to listen on; `0` picks a free one.
   *
   * @default {0}
   */
  port?: number;
  /**
   * How long {@linkcode Gateway.close} waits for the server to finish after
   * it cut every request still in flight, in milliseconds.
   *
   * @default {2000}
   */
  closeTimeoutMs?: number;
}

const HOST_PATTERN = /^env-([a-z0-9]+)\.localhost(?::\d+)?$/i;
const HOP_BY_HOP = [
  "connection",
  "keep-alive",
  "proxy-connection",
  "transfer-encoding",
  "te",
  "trailer",
  "upgrade",
  "proxy-authenticate",
  "proxy-authorization",
];

interface RouteEntry {
  target: GatewayTarget;
  client: Deno.HttpClient;
}

/**
 * A loopback HTTP server that routes `env-<id>.localhost` to instances.
 *
 * @example Route a virtual host to a handler
 * ```ts
 * import { Gateway } from "./gateway.ts";
 * await using gateway = new Gateway();
 * const route = gateway.add({ handler: () => new Response("hello") });
 * const response = await gateway.request(route.origin, "/");
 * console.log(await response.text()); // "hello"
 * ```
 */
export class Gateway implements AsyncDisposable {
  /** The port the gateway listens on. */
  readonly port: number;
  /** The address the gateway listens on. */
  readonly hostname: string;
  #server: Deno.HttpServer<Deno.NetAddr>;
  #routes = new Map<string, RouteEntry>();
  #spares = new Map<string, GatewayRoute>();
  #loopbackClient = Deno.createHttpClient({ allowHost: true });
  #closing = new AbortController();
  #closed: Promise<void> | undefined;
  #sockets = new Set<WebSocket>();
  #closeTimeoutMs: number;

  /**
   * Starts listening at once.
   *
   * @param options where to listen
   * @throws {RangeError} when `hostname` is not a loopback address
   */
  constructor(options: GatewayOptions = {}) {
    const hostname = options.hostname ?? "127.0.0.1";
    if (!isLoopback(hostname)) {
      throw new RangeError(
        `Cannot listen on "${hostname}": the gateway listens only on loopback`,
      );
    }
    this.#server = Deno.serve({
      hostname,
      port: options.port ?? 0,
      onListen() {},
    }, (request, info) => this.#handle(request, info));
    this.port = this.#server.addr.port;
    this.hostname = hostname;
    this.#closeTimeoutMs = options.closeTimeoutMs ?? 2000;
  }

  /** The number of routes. */
  get size(): number {
    return this.#routes.size;
  }

  /**
   * Adds a virtual host with a fresh random id.
   *
   * @param target where its requests go
   * @returns the route, with its id and origin
   */
  add(target: GatewayTarget): GatewayRoute {
    let id = randomId();
    while (this.#routes.has(id)) id = randomId();
    this.#routes.set(id, { target, client: clientFor(target) });
    const origin = this.origin(id);
    return {
      id,
      origin,
      retarget: (next) => {
        const entry = this.#routes.get(id);
        if (!entry) {
          throw new RangeError(`Cannot retarget route "${id}": it was removed`);
        }
        entry.client.close();
        this.#routes.set(id, { target: next, client: clientFor(next) });
      },
      remove: () => {
        this.#routes.get(id)?.client.close();
        this.#routes.delete(id);
      },
    };
  }

  /**
   * Reserves a route for an instance not made yet: it answers 503 until an
   * instance claims it. A browser context that may reach only this origin
   * can then be made before the instance exists (a fork's, ahead of the
   * fork: see `ContextPool` in the engine).
   *
   * @returns the spare route's origin and its release
   */
  reserve(): SpareRoute {
    const route = this.add({
      handler: () => page(503, "Not ready", "This environment is not made yet"),
    });
    this.#spares.set(route.origin, route);
    return {
      origin: route.origin,
      release: () => {
        if (this.#spares.delete(route.origin)) route.remove();
      },
    };
  }

  /**
   * Takes a spare route for an instance: from now on it sends its requests
   * to `target`, and its release leaves it alone.
   *
   * @param origin the spare route's origin, from {@linkcode Gateway.reserve}
   * @param target where its requests go
   * @returns the route, now the instance's
   * @throws {RangeError} when the origin is not a spare route of this gateway (released, or claimed already)
   */
  claim(origin: string, target: GatewayTarget): GatewayRoute {
    const route = this.#spares.get(origin);
    if (!route) {
      throw new RangeError(
        `Cannot claim "${origin}": it is not a spare route of this gateway (released or claimed)`,
      );
    }
    this.#spares.delete(origin);
    route.retarget(target);
    return route;
  }

  /**
   * The origin of a route id.
   *
   * @param id the route's id
   * @returns `http://env-<id>.localhost:<port>`
   */
  origin(id: string): string {
    return `http://env-${id}.localhost:${this.port}`;
  }

  /**
   * Sends a request through the gateway from this process, as a browser
   * would. Deno's resolver does not map `*.localhost` to loopback, so this
   * connects to the gateway's address and sets the `Host` header.
   *
   * @param origin an origin the gateway serves
   * @param path the path and query, starting with `/`
   * @param init the request options
   * @returns the response
   */
  async request(
    origin: string,
    path: string,
    init: RequestInit = {},
  ): Promise<Response> {
    const headers = new Headers(init.headers);
    headers.set("host", new URL(origin).host);
    const address = this.hostname.includes(":") ? `[${this.hostname}]` : this.hostname;
    return await fetch(`http://${address}:${this.port}${path}`, {
      redirect: "manual",
      ...init,
      headers,
      client: this.#loopbackClient,
    });
  }

  /**
   * Stops listening and drops every route. Requests still in flight are cut
   * (an upstream or handler that never answers does not hold it up), and
   * relayed WebSockets are closed; it returns within `closeTimeoutMs` after
   * that even if the server has not finished.
   */
  close(): Promise<void> {
    this.#closed ??= this.#close();
    return this.#closed;
  }

  async #close(): Promise<void> {
    this.#closing.abort();
    for (const socket of this.#sockets) closeQuietly(socket, 1001, "gateway closed");
    for (const entry of this.#routes.values()) entry.client.close();
    this.#routes.clear();
    this.#spares.clear();
    this.#loopbackClient.close();
    let timer: ReturnType<typeof setTimeout> | undefined;
    const bound = new Promise<"timeout">((resolve) => {
      timer = setTimeout(() => resolve("timeout"), this.#closeTimeoutMs);
    });
    try {
      const outcome = await Promise.race([this.#server.shutdown(), bound]);
      if (outcome === "timeout") {
        this.#server.unref();
        logFailure(
          "closing the gateway",
          new Error(`The server did not finish within ${this.#closeTimeoutMs} ms`),
        );
      }
    } finally {
      clearTimeout(timer);
    }
  }

  /** Calls {@linkcode Gateway.close}. */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  async #handle(
    request: Request,
    info: Deno.ServeHandlerInfo<Deno.NetAddr>,
  ): Promise<Response> {
    const host = request.headers.get("host") ?? "";
    const id = HOST_PATTERN.exec(host)?.[1]?.toLowerCase();
    const entry = id === undefined ? undefined : this.#routes.get(id);
    if (!entry) {
      return page(404, "No such environment", `Nothing is served at "${host}"`);
    }
    const signal = this.#closing.signal;
    if ("handler" in entry.target) {
      try {
        const response = await untilAborted(
          Promise.resolve(entry.target.handler(request)),
          signal,
        );
        return cutOnAbort(response, signal);
      } catch (error) {
        logFailure(`serving "env-${id}" in-process`, error);
        return unavailable(signal);
      }
    }
    const url = new URL(request.url);
    // The URL names "localhost" for a unix socket: Deno resolves the URL's
    // host even when a unix proxy carries the request, and any other name
    // would be a DNS query leaving the machine. The Host header keeps the
    // env's origin.
    const upstream = "unix" in entry.target
      ? `http://localhost${url.pathname}${url.search}`
      : `http://${
        entry.target.hostname ?? "127.0.0.1"
      }:${entry.target.port}${url.pathname}${url.search}`;
    try {
      if (request.headers.get("upgrade")?.toLowerCase() === "websocket") {
        return await untilAborted(
          relayWebSocket(request, upstream, host, entry.client, this.#sockets),
          signal,
        );
      }
      const headers = withoutHopByHop(request.headers);
      headers.set("host", host);
      headers.set("x-forwarded-for", info.remoteAddr.hostname);
      headers.set("x-forwarded-host", host);
      headers.set("x-forwarded-proto", "http");
      // Deno's fetch inflates a gzip or brotli body unless the request says
      // "identity", yet keeps the content-encoding and content-length
      // headers: a compressing upstream (Apache's mod_deflate) would reach
      // the browser as a plain body labelled gzip. Asked for identity, an
      // upstream sends the page as it is (compressing on loopback only costs
      // CPU), and one that compresses anyway passes through untouched.
      headers.set("accept-encoding", "identity");
      const response = await fetch(upstream, {
        method: request.method,
        headers,
        body: request.body,
        redirect: "manual",
        client: entry.client,
        signal,
      });
      return new Response(response.body, {
        status: response.status,
        statusText: response.statusText,
        headers: withoutHopByHop(response.headers),
      });
    } catch (error) {
      // The cause stays on our side: the agent sees a plain page, the way a
      // site that is down looks, with nothing of the gateway's internals.
      logFailure(`forwarding to "env-${id}"`, error);
      return unavailable(signal);
    }
  }
}

function unavailable(signal: AbortSignal): Response {
  return signal.aborted
    ? page(503, "Service unavailable", "This site is shutting down.")
    : page(502, "Bad gateway", "This site is not answering right now. Try again later.");
}

/** Resolves as `work` does, or rejects once `signal` aborts, whichever comes first. */
function untilAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
  });
}

/** The same response, whose body stops once `signal` aborts. */
function cutOnAbort(response: Response, signal: AbortSignal): Response {
  if (response.body === null || response.status === 101) return response;
  const pass = new TransformStream<Uint8Array, Uint8Array>();
  response.body.pipeTo(pass.writable, { signal }).catch((error) =>
    logFailure("streaming a response body", error)
  );
  return new Response(pass.readable, response);
}

function clientFor(target: GatewayTarget): Deno.HttpClient {
  if ("unix" in target) {
    return Deno.createHttpClient({
      proxy: { transport: "unix", path: target.unix },
      allowHost: true,
    });
  }
  return Deno.createHttpClient({ allowHost: true });
}

async function relayWebSocket(
  request: Request,
  upstreamUrl: string,
  host: string,
  client: Deno.HttpClient,
  sockets: Set<WebSocket>,
): Promise<Response> {
  const protocols = (request.headers.get("sec-websocket-protocol") ?? "")
    .split(",").map((p) => p.trim()).filter((p) => p !== "");
  const upstream = new WebSocket(upstreamUrl.replace(/^http/, "ws"), {
    protocols,
    headers: { host },
    client,
  });
  upstream.binaryType = "arraybuffer";
  sockets.add(upstream);
  await new Promise<void>((resolve, reject) => {
    upstream.onopen = () => resolve();
    upstream.onclose = () => reject(new Error("WebSocket closed before it opened"));
    upstream.onerror = (event) =>
      reject(
        new Error(
          event instanceof ErrorEvent ? event.message : "WebSocket failed",
        ),
      );
  });
  const { socket, response } = Deno.upgradeWebSocket(
    request,
    upstream.protocol === "" ? {} : { protocol: upstream.protocol },
  );
  socket.binaryType = "arraybuffer";
  sockets.add(socket);
  const pending: (string | ArrayBuffer)[] = [];
  socket.onopen = () => {
    for (const data of pending.splice(0)) socket.send(data);
  };
  upstream.onmessage = (event: MessageEvent<string | ArrayBuffer>) => {
    if (socket.readyState === WebSocket.OPEN) socket.send(event.data);
    else pending.push(event.data);
  };
  socket.onmessage = (event: MessageEvent<string | ArrayBuffer>) => {
    if (upstream.readyState === WebSocket.OPEN) upstream.send(event.data);
  };
  upstream.onclose = (event) => {
    sockets.delete(upstream);
    closeQuietly(socket, event.code, event.reason);
  };
  socket.onclose = (event) => {
    sockets.delete(socket);
    closeQuietly(upstream, event.code, event.reason);
  };
  upstream.onerror = () => closeQuietly(socket, 1011, "upstream failed");
  socket.onerror = () => closeQuietly(upstream, 1011, "client failed");
  return response;
}

function closeQuietly(socket: WebSocket, code: number, reason: string): void {
  if (socket.readyState >= WebSocket.CLOSING) return;
  // Codes 1005 and 1006 describe a close; they may not be sent in one.
  const sendable = code === 1000 || (code >= 3000 && code <= 4999);
  socket.close(sendable ? code : 1000, sendable ? reason : "");
}

function withoutHopByHop(source: Headers): Headers {
  const headers = new Headers(source);
  for (const token of (source.get("connection") ?? "").split(",")) {
    if (token.trim() !== "") headers.delete(token.trim());
  }
  for (const name of HOP_BY_HOP) headers.delete(name);
  return headers;
}

function page(status: number, title: string, detail: string): Response {
  const html = `<!doctype html><html><head><meta charset="utf-8"><title>${
    escapeHtml(title)
  }</title></head><body><h1>${escapeHtml(title)}</h1><p>${escapeHtml(detail)}</p></body></html>`;
  return new Response(html, {
    status,
    headers: { "content-type": "text/html; charset=utf-8" },
  });
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

function randomId(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(5));
  return Array.from(bytes, (b) => b.toString(36).padStart(2, "0")).join("")
    .slice(0, 8);
}

function isLoopback(hostname: string): boolean {
  return hostname === "localhost" || hostname === "::1" ||
    /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(hostname);
}
