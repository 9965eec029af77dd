/**
 * Helpers of the hostile-input tests: a trajectory read back, a
 * server-sent-event stream read with bounded waits, and a raw HTTP/1.1
 * request (fetch sets `Host` itself; DNS rebinding sends another).
 *
 * @module
 */
import { join } from "node:path";

/**
 * A session's trajectory lines.
 *
 * @param runDir the run directory
 * @param session the session id
 * @returns its events, oldest first
 */
export async function readTrajectory(
  runDir: string,
  session: string,
): Promise<Record<string, unknown>[]> {
  const text = await Deno.readTextFile(join(runDir, `${session}.jsonl`));
  return text.split("\n").filter((line) => line !== "").map((line) => JSON.parse(line));
}

/** An open event stream; dispose to close it. */
export interface SseStream extends AsyncDisposable {
  /**
   * Reads on until the stream has carried `marker`.
   *
   * @param marker text the stream must carry
   * @param what what was awaited, for the error
   * @param timeoutMs the bound
   * @returns everything read so far
   */
  until(marker: string, what: string, timeoutMs?: number): Promise<string>;
}

/**
 * Opens an event stream.
 *
 * @param url the stream's URL
 * @returns the stream
 */
export async function sseStream(url: string): Promise<SseStream> {
  const abort = new AbortController();
  const response = await fetch(url, { signal: abort.signal });
  if (!response.ok || !response.body) throw new Error(`${url} answered ${response.status}`);
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let text = "";
  let ended = false;
  return {
    async until(marker, what, timeoutMs = 20_000) {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const expired = new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new Error(`${what}: not within ${timeoutMs} ms; the stream:\n${text}`)),
          timeoutMs,
        );
      });
      try {
        while (!text.includes(marker)) {
          if (ended) throw new Error(`${what}: the stream ended; it carried:\n${text}`);
          const chunk = await Promise.race([reader.read(), expired]);
          if (chunk.done) ended = true;
          else text += chunk.value;
        }
        return text;
      } finally {
        clearTimeout(timer);
      }
    },
    async [Symbol.asyncDispose]() {
      abort.abort();
      await reader.cancel().catch(() => {});
    },
  };
}

/**
 * Sends one HTTP/1.1 request as written, `Host` included, and reads the
 * status line and body.
 *
 * @param port the server's port on 127.0.0.1
 * @param head the request line and headers, without the blank line
 * @param body the body, if any
 * @returns the status and the body text
 */
export async function rawRequest(
  port: number,
  head: string[],
  body = "",
): Promise<{ status: number; body: string }> {
  const connection = await Deno.connect({ hostname: "127.0.0.1", port });
  try {
    const bytes = new TextEncoder().encode(body);
    const request = [...head, `content-length: ${bytes.length}`, "connection: close", "", ""]
      .join("\r\n");
    await connection.write(new TextEncoder().encode(request));
    if (bytes.length > 0) await connection.write(bytes);
    let text = "";
    const decoder = new TextDecoder();
    const buffer = new Uint8Array(16_384);
    const deadline = AbortSignal.timeout(20_000);
    while (!deadline.aborted) {
      const n = await connection.read(buffer);
      if (n === null) break;
      text += decoder.decode(buffer.subarray(0, n), { stream: true });
    }
    const status = Number(text.match(/^HTTP\/1\.1 (\d{3})/)?.[1] ?? 0);
    return { status, body: text.slice(text.indexOf("\r\n\r\n") + 4) };
  } finally {
    connection.close();
  }
}
