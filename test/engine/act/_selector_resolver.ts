// Test helper: resolves element ids to elements found by CSS selectors, in an
// isolated world, so the actions engine is tested without the observer.
// Selectors: "#a" (main frame), "#frame >> #b" (same-process iframe),
// "cross >> #c" (the first out-of-process iframe), "#host >>> #d" (open shadow root).
import type { Page } from "../../../engine/browser/page.ts";
import type { ElementRef, ElementResolver } from "../../../engine/act/element_resolver.ts";

export class SelectorResolver implements ElementResolver {
  #page: Page;
  #targets: Map<number, string>;

  constructor(page: Page, targets: Record<number, string>) {
    this.#page = page;
    this.#targets = new Map(
      Object.entries(targets).map(([id, selector]) => [Number(id), selector]),
    );
  }

  known(id: number): boolean {
    return this.#targets.has(id);
  }

  async resolve(id: number): Promise<ElementRef | undefined> {
    let selector = this.#targets.get(id);
    if (selector === undefined) return undefined;
    let session = this.#page.session;
    if (selector.startsWith("cross >> ")) {
      const frame = this.#page.frameSessions[0];
      if (!frame) return undefined;
      session = frame;
      selector = selector.slice("cross >> ".length);
    }
    let expression: string;
    if (selector.includes(" >>> ")) {
      const [host, inner] = selector.split(" >>> ");
      expression = `document.querySelector(${JSON.stringify(host)})?.shadowRoot?.querySelector(${
        JSON.stringify(inner)
      })`;
    } else if (selector.includes(" >> ")) {
      const [frame, inner] = selector.split(" >> ");
      expression = `document.querySelector(${
        JSON.stringify(frame)
      })?.contentDocument?.querySelector(${JSON.stringify(inner)})`;
    } else {
      expression = `document.querySelector(${JSON.stringify(selector)})`;
    }
    const frameId = session.targetInfo!.targetId;
    const { executionContextId } = await session.send("Page.createIsolatedWorld", {
      frameId,
      worldName: "test-resolver",
    });
    const { result } = await session.send("Runtime.evaluate", {
      expression,
      contextId: executionContextId,
    });
    if (result.subtype !== "node" || !result.objectId) return undefined;
    return { session, objectId: result.objectId };
  }
}
