/**
 * The client side of `bench:server`, run in a worker thread of its own: a
 * trainer's HTTP client lives in the trainer's process, not on the server's
 * event loop. It runs each session's closed loop of hover steps and posts
 * back the latencies.
 *
 * @module
 */
import { WebServClient } from "../adapters/client/mod.ts";

/** What the benchmark sends: the server, the sessions with their button ids, the steps each. */
export interface ClientJob {
  /** The server's base URL. */
  url: string;
  /** The sessions and the id of the button each hovers. */
  sessions: { id: string; button: number }[];
  /** Steps per session. */
  steps: number;
}

/** What the worker posts back: per step, the client's latency, the manager's time and the bytes. */
export interface ClientResult {
  /** Client-side latency of each step, ms. */
  latencies: number[];
  /** `info.elapsed_ms` of each step. */
  handler: number[];
  /** Size of each step's JSON response, bytes. */
  sizes: number[];
  /** Why the loop stopped early, if it did. */
  error?: string;
}

const scope = self as unknown as Worker;
scope.onmessage = async (event: MessageEvent<ClientJob>) => {
  const { url, sessions, steps } = event.data;
  const client = new WebServClient(url);
  const out: ClientResult = { latencies: [], handler: [], sizes: [] };
  try {
    await Promise.all(sessions.map(async ({ id, button }) => {
      for (let i = 0; i < steps; i++) {
        const t = performance.now();
        const result = await client.step(id, { action: "hover", id: button });
        if (result.status !== "ok") throw new Error(`Step failed: ${JSON.stringify(result.info)}`);
        out.latencies.push(performance.now() - t);
        out.handler.push(result.info.elapsed_ms);
        out.sizes.push(JSON.stringify(result).length);
      }
    }));
  } catch (error) {
    out.error = error instanceof Error ? error.message : String(error);
  }
  scope.postMessage(out);
};
