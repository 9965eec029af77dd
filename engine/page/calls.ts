/**
 * The observer's calls into the distiller it installed in its isolated
 * world (`isolated.ts`): bundled by `deno task build` into `OBSERVE_CALL`
 * `ELEMENT_CALL`, `SUSPECTS_CALL` and `ADOPT_CALL`, function declarations
 * for `Runtime.callFunctionOn`.
 *
 * @module
 */
import type { DistillRequest } from "../observe/wire.ts";
import { adoptRoot, takeSuspects } from "./shadow_roots.ts";

/** The distiller as `installIsolated` leaves it on the world's global. */
interface Distiller {
  observe(req: DistillRequest, ...owners: (Element | null)[]): unknown;
  element(id: number): Element | null;
}

function distiller(): Distiller {
  return (globalThis as unknown as { __webserv: Distiller }).__webserv;
}

/**
 * Observes the frame (and the frames it folds in), as JSON text: one string
 * crosses faster than a deep object.
 *
 * @param req what to observe
 * @param owners the iframe owners the request's folds refer to by slot
 * @returns the distiller's answer, serialized
 */
export function observeCall(req: DistillRequest, ...owners: (Element | null)[]): string {
  return JSON.stringify(distiller().observe(req, ...owners));
}

/**
 * The element the distiller gave an id.
 *
 * @param id the frame's own id of the element
 * @returns the element, or `null` when it left the document
 */
export function elementCall(id: number): Element | null {
  return distiller().element(id);
}

/**
 * The custom elements the last walks met without a visible shadow root,
 * handed over once each: the driver looks for closed roots in them.
 *
 * @returns the hosts
 */
export function suspectsCall(): Element[] {
  return takeSuspects();
}

/**
 * Keeps a closed shadow root the driver found, beside its host (`this`).
 *
 * @param root the closed root
 */
export function adoptCall(this: Element, root: ShadowRoot): void {
  adoptRoot(this, root);
}
