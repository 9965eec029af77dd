/**
 * The CDP listeners that feed a {@linkcode PageActivity} from one session:
 * Network, Page lifecycle and the hook's binding. Invariants are stated in
 * `_page_activity.ts`.
 *
 * @module
 */
import type { CdpSession } from "../cdp/connection.ts";
import type { EventName, EventParams } from "../cdp/protocol.ts";
import { decodeActivityReport } from "./_activity_hook.ts";
import { frameShape, type InFlight, type PageActivity } from "./_page_activity.ts";

/** Resource types that never end by design or that no one waits for. */
const IGNORED_TYPES = new Set(["EventSource", "Ping", "Prefetch", "CSPViolationReport"]);

/**
 * Feeds `activity` from `session`'s events.
 *
 * @param session the session; its Network, Page and Runtime domains are the caller's job
 * @param activity the page's record
 * @param options the hook's binding and the navigation grace period
 * @returns a function that removes the listeners
 */
export function listen(
  session: CdpSession,
  activity: PageActivity,
  options: { binding: string; graceMs: number },
): () => void {
  const offs: (() => void)[] = [];
  function on<E extends EventName>(event: E, listener: (params: EventParams<E>) => void): void {
    session.on(event, listener);
    offs.push(() => session.off(event, listener));
  }
  const { requests, sockets, loading, scripts } = activity;
  const finish = (requestId: string) => {
    requests.delete(requestId);
    activity.touch();
  };

  on("Network.requestWillBeSent", ({ requestId, request, type, frameId, loaderId }) => {
    activity.touch();
    if (type !== undefined && IGNORED_TYPES.has(type)) return;
    if (request.url.startsWith("data:") || request.url.startsWith("blob:")) return;
    requests.set(requestId, {
      url: request.url,
      method: request.method,
      start: performance.now(),
      key: endpointKey(request.url),
      received: 0,
      loaderId,
      ...(frameId !== undefined ? { frameId } : {}),
    });
  });
  on("Network.responseReceived", ({ requestId, response }) => {
    const request = requests.get(requestId);
    if (request) {
      const expected = bodySize(response.status, response.headers);
      if (expected === 0) return finish(requestId);
      if (expected !== undefined) request.expected = expected;
    }
    activity.touch();
  });
  on("Network.dataReceived", ({ requestId, dataLength, encodedDataLength }) => {
    const request = requests.get(requestId);
    if (!request || request.expected === undefined) return;
    request.received += Math.max(dataLength, encodedDataLength);
    // A body no one reads never gets `loadingFinished`: all bytes here is done.
    if (request.received >= request.expected) finish(requestId);
  });
  on("Network.loadingFinished", ({ requestId }) => finish(requestId));
  on("Network.loadingFailed", ({ requestId }) => finish(requestId));
  on("Network.eventSourceMessageReceived", () => activity.touch());
  on("Network.webSocketCreated", ({ requestId, url }) => {
    sockets.set(requestId, { url, sentAt: undefined, pushed: new Set() });
    activity.touch();
  });
  on("Network.webSocketFrameSent", ({ requestId }) => {
    const socket = sockets.get(requestId);
    if (socket && socket.sentAt === undefined) socket.sentAt = performance.now();
    activity.touch();
  });
  on("Network.webSocketFrameReceived", ({ requestId, response }) => {
    const socket = sockets.get(requestId);
    if (socket) {
      const shape = frameShape(response.payloadData);
      // A tick or heartbeat arriving while a message waits is not its answer.
      if (socket.sentAt === undefined) {
        if (socket.pushed.size < 50) socket.pushed.add(shape);
      } else if (!socket.pushed.has(shape)) socket.sentAt = undefined;
    }
    activity.touch();
  });
  on("Network.webSocketClosed", ({ requestId }) => {
    sockets.delete(requestId);
    activity.touch();
  });

  const navigated = () => {
    activity.lastNavigation = performance.now();
    activity.touch();
  };
  on("Page.frameRequestedNavigation", ({ frameId }) => {
    if (!loading.has(frameId)) loading.set(frameId, performance.now() + options.graceMs);
    navigated();
  });
  on("Page.frameStartedLoading", ({ frameId }) => {
    loading.set(frameId, Infinity);
    navigated();
  });
  on("Page.frameStoppedLoading", ({ frameId }) => {
    loading.delete(frameId);
    activity.touch();
  });
  /** Forgets the requests of `frameId` that `keep` rejects: their document is gone. */
  const forgetRequests = (frameId: string, keep: (request: InFlight) => boolean) => {
    for (const [requestId, request] of requests) {
      if (request.frameId === frameId && !keep(request)) requests.delete(requestId);
    }
  };
  on("Page.frameDetached", ({ frameId, reason }) => {
    // A frame swapped into another process keeps loading there.
    if (reason !== "swap") {
      loading.delete(frameId);
      forgetRequests(frameId, () => false);
    }
    activity.touch();
  });
  on("Page.navigatedWithinDocument", navigated);
  on("Page.frameNavigated", ({ frame }) => {
    // A committed document ends the old one's requests; one whose body no one
    // read (a 401 answered, then `location.href = …`) never reports an end.
    forgetRequests(frame.id, (request) => request.loaderId === frame.loaderId);
    activity.touch();
  });
  on("Page.domContentEventFired", () => activity.touch());
  on("Page.loadEventFired", () => activity.touch());

  const prefix = `${session.sessionId}:`;
  on("Runtime.bindingCalled", ({ name, payload, executionContextId }) => {
    if (name !== options.binding) return;
    const report = decodeActivityReport(payload);
    if (!report) return;
    const key = prefix + executionContextId;
    const before = scripts.get(key);
    scripts.set(key, report);
    if (before === undefined ? report.mutations > 0 : report.mutations !== before.mutations) {
      activity.lastMutation = performance.now();
    }
    activity.touch();
  });
  on("Runtime.executionContextDestroyed", ({ executionContextId }) => {
    if (scripts.delete(prefix + executionContextId)) activity.touch();
  });
  on("Runtime.executionContextsCleared", () => forgetScripts());
  function forgetScripts(): void {
    for (const key of [...scripts.keys()]) if (key.startsWith(prefix)) scripts.delete(key);
    activity.touch();
  }
  return () => {
    for (const off of offs) off();
    forgetScripts();
  };
}

/** The body size a response announces: 0 when it has none by status. */
function bodySize(status: number, headers: Record<string, unknown>): number | undefined {
  if (status === 204 || status === 304 || (status >= 100 && status < 200)) return 0;
  for (const [name, value] of Object.entries(headers)) {
    if (name.toLowerCase() !== "content-length") continue;
    const size = Number(value);
    return Number.isInteger(size) && size >= 0 ? size : undefined;
  }
  return undefined;
}

/**
 * What identifies a long-poll endpoint: the URL's origin, path and query with
 * its digit runs folded. The query is part of it because an application may
 * route every call through one path (WordPress's REST API under plain
 * permalinks is `/index.php?rest_route=/wp/v2/…`): one slow call must not
 * make every other route pass for a long-poll. Digits are folded so that a
 * poll's cursor or cache-buster (`?since=1042&_=1712…`) keeps one key.
 */
function endpointKey(url: string): string {
  try {
    const parsed = new URL(url);
    return parsed.origin + parsed.pathname + parsed.search.replace(/\d+/g, "#");
  } catch {
    return url;
  }
}
