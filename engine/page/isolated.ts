/**
 * The isolated-world side: the browser's {@linkcode Layout} and the object
 * the driver calls, `globalThis.__webserv`, which page scripts cannot see
 * (an isolated world has its own globals and its own DOM wrappers).
 *
 * Page code: DOM APIs only.
 *
 * @module
 */
import { createDistiller, type Distiller } from "./distiller.ts";
import { type Layout, LISTEN_CLICK, LISTEN_HOVER, LISTEN_KEY } from "./layout.ts";
import { DOM_PROBE } from "./stand_in.ts";
import { watchFlashes } from "./_flashes.ts";
import { shadowOf, suspectCount } from "./shadow_roots.ts";
import type { DistillRequest, DistillResult, SiblingRequest } from "../observe/wire.ts";

/** What the driver finds at `globalThis.__webserv` in the isolated world. */
export interface IsolatedApi {
  /** The bundle version, to detect a stale install. */
  version: string;
  /**
   * Distills the document.
   *
   * @param req what to produce
   * @param owners iframe elements of known child frames, in the driver's order
   * @returns the distilled tree
   */
  observe(req: DistillRequest, ...owners: Element[]): DistillResult;
  /**
   * The element with an id, or `null` when it is gone.
   *
   * @param id an id this document handed out
   * @returns the element or `null`
   */
  element(id: number): Element | null;
  /** The frame id the driver last gave this document's distiller (`DistillRequest.frameId`). */
  frameId?: string;
}

/**
 * Installs the distiller in the current isolated world, once per document.
 *
 * @param secret the event-type prefix shared with the main-world hook
 * @param version the bundle version
 * @returns the installed api (the existing one if already installed)
 */
export function installIsolated(secret: string, version: string): IsolatedApi {
  const g = globalThis as unknown as { __webserv?: IsolatedApi };
  if (g.__webserv && g.__webserv.version === version) return g.__webserv;
  const win = globalThis as unknown as Window & typeof globalThis;
  // Read `document` on every use: a window can outlive its first document
  // (the initial about:blank of a popup is replaced in the same window).
  const currentDocument = (): Document => win.document;
  const listened = new WeakMap<Element, number>();
  const record = (bit: number) => (event: Event): void => {
    const target = event.composedPath()[0];
    if (target instanceof win.Element) listened.set(target, (listened.get(target) ?? 0) | bit);
  };
  win.addEventListener(`${secret}:c`, record(LISTEN_CLICK), true);
  win.addEventListener(`${secret}:h`, record(LISTEN_HOVER), true);
  win.addEventListener(`${secret}:k`, record(LISTEN_KEY), true);
  const getStyle = win.getComputedStyle.bind(win);
  const probeType = `${secret}:p`;
  const EventClass = win.CustomEvent;
  const perf = win.performance;
  const layout: Layout = {
    style(el) {
      // The live declaration: the distiller reads only the properties it needs.
      return getStyle(el);
    },
    // The same box and paint tests the actions use (one rule, `stand_in.ts`).
    rect: DOM_PROBE.rect,
    visible: DOM_PROBE.visible,
    hit(root, x, y) {
      return root.elementFromPoint(x, y);
    },
    viewport() {
      const doc = currentDocument();
      const scroller = doc.scrollingElement ?? doc.documentElement;
      // In quirks mode (no doctype) the root's client box is the whole
      // document, not the viewport: only the window's size tells it then.
      const html = doc.compatMode === "BackCompat" ? undefined : doc.documentElement;
      return {
        x: win.scrollX,
        y: win.scrollY,
        w: html?.clientWidth || win.innerWidth,
        h: html?.clientHeight || win.innerHeight,
        sw: scroller?.scrollWidth ?? 0,
        sh: scroller?.scrollHeight ?? 0,
      };
    },
    listened(el) {
      return listened.get(el) ?? 0;
    },
    delegated(el) {
      // The hook cancels the probe when the element has a handler of its own.
      return !el.dispatchEvent(new EventClass(probeType, { cancelable: true, composed: true }));
    },
    focused() {
      const doc = currentDocument();
      // The body is active in a document nothing in has focus (an editor's
      // frame not clicked into): not focused.
      if (doc.activeElement === doc.body && !doc.hasFocus()) return null;
      let el = doc.activeElement;
      for (let root = el && shadowOf(el); root?.activeElement; root = shadowOf(el!)) {
        el = root.activeElement;
      }
      return el;
    },
    now() {
      return perf.now();
    },
  };
  let distiller: Distiller | undefined;
  let distilled: Document | undefined;
  const flashes = watchFlashes(win);
  // The last call's flashes, which a repeat of it (`req.again`) answers too.
  let flashedBefore: string[] = [];
  const api: IsolatedApi = {
    version,
    observe(req, ...owners) {
      if (req.frameId) api.frameId = req.frameId;
      // Ask the main-world hook for elements given listeners since last time.
      win.dispatchEvent(new win.CustomEvent(`${secret}:flush`));
      const doc = currentDocument();
      if (!distiller || distilled !== doc) {
        distiller = createDistiller(doc, layout);
        distilled = doc;
      }
      const result = distiller.observe(req, owners);
      const suspects = suspectCount();
      if (suspects) result.suspects = suspects;
      const drained = flashes.drain(doc);
      const flashed = req.again ? [...flashedBefore, ...drained] : drained;
      flashedBefore = flashed;
      if (flashed.length) result.flashed = flashed;
      if (req.folds) result.folded = req.folds.map((fold) => foldIn(owners[fold.slot], fold.req));
      if (req.siblings) result.siblings = siblingsOf(req.siblings);
      return result;
    },
    element(id) {
      return distiller?.element(id) ?? null;
    },
  };
  /**
   * Distils a same-process child frame from here: its isolated world's api
   * through the iframe element. `null` when it cannot (another origin, a
   * distiller not installed yet or of another version, a frame gone).
   */
  function foldIn(owner: Element | undefined, req: DistillRequest): DistillResult | null {
    try {
      const child = (owner as HTMLIFrameElement | undefined)?.contentWindow as
        | { __webserv?: IsolatedApi }
        | null
        | undefined;
      const childApi = child?.__webserv;
      if (!childApi || childApi.version !== version) return null;
      return childApi.observe(req);
    } catch {
      return null;
    }
  }
  /**
   * Distils same-origin sibling frames from here: each is found among the
   * parent's frames by the frame id its distiller was last told. `null` for
   * one not found (another origin or process, a new document not told its id
   * yet, a frame gone).
   */
  function siblingsOf(asked: SiblingRequest[]): (DistillResult | null)[] {
    const found = new Map<string, IsolatedApi>();
    try {
      const frames = win.parent === win ? undefined : win.parent.frames;
      for (let i = 0; frames && i < frames.length; i++) {
        try {
          const other = (frames[i] as unknown as { __webserv?: IsolatedApi }).__webserv;
          if (other && other !== api && other.version === version && other.frameId) {
            found.set(other.frameId, other);
          }
        } catch {
          // Another origin: not reachable from here.
        }
      }
    } catch {
      // The parent is gone.
    }
    return asked.map(({ frameId, req }) => {
      try {
        return found.get(frameId)?.observe(req) ?? null;
      } catch {
        return null;
      }
    });
  }
  g.__webserv = api;
  return api;
}
