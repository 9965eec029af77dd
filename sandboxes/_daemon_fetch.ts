/**
 * One request to a daemon's API (Incus or Docker), with the failures mapped
 * the same way for both: no answer in time is a SandboxTimeoutError, no
 * connection at all a DaemonUnavailableError that says how to install it.
 *
 * @module
 */
import { DaemonUnavailableError, SandboxTimeoutError } from "./errors.ts";

/** Which daemon is asked, for the error messages. */
export interface DaemonInfo {
  /** `"Incus"` or `"Docker"`. */
  name: string;
  /** Where it was asked: a socket path or a URL. */
  endpoint: string;
  /** How to get it running, such as `install it with "apt-get install docker.io" and start dockerd`. */
  install: string;
}

/** The request. */
export interface DaemonRequest {
  method: string;
  /** The API path, for the error messages. */
  path: string;
  headers: Headers;
  /** A JSON body, sent as `application/json`. */
  json?: unknown;
  /** A raw body, sent as `rawType`. */
  body?: BodyInit | undefined;
  /** The content type of a raw body. */
  rawType: string;
  client: Deno.HttpClient;
  timeoutMs: number;
}

/**
 * Sends one request and returns the response, whatever its status.
 *
 * @throws {SandboxTimeoutError} when the daemon does not answer in time
 * @throws {DaemonUnavailableError} when it cannot be reached
 */
export async function fetchDaemon(
  daemon: DaemonInfo,
  url: string | URL,
  request: DaemonRequest,
): Promise<Response> {
  const { method, path, headers, client, timeoutMs } = request;
  let body = request.body;
  if (request.json !== undefined) {
    headers.set("content-type", "application/json");
    body = JSON.stringify(request.json);
  } else if (body !== undefined) {
    headers.set("content-type", request.rawType);
  }
  try {
    return await fetch(url, {
      method,
      headers,
      ...(body === undefined ? {} : { body }),
      client,
      signal: AbortSignal.timeout(timeoutMs),
    });
  } catch (error) {
    if (error instanceof DOMException && error.name === "TimeoutError") {
      throw new SandboxTimeoutError(
        `${daemon.name} did not answer "${method} ${path}" within ${timeoutMs} ms`,
        { cause: error },
      );
    }
    throw new DaemonUnavailableError(
      `Cannot reach ${daemon.name} at "${daemon.endpoint}": ${daemon.install} (see .ci/daemons.sh)`,
      { cause: error },
    );
  }
}
