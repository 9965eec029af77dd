/**
 * The soak's `/health` prober, in a worker of its own so that the
 * benchmark's other work never delays it: a request every 10 ms, one at a
 * time, and the longest wait for an answer (the server's stall as a client
 * sees it, plus loopback and scheduling). Post `{url}` to start, `"stop"`
 * to get the {@linkcode ProbeResult}.
 *
 * @module
 */

/** What the prober saw. */
export interface ProbeResult {
  requests: number;
  failures: number;
  /** The longest time between a request and its answer, ms. */
  maxMs: number;
  /** Answers slower than 100 ms: when (epoch ms at the request) and how long. */
  slow: { at: number; ms: number }[];
  p99Ms: number;
}

const scope = self as unknown as Worker;
let running = true;
scope.onmessage = async (event: MessageEvent<{ url: string } | "stop">) => {
  if (event.data === "stop") {
    running = false;
    return;
  }
  const url = `${event.data.url}/health`;
  const times: number[] = [];
  const result: ProbeResult = { requests: 0, failures: 0, maxMs: 0, slow: [], p99Ms: 0 };
  while (running) {
    const at = Date.now();
    const start = performance.now();
    try {
      const response = await fetch(url, { signal: AbortSignal.timeout(10_000) });
      await response.body?.cancel();
      if (!response.ok) result.failures++;
    } catch {
      result.failures++;
    }
    const ms = performance.now() - start;
    result.requests++;
    times.push(ms);
    if (ms > result.maxMs) result.maxMs = ms;
    if (ms > 100) result.slow.push({ at, ms: Math.round(ms) });
    await new Promise((r) => setTimeout(r, Math.max(0, 10 - ms)));
  }
  times.sort((a, b) => a - b);
  result.p99Ms = times[Math.max(0, Math.ceil(times.length * 0.99) - 1)] ?? 0;
  result.maxMs = Math.round(result.maxMs * 10) / 10;
  scope.postMessage(result);
};
