/**
 * What settling knows about one page, gathered from all of its sessions (the
 * page's own and those of its out-of-process iframes).
 *
 * Why one record per page and not per session: a cross-process frame's
 * navigation starts on the parent's session and finishes on the child's
 * (same request id, same frame id), so per-session bookkeeping would leave it
 * in flight forever.
 *
 * Invariants:
 * - a request counts from `Network.requestWillBeSent` until
 *   `loadingFinished`, `loadingFailed`, or its whole body arrived (a `fetch()`
 *   whose body is never read never finishes in CDP); a redirect keeps it in
 *   flight; kinds that never end by design (EventSource, beacons,
 *   prefetches) never count;
 * - a GET (or HEAD) in flight longer than the long-poll grace period stops
 *   counting, and its endpoint (origin, path and query shape) is remembered
 *   so later GETs to it never count; a write (POST, PUT, PATCH, DELETE) is
 *   never taken for a long-poll: the page awaits its answer (a save that
 *   takes seconds under load), so it counts until it ends or the cap;
 * - a WebSocket message the page sent counts until the socket answers, for
 *   at most the reply grace period; a frame shaped like one the socket pushed
 *   while nothing was asked (a tick, a heartbeat: the same payload, digits
 *   aside) is no answer;
 * - a frame counts from `frameRequestedNavigation` or `frameStartedLoading`
 *   until `frameStoppedLoading` or its detach; a requested navigation that
 *   never starts loading stops counting after the grace period;
 * - one hook report per execution context, dropped with the context.
 *
 * @module
 */
import { type Busy, shortUrl } from "./_tracker.ts";
import type { ActivityReport } from "./_activity_hook.ts";

/** An open WebSocket. */
export interface OpenSocket {
  /** The socket's URL. */
  url: string;
  /** When the page sent a message still unanswered. */
  sentAt: number | undefined;
  /** Shapes of the frames it pushed while no message awaited an answer. */
  pushed: Set<string>;
}

/**
 * The shape of a WebSocket frame's payload: digit runs folded, cut at 200
 * characters, so a counter's ticks ("tick 5", "tick 6") share one.
 *
 * @param payload the frame's payload
 * @returns its shape
 */
export function frameShape(payload: string): string {
  return payload.slice(0, 200).replace(/\d+/g, "#");
}

/** The methods a long-poll uses: only these are ever taken for one. */
const READS = new Set(["GET", "HEAD"]);

/** An HTTP request in flight. */
export interface InFlight {
  /** The URL requested (after redirects). */
  url: string;
  /** The HTTP method. */
  method: string;
  /** When it started, as `performance.now()`. */
  start: number;
  /** The endpoint: origin, path and query with digit runs folded. */
  key: string;
  /** The expected body size from `content-length`, once the response arrived. */
  expected?: number;
  /** Body bytes received so far. */
  received: number;
  /** The frame that sent it, when a frame did. */
  frameId?: string;
  /** The document (loader) that sent it. */
  loaderId: string;
}

/** Thresholds a {@linkcode PageActivity} applies. */
export interface PageActivityOptions {
  /** Requests in flight longer than this stop counting. */
  longPollMs: number;
  /** A WebSocket message counts as pending this long at most. */
  webSocketReplyMs: number;
  /** Long-poll endpoints seen so far, shared by all pages of a settler. */
  longPolls: Set<string>;
}

/** The activity of one page. */
export class PageActivity {
  /** Last time anything happened, as `performance.now()`. */
  lastActivity: number = performance.now();
  /** Last time the DOM changed, as `performance.now()`. */
  lastMutation = -Infinity;
  /** Last time a navigation (any kind) began, as `performance.now()`. */
  lastNavigation = -Infinity;
  /** Requests in flight, by request id. */
  readonly requests: Map<string, InFlight> = new Map();
  /** Open WebSockets, by request id, with when a message awaits an answer. */
  readonly sockets: Map<string, OpenSocket> = new Map();
  /** Loading frames, by frame id, with when they stop counting. */
  readonly loading: Map<string, number> = new Map();
  /** Hook reports, by `sessionId:executionContextId`. */
  readonly scripts: Map<string, ActivityReport> = new Map();
  readonly #options: PageActivityOptions;
  readonly #notify: () => void;

  /**
   * @param options thresholds
   * @param notify called on every change
   */
  constructor(options: PageActivityOptions, notify: () => void) {
    this.#options = options;
    this.#notify = notify;
  }

  /** Records that something happened now and wakes waiters. */
  touch(): void {
    this.lastActivity = performance.now();
    this.#notify();
  }

  /**
   * Appends what is pending now to `out`.
   *
   * @param now `performance.now()`
   * @param out where to append
   */
  busy(now: number, out: Busy[]): void {
    const { longPollMs, webSocketReplyMs, longPolls } = this.#options;
    for (const [frameId, until] of this.loading) {
      if (now >= until) {
        this.loading.delete(frameId);
        continue;
      }
      out.push({
        signal: "navigation",
        detail: `frame "${frameId}" loading`,
        ...(until === Infinity ? {} : { until }),
      });
    }
    for (const request of this.requests.values()) {
      const detail = `${request.method} ${shortUrl(request.url)}`;
      if (!READS.has(request.method)) {
        out.push({ signal: "network", detail });
        continue;
      }
      if (longPolls.has(request.key)) continue;
      const until = request.start + longPollMs;
      if (now >= until) {
        longPolls.add(request.key);
        continue;
      }
      out.push({ signal: "network", detail, until });
    }
    for (const socket of this.sockets.values()) {
      if (socket.sentAt === undefined) continue;
      const until = socket.sentAt + webSocketReplyMs;
      if (now < until) {
        out.push({ signal: "websocket", detail: `reply on ${shortUrl(socket.url)}`, until });
      }
    }
    let timers = 0;
    let frames = 0;
    for (const report of this.scripts.values()) {
      timers += report.timers;
      frames += report.frames;
    }
    if (timers > 0) out.push({ signal: "timers", detail: `${timers} short timers` });
    if (frames > 0) out.push({ signal: "animation-frames", detail: `${frames} animation frames` });
  }
}
