/**
 * How the actor reaches an element: by id in the observer's world when the
 * resolver knows where it lives, else by a CDP handle; and how it runs the
 * in-page functions (`ActFunctions` in `_in_page.ts`, built from
 * `engine/page/act/`) on it: by name through the short stub where the
 * observer installed the library, else with the whole bundle.
 *
 * @module
 */
import type { CommandResult } from "../cdp/protocol.ts";
import type { ElementLocation, ElementRef, ElementResolver } from "./element_resolver.ts";
import { ActionError } from "./errors.ts";
import {
  type ActArgs,
  type ActName,
  type ActResult,
  ELEMENT_GONE,
  type ElementFacts,
  LIBRARY_MISSING,
} from "./_in_page.ts";
import { ACT_FULL, ACT_STUB } from "../observe/_page_bundle.ts";

/**
 * The error of an id whose element left the page.
 *
 * @param id the id the agent gave
 * @param cause what showed the element gone, if anything did
 * @returns a `stale-id` error
 */
export function stale(id: number, cause?: unknown): ActionError {
  return new ActionError("stale-id", `Element ${id} is gone from the page`, {
    id,
    ...(cause !== undefined ? { cause } : {}),
  });
}

/**
 * An element by its id in the observer's world, with no handle fetched: the
 * first in-page call finds it there (see `ElementResolver.locate`).
 */
export interface IdRef extends ElementLocation {
  /** The id the agent gave, for errors. */
  id: number;
}

/** An element as an action holds it: a CDP handle, or an id in its world. */
export type Ref = ElementRef | IdRef;

/** How {@linkcode ElementCalls.invoke} runs a function. */
export interface WorldOptions {
  /** Run in the element's world without finding the element there (`this` is then unset for an id). */
  world?: boolean;
}

/** What {@linkcode ElementCalls.ready} may let through. */
export interface ReadyOptions {
  /** Accept a disabled element (hover, scroll). */
  allowDisabled?: boolean;
}

/**
 * The facts of an element an action needs, or the action's error.
 *
 * @param facts what `FACTS` (or `FACTS_POINT`) read of the element
 * @param id the id the agent gave, for errors
 * @param options whether a disabled element will do
 * @returns the facts, when the element is there, visible and (unless allowed) enabled
 * @throws {ActionError} `stale-id`, `not-visible` or `disabled`
 */
export function readyFacts(
  facts: ElementFacts,
  id: number,
  options: ReadyOptions = {},
): ElementFacts {
  if (facts.state === "stale") {
    throw stale(id);
  }
  if (facts.state === "hidden") {
    throw new ActionError("not-visible", `Element ${id} (${facts.name}) is not visible`, { id });
  }
  if (facts.state === "disabled" && !options.allowDisabled) {
    throw new ActionError("disabled", `Element ${id} (${facts.name}) is disabled`, { id });
  }
  return facts;
}

/** Finds elements by id and runs in-page functions on them, each command within one timeout. */
export class ElementCalls {
  #resolver: ElementResolver;
  #timeoutMs: number;

  /**
   * Creates the element calls of one actor.
   *
   * @param resolver turns ids into locations or handles
   * @param timeoutMs the timeout of every browser command
   */
  constructor(resolver: ElementResolver, timeoutMs: number) {
    this.#resolver = resolver;
    this.#timeoutMs = timeoutMs;
  }

  /**
   * The element behind an id.
   *
   * @param id the id the agent gave
   * @returns its location in the observer's world, or a handle
   * @throws {ActionError} `unknown-id` or `stale-id`
   */
  async element(id: number): Promise<Ref> {
    const where = this.#resolver.locate?.(id);
    if (where) return { ...where, id };
    const ref = await this.#resolver.resolve(id);
    if (ref) return ref;
    if (this.#resolver.known && !this.#resolver.known(id)) {
      throw new ActionError("unknown-id", `No element has id ${id}`, { id });
    }
    throw stale(id);
  }

  /**
   * Runs an in-page function on an element: by name from the library in the
   * element's world when it is there, else from the whole bundle. An element
   * held by id is found by the world itself.
   *
   * @param ref the element
   * @param name the function
   * @param args its arguments after the element
   * @param returnByValue whether to return a JSON value rather than a remote object
   * @param options whether to call in the element's world without finding the element
   * @returns the browser's answer
   * @throws {ActionError} `stale-id` when the element is gone from its world
   */
  async invoke<K extends ActName>(
    ref: Ref,
    name: K,
    args: ActArgs<K>,
    returnByValue: boolean,
    options: WorldOptions = {},
  ): Promise<CommandResult<"Runtime.callFunctionOn">> {
    const held = "local" in ref ? ref : undefined;
    // The element's id in its world, or null: `this` is the handle's element, or unset.
    const local = held && !options.world ? held.local : null;
    const send = (functionDeclaration: string) =>
      ref.session.send("Runtime.callFunctionOn", {
        ...("local" in ref
          ? { executionContextId: ref.executionContextId }
          : { objectId: ref.objectId }),
        functionDeclaration,
        arguments: [name, local, ...args].map((value) => ({ value })),
        returnByValue,
      }, { timeoutMs: this.#timeoutMs });
    // A world gone with its document fails the call: the actor's
    // `#translate` makes that stale-id.
    let answer = await send(ACT_STUB);
    if (answer.result.value === LIBRARY_MISSING) answer = await send(ACT_FULL);
    if (held && local !== null && answer.result.value === ELEMENT_GONE) throw stale(held.id);
    return answer;
  }

  /**
   * Calls an in-page function on an element and returns its JSON value.
   *
   * @param ref the element
   * @param name the function
   * @param args its arguments after the element
   * @returns what the function returned
   * @throws {Error} when the function threw in the page
   */
  async call<K extends ActName>(ref: Ref, name: K, ...args: ActArgs<K>): Promise<ActResult<K>> {
    return await this.#value(ref, name, args, {});
  }

  /**
   * Calls an in-page function that needs no element in the element's world
   * (`this` is the element only when held by a handle): it answers even
   * when the element left the page.
   *
   * @param ref the element whose world to call in
   * @param name the function
   * @param args its arguments
   * @returns what the function returned
   * @throws {Error} when the function threw in the page
   */
  async callInWorld<K extends ActName>(
    ref: Ref,
    name: K,
    ...args: ActArgs<K>
  ): Promise<ActResult<K>> {
    return await this.#value(ref, name, args, { world: true });
  }

  async #value<K extends ActName>(
    ref: Ref,
    name: K,
    args: ActArgs<K>,
    options: WorldOptions,
  ): Promise<ActResult<K>> {
    const { result, exceptionDetails } = await this.invoke(ref, name, args, true, options);
    if (exceptionDetails) {
      throw new Error(
        `In-page call failed: ${exceptionDetails.exception?.description ?? exceptionDetails.text}`,
      );
    }
    // Our own in-page functions produce these values (typed by `ActFunctions`); this is the one cast.
    return result.value as ActResult<K>;
  }

  /**
   * Calls an in-page function that returns an element, as a new handle.
   *
   * @param ref the element
   * @param name the function
   * @param args its arguments after the element
   * @returns a handle the caller releases, or `undefined` when no element came back
   */
  async callForElement<K extends ActName>(
    ref: Ref,
    name: K,
    ...args: ActArgs<K>
  ): Promise<ElementRef | undefined> {
    const { result } = await this.invoke(ref, name, args, false);
    if (result.subtype !== "node" || !result.objectId) return undefined;
    return { session: ref.session, objectId: result.objectId };
  }

  /**
   * Checks the element can be acted on.
   *
   * @param ref the element
   * @param id the id the agent gave, for errors
   * @param options whether a disabled element will do
   * @returns its facts
   * @throws {ActionError} as {@linkcode readyFacts} does
   */
  async ready(ref: Ref, id: number, options: ReadyOptions = {}): Promise<ElementFacts> {
    return readyFacts(await this.call(ref, "FACTS"), id, options);
  }
}
