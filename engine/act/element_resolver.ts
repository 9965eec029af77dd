/**
 * How the actions engine finds the element behind an id. The observer
 * (`engine/observe/`) implements it; tests implement it with CSS selectors.
 *
 * @module
 */
import type { CdpSession } from "../cdp/connection.ts";

/** An element as CDP handles: the session of its target and a remote object. */
export interface ElementRef {
  /** The session of the target (page or out-of-process iframe) holding the element. */
  session: CdpSession;
  /** A remote object of the element, in any world of its frame. */
  objectId: string;
}

/**
 * Where an element lives, found without a round trip: in `executionContextId`
 * of `session`, `globalThis.__webserv.element(local)` returns it, and the
 * actor's library (`_library.ts`) is installed beside it.
 */
export interface ElementLocation {
  /** The session of the target (page or out-of-process iframe) holding the element. */
  session: CdpSession;
  /** The world's execution context. */
  executionContextId: number;
  /** The element's id in that world (its frame's own id). */
  local: number;
}

/**
 * Turns element ids into CDP handles.
 *
 * @example A resolver over a fixed map (for tests)
 * ```ts
 * import type { ElementRef, ElementResolver } from "@webserv/webserv/engine";
 * const refs = new Map<number, ElementRef>();
 * const resolver: ElementResolver = {
 *   resolve: (id) => Promise.resolve(refs.get(id)),
 *   known: (id) => refs.has(id),
 * };
 * ```
 */
export interface ElementResolver {
  /**
   * Resolves an id.
   *
   * @param id the element id
   * @returns the handles, or `undefined` when the element is gone or the id was never given out
   */
  resolve(id: number): Promise<ElementRef | undefined>;
  /**
   * Whether the id was ever given out, so errors can tell an unknown id from
   * a stale one. Without it every unresolved id is reported as stale.
   *
   * @param id the element id
   * @returns whether an observation ever showed this id
   */
  known?(id: number): boolean;
  /**
   * Where an id's element lives, without asking the page, so an action's
   * first in-page call finds the element itself (one round trip saved).
   * Optional; `undefined` sends the actor to {@linkcode ElementResolver.resolve}.
   *
   * @param id the element id
   * @returns the location, or `undefined` when the id or its world is unknown
   */
  locate?(id: number): ElementLocation | undefined;
}
