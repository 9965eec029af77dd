/**
 * What the per-session trackers share: the signals they report and the
 * shape of a pending item.
 *
 * @module
 */

/**
 * A kind of activity settling waits for.
 *
 * - `network`: requests in flight (WebSockets, EventSource, beacons and
 *   long-polls past their grace period excluded);
 * - `navigation`: a frame loading a new document;
 * - `timers`: short `setTimeout` timers pending in the page;
 * - `animation-frames`: `requestAnimationFrame` callbacks pending;
 * - `websocket`: a WebSocket message sent and not yet answered;
 * - `dom`: the DOM-mutation quiet window;
 * - `animations`: CSS transitions, CSS animations and Web Animations running
 *   when the page was otherwise quiet (what an action opened, fading in).
 */
export type SettleSignal =
  | "network"
  | "navigation"
  | "timers"
  | "animation-frames"
  | "websocket"
  | "dom"
  | "animations";

/** One thing still pending. */
export interface Busy {
  /** Which signal reports it. */
  signal: SettleSignal;
  /** What it is, for people: a request's method and URL, a frame, a count. */
  detail: string;
  /** When it stops counting even if still pending (`performance.now()` time). */
  until?: number;
}

/** Calls `notify` whenever activity happens; the settler wakes on it. */
export type Notify = () => void;

/** Shortens a URL for messages. */
export function shortUrl(url: string): string {
  return url.length > 120 ? `${url.slice(0, 117)}...` : url;
}
