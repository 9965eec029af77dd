/**
 * A stand-in {@linkcode Layout} for running the distiller under linkedom:
 * styles come from inline `style` attributes, every element is a box 100
 * wide starting 20 px below the one before it in document order and tall
 * enough for its descendants; nothing is covered.
 *
 * @module
 */
import type { Layout, Rect, StyleFacts } from "../../../engine/page/layout.ts";

/** Tags laid out inline by default, as in a browser's user-agent sheet. */
const INLINE_TAGS = new Set([
  "a",
  "b",
  "i",
  "em",
  "strong",
  "code",
  "kbd",
  "span",
  "small",
  "label",
]);

/** Reads one declaration from an inline style attribute. */
function inline(el: Element, property: string): string | undefined {
  const style = el.getAttribute("style");
  if (!style) return undefined;
  for (const part of style.split(";")) {
    const [key, value] = part.split(":");
    if (key?.trim() === property && value !== undefined) return value.trim();
  }
  return undefined;
}

/** Options of {@linkcode fakeLayout}. */
export interface FakeLayoutOptions {
  /** Elements that have script-registered click listeners. */
  clickListeners?: Set<Element>;
  /** Elements that have delegated handlers of their own (React props and the like). */
  delegated?: Set<Element>;
  /** Viewport height; boxes are 20 px tall, one per element in document order. */
  viewportHeight?: number;
}

/**
 * Makes a layout stand-in for `doc`.
 *
 * @param doc the linkedom document
 * @param options listeners and viewport
 * @returns the layout
 */
export function fakeLayout(doc: Document, options: FakeLayoutOptions = {}): Layout {
  const order = new Map<Element, number>();
  const number = () => {
    order.clear();
    let i = 0;
    for (const el of Array.from(doc.querySelectorAll("*"))) order.set(el, i++);
  };
  return {
    style(el: Element): StyleFacts {
      const parent = el.parentElement;
      const inherited = (property: string, fallback: string): string => {
        for (let e: Element | null = el; e; e = e.parentElement) {
          const value = inline(e, property);
          if (value !== undefined) return value;
        }
        return fallback;
      };
      void parent;
      return {
        display: el.hasAttribute("hidden")
          ? "none"
          : inline(el, "display") ?? (INLINE_TAGS.has(el.localName) ? "inline" : "block"),
        visibility: inherited("visibility", "visible"),
        opacity: inline(el, "opacity") ?? "1",
        cursor: inherited("cursor", "auto"),
        pointerEvents: inherited("pointer-events", "auto"),
        position: inline(el, "position") ?? "static",
        clip: inline(el, "clip") ?? "auto",
        fontSize: inherited("font-size", "16px"),
        clipPath: inline(el, "clip-path") ?? "none",
        overflow: inline(el, "overflow") ?? "visible",
        overflowX: inline(el, "overflow-x") ?? inline(el, "overflow") ?? "visible",
        overflowY: inline(el, "overflow-y") ?? inline(el, "overflow") ?? "visible",
      };
    },
    rect(el: Element): Rect {
      if (!order.has(el)) number();
      const width = inline(el, "width");
      const w = width === "0" || width === "0px" ? 0 : 100;
      const span = 1 + el.querySelectorAll("*").length;
      return { x: 0, y: (order.get(el) ?? 0) * 20, w, h: w ? 20 * span : 0 };
    },
    visible(el: Element): boolean {
      for (let e: Element | null = el; e; e = e.parentElement) {
        if (e.hasAttribute("hidden") || inline(e, "display") === "none") return false;
        if (inline(e, "opacity") === "0") return false;
      }
      for (let e: Element | null = el; e; e = e.parentElement) {
        const visibility = inline(e, "visibility");
        if (visibility !== undefined) return visibility === "visible";
      }
      return true;
    },
    hit: () => null,
    viewport: () => ({ x: 0, y: 0, w: 800, h: options.viewportHeight ?? 600, sw: 800, sh: 4000 }),
    listened: (el: Element) => options.clickListeners?.has(el) ? 1 : 0,
    delegated: (el: Element) => options.delegated?.has(el) ?? false,
    focused: () => doc.activeElement ?? null,
    now: () => performance.now(),
  };
}
