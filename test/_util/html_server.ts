/**
 * A tiny loopback HTTP server for browser tests: serves fixed HTML by path.
 *
 * @module
 */

/** A running test server; dispose it to stop. */
export interface HtmlServer extends AsyncDisposable {
  /** The port on 127.0.0.1. */
  port: number;
  /** `http://<host>:<port><path>`, with `host` defaulting to `127.0.0.1`. */
  url(path: string, host?: string): string;
}

/**
 * Serves `pages` (path → HTML) on 127.0.0.1, port 0. Unknown paths get 404.
 *
 * @param pages the HTML to serve by path
 * @returns the running server
 */
export function serveHtml(pages: Record<string, string>): HtmlServer {
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, (request) => {
    const html = pages[new URL(request.url).pathname];
    return html === undefined
      ? new Response("not found", { status: 404 })
      : new Response(html, { headers: { "content-type": "text/html; charset=utf-8" } });
  });
  const port = server.addr.port;
  return {
    port,
    url: (path, host = "127.0.0.1") => `http://${host}:${port}${path}`,
    [Symbol.asyncDispose]: () => server.shutdown(),
  };
}
