/**
 * What {@linkcode NewContextOptions} become in CDP: the per-context proxy
 * that enforces `onlyOrigins`, and the viewport every page gets.
 *
 * @module
 */
import type { TargetInitializer } from "./browser_context.ts";
import type { NewContextOptions, Viewport } from "./browser.ts";

/**
 * A port on loopback where nothing listens (the discard port): the proxy of a
 * context restricted by `onlyOrigins`, so what bypasses no rule fails fast.
 */
const CLOSED_PROXY = "http://127.0.0.1:9";

/**
 * Maps `onlyOrigins` to Chromium's per-context proxy settings.
 *
 * @param options the options of the new context
 * @returns the proxy fields of `Target.createBrowserContext`; none without `onlyOrigins`
 * @throws {TypeError} when an entry of `onlyOrigins` is not an http(s) origin
 */
export function networkPolicy(
  options: NewContextOptions,
): { proxyServer?: string; proxyBypassList?: string } {
  if (options.onlyOrigins === undefined) return {};
  const hosts = options.onlyOrigins.map((origin) => {
    let url: URL;
    try {
      url = new URL(origin);
    } catch (cause) {
      throw new TypeError(`Cannot create context: "${origin}" is not an origin`, { cause });
    }
    if (url.protocol !== "http:" && url.protocol !== "https:") {
      throw new TypeError(`Cannot create context: "${origin}" is not an http or https origin`);
    }
    return url.host; // host[:port]: the bypass rule matches that host and port only
  });
  // "<-loopback>" drops Chromium's implicit bypass of loopback, so other
  // envs on this machine go to the closed proxy too.
  return { proxyServer: CLOSED_PROXY, proxyBypassList: ["<-loopback>", ...hosts].join(";") };
}

/**
 * Checks a context's viewport before the context is created.
 *
 * @param viewport the requested viewport
 * @throws {RangeError} when a side is not an integer from 1 to 10000
 */
export function checkViewport(viewport: Viewport): void {
  for (const side of ["width", "height"] as const) {
    const value = viewport[side];
    if (!Number.isInteger(value) || value < 1 || value > 10_000) {
      throw new RangeError(
        `Cannot create a context: viewport ${side} "${value}" is not an integer from 1 to 10000`,
      );
    }
  }
}

/**
 * An initializer that gives every page of a context, popups included, the
 * viewport.
 *
 * @param viewport a viewport {@linkcode checkViewport} accepted
 * @returns the initializer to add to the context
 */
export function viewportInitializer(viewport: Viewport): TargetInitializer {
  return async ({ kind, session }) => {
    if (kind !== "page") return;
    await session.send("Emulation.setDeviceMetricsOverride", {
      width: viewport.width,
      height: viewport.height,
      deviceScaleFactor: 1,
      mobile: false,
    });
  };
}
