/**
 * Connecting to a browser: the transport a DevTools URL gets, and a launched
 * process together with its connection.
 *
 * @module
 */
import { Connection } from "../cdp/connection.ts";
import type { Transport } from "../cdp/transport.ts";
import { WebSocketTransport } from "../cdp/websocket_transport.ts";
import { TcpTransport } from "../cdp/tcp_transport.ts";
import { BrowserProcess } from "./browser_process.ts";
import type { LaunchOptions } from "./browser.ts";

/**
 * Starts a browser process and opens a connection to it, mapping the two timeouts to their parts.
 *
 * @param options the executable, flags and timeouts of `Browser.launch`
 * @returns the process and the connection to it; the process is killed when connecting fails
 * @throws {BrowserNotFoundError} when no browser executable is found
 * @throws {BrowserLaunchError} when the browser does not start
 */
export async function launchAndConnect(
  options: LaunchOptions,
): Promise<{ process: BrowserProcess; connection: Connection }> {
  const { launchTimeoutMs, commandTimeoutMs, ...processOptions } = options;
  const process = await BrowserProcess.launch(
    launchTimeoutMs === undefined
      ? processOptions
      : { ...processOptions, timeoutMs: launchTimeoutMs },
  );
  try {
    const transport = await connectTransport(process.wsEndpoint);
    const connection = new Connection(
      transport,
      commandTimeoutMs === undefined ? {} : { timeoutMs: commandTimeoutMs },
    );
    return { process, connection };
  } catch (error) {
    await process.kill();
    throw error;
  }
}

/**
 * A transport to a DevTools URL: our own WebSocket client on Deno (Nagle
 * off: the built-in one stalls ~40 ms on a command of 1 to 64 KiB sent while
 * nothing else is in flight), the runtime's WebSocket elsewhere and for
 * `wss://`.
 *
 * @param url a `ws://` or `wss://` DevTools URL
 * @returns the open transport
 */
export function connectTransport(url: string): Promise<Transport> {
  return TcpTransport.available(url) ? TcpTransport.connect(url) : WebSocketTransport.connect(url);
}
