/**
 * A small typed event emitter. A throwing listener is logged, never allowed
 * to break the emitter or the other listeners.
 *
 * @module
 */
import { logFailure } from "./log.ts";

/** A typed emitter over an event map `{name: payload}`. */
export class Emitter<Events extends Record<string, unknown>> {
  #listeners = new Map<keyof Events, Set<(payload: never) => void>>();

  /** Adds a listener. */
  on<K extends keyof Events>(event: K, listener: (payload: Events[K]) => void): void {
    let set = this.#listeners.get(event);
    if (!set) this.#listeners.set(event, set = new Set());
    set.add(listener);
  }

  /** Removes a listener. */
  off<K extends keyof Events>(event: K, listener: (payload: Events[K]) => void): void {
    this.#listeners.get(event)?.delete(listener);
  }

  /** Calls every listener of `event` with `payload`. */
  emit<K extends keyof Events>(event: K, payload: Events[K]): void {
    const set = this.#listeners.get(event);
    if (!set) return;
    for (const listener of [...set] as ((payload: Events[K]) => void)[]) {
      try {
        listener(payload);
      } catch (error) {
        logFailure(`listener of "${String(event)}"`, error);
      }
    }
  }

  /** Removes every listener. */
  clear(): void {
    this.#listeners.clear();
  }
}
