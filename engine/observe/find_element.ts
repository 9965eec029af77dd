/**
 * Finding elements in an observation by role and name, as an agent reads
 * them: what scripted solvers and trainers use instead of hard-coded ids.
 *
 * @module
 */
import type { Observation, ObservedElement } from "./observation.ts";

/** What to look for. */
export interface ElementQuery {
  /** The role, such as `"button"` or `"link"`; any role when absent. */
  role?: string;
  /**
   * The accessible name: a string is matched after collapsing whitespace,
   * ignoring case, as a substring unless `exact`; a `RegExp` is tested as is.
   * Any name when absent.
   */
  name?: string | RegExp;
  /**
   * Match a string `name` whole and with its case.
   *
   * @default {false}
   */
  exact?: boolean;
}

/**
 * Every element of an observation that matches a query, in document order.
 *
 * @param observation an observation (from `Env.observe()`, `Env.step()` or `Observer.observe()`)
 * @param query the role and name to match
 * @returns the matching elements; empty when none
 *
 * @example Find every "Add to cart" button
 * ```ts
 * import { findElements } from "./find_element.ts";
 * const observation = {
 *   elements: [
 *     { id: 1, role: "button", name: "Add to cart" },
 *     { id: 2, role: "link", name: "Cart" },
 *   ],
 * } as unknown as import("./observation.ts").Observation;
 * console.assert(findElements(observation, { role: "button", name: "add to" }).length === 1);
 * ```
 */
export function findElements(
  observation: Pick<Observation, "elements">,
  query: ElementQuery,
): ObservedElement[] {
  const wanted = typeof query.name === "string" ? normalize(query.name) : undefined;
  return observation.elements.filter((element) => {
    if (query.role !== undefined && element.role !== query.role) return false;
    if (query.name === undefined) return true;
    if (query.name instanceof RegExp) return query.name.test(element.name);
    const name = normalize(element.name);
    if (query.exact) return name === wanted;
    return name.toLowerCase().includes(wanted!.toLowerCase());
  });
}

/**
 * The first element of an observation that matches a query.
 *
 * @param observation an observation
 * @param query the role and name to match
 * @returns the first match in document order, or `undefined` when none matches
 *
 * @example Click the search button
 * ```ts ignore
 * import { type Env, findElement } from "@webserv/webserv/engine";
 * declare const env: Env;
 * const observation = await env.observe();
 * const search = findElement(observation, { role: "button", name: "Search", exact: true });
 * if (search) await env.step({ action: "click", id: search.id });
 * ```
 */
export function findElement(
  observation: Pick<Observation, "elements">,
  query: ElementQuery,
): ObservedElement | undefined {
  return findElements(observation, query)[0];
}

function normalize(text: string): string {
  return text.replace(/\s+/g, " ").trim();
}
