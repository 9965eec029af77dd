/**
 * Who may talk to the server, before anything else reads the request.
 *
 * A server on loopback trusts its machine, not every web page its users
 * open: a page can point a name it owns at 127.0.0.1 (DNS rebinding) or send
 * a cross-site request, and a session's own page is a web page too. So, on
 * loopback, a request whose `Host` is not a loopback name on the server's
 * port is refused (403 `forbidden-host`), and so is any browser request from
 * another origin (403 `forbidden-origin`: a present `Origin` that is not the
 * server's own). Off loopback a token guards the server; `allowedHosts`
 * names the hosts it answers to there (or, on loopback, behind a forwarded
 * port).
 *
 * @module
 */
import type { Context, Next } from "hono";
import { HttpError } from "./http_error.ts";

/** Which names the server answers to. */
export interface HostPolicy {
  /** Whether the server listens on loopback only. */
  loopback: boolean;
  /** The port it listens on, once it does; no port check before. */
  port: () => number | undefined;
  /**
   * More names it answers to, as `name` (any port) or `name:port`, such as
   * `"webserv.internal"` or `"localhost:9000"`. Off loopback, when given,
   * no other name (but loopback names) is answered.
   *
   * @default {[]}
   */
  allowedHosts?: readonly string[];
}

const LOOPBACK_NAME =
  /^(?:localhost|[a-z0-9-]+(?:\.[a-z0-9-]+)*\.localhost|127\.\d{1,3}\.\d{1,3}\.\d{1,3}|\[::1\])$/;

/**
 * Whether a host name (as `URL.hostname` spells it) is this machine.
 *
 * @param hostname the name
 * @returns whether it is loopback: 127.x, localhost, *.localhost or [::1]
 */
export function isLoopbackName(hostname: string): boolean {
  return LOOPBACK_NAME.test(hostname.toLowerCase());
}

function portOf(url: URL): number {
  return url.port === "" ? (url.protocol === "https:" ? 443 : 80) : Number(url.port);
}

/**
 * The middleware.
 *
 * @param policy the names the server answers to
 * @returns a middleware refusing foreign hosts and origins with 403
 */
export function hostGuard(policy: HostPolicy): (c: Context, next: Next) => Promise<void> {
  const allowed = (policy.allowedHosts ?? []).map((host) => host.toLowerCase());
  const listed = (url: URL) => allowed.includes(url.hostname) || allowed.includes(url.host);
  const serves = (url: URL): boolean => {
    if (listed(url)) return true;
    const port = policy.port();
    if (isLoopbackName(url.hostname) && (port === undefined || portOf(url) === port)) return true;
    return !policy.loopback && allowed.length === 0;
  };
  return async (c, next) => {
    // Deno builds the request's URL from its Host header (or :authority).
    const url = new URL(c.req.url);
    if (!serves(url)) {
      const port = policy.port();
      throw new HttpError(
        403,
        "forbidden-host",
        `Host "${url.host.slice(0, 200)}" is not this server's: it answers to ${
          policy.loopback || allowed.length > 0
            ? `127.0.0.1, localhost, *.localhost or [::1]${port ? ` on port ${port}` : ""}`
            : "loopback names"
        }${
          allowed.length > 0 ? ` and ${allowed.map((h) => `"${h}"`).join(", ")}` : ""
        } (a DNS-rebinding guard); start it with --allowed-host NAME to answer to another name`,
      );
    }
    const origin = c.req.header("origin");
    if (origin !== undefined && !sameOrigin(origin, url)) {
      throw new HttpError(
        403,
        "forbidden-origin",
        `Cross-origin requests are refused: Origin "${origin.slice(0, 200)}" is not this ` +
          `server's (${url.origin}); call the API from a program or from the server's own pages`,
      );
    }
    await next();
  };
}

/** Whether a browser's `Origin` is the server itself, over http or https (behind a proxy). */
function sameOrigin(origin: string, url: URL): boolean {
  let parsed: URL;
  try {
    parsed = new URL(origin);
  } catch {
    return false; // "null" and anything else that is not an origin
  }
  return (parsed.protocol === "http:" || parsed.protocol === "https:") &&
    parsed.host === url.host;
}
