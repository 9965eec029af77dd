/**
 * Session events, for the dashboard: listeners hear every creation, step,
 * reset and close; a listener that throws is logged and the others still
 * hear the event.
 *
 * @module
 */
import { logFailure } from "../../engine/log.ts";
import type { SessionState } from "./protocol.ts";

/** What happened to a session, for the dashboard. */
export interface SessionEvent {
  /** What happened. */
  type: "created" | "step" | "reset" | "closed";
  /** The session's id. */
  session: string;
  /** The session's state afterwards (absent once closed). */
  state?: SessionState;
  /** The last observation text. */
  text?: string;
  /** For `step`: the action and its outcome. */
  step?: { action: unknown; status: string; reward?: number };
}

/** The listeners of session events. */
export class SessionEvents {
  #listeners = new Set<(event: SessionEvent) => void>();

  /**
   * Listens to session events.
   *
   * @param listener called for every event
   * @returns a function that stops listening
   */
  subscribe(listener: (event: SessionEvent) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /**
   * Tells every listener.
   *
   * @param event what happened
   */
  emit(event: SessionEvent): void {
    for (const listener of this.#listeners) {
      try {
        listener(event);
      } catch (error) {
        logFailure("notify a session listener", error);
      }
    }
  }
}
