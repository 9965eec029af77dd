/**
 * The distiller: turns one frame's DOM into a small tree of what an agent
 * needs, with stable ids on what it can act on.
 *
 * A chain of small passes over one tree:
 *
 * 1. `collect` (`_collect.ts`; runs of siblings in `_runs.ts`) walks the
 *    rendered DOM once (open shadow roots and slots included, `display:none`
 *    subtrees pruned), reading one computed style per element, and records
 *    interactivity signals that cost no layout. Inside an element with a
 *    click listener, elements are probed for delegated handlers of their
 *    own; a listened list without candidates inside makes its items the
 *    candidates.
 * 2. `vet` (`_vet.ts`) measures boxes only for candidates and applies the
 *    vetoes (aria-hidden, inert, hidden, disabled, pointer-events, zero
 *    size, off-document, outside an open modal, cut away by a clipping box,
 *    fully covered); a hidden native checkbox takes its visible stand-in's
 *    box. A weak-only candidate (listener, hover, tabindex) with candidates
 *    inside that keep ids is a container: it loses its own id, they keep
 *    theirs; so are boxes of prose, bare widget parts, an input's wrapper
 *    with its drawn placeholder and a field label beside its control
 *    (`_containers.ts`).
 * 3. `assign` (here) hands out ids: an element keeps its id for its whole
 *    life and an id is never handed out twice (the driver owns the counter).
 * 4. `describe` (`_describe.ts`) computes roles, names, values, states and
 *    cues.
 * 5. `emit` (`_emit.ts`) writes the plain JSON tree: generic wrappers
 *    collapse, text read into a name is not repeated, inline runs join as
 *    they read, visually hidden text shows only in names, runs of similar
 *    siblings are summarised (prose and article tables never are).
 *
 * Invariants: the distiller writes nothing to the page (no attributes, no
 * nodes, no properties on page objects); everything it remembers lives in
 * the closure made by {@linkcode createDistiller}. Per-element scratch data
 * lives in the tree of one pass (`_tree.ts`) and is dropped when the pass
 * ends.
 *
 * @module
 */

import { type Layout, LISTEN_CLICK } from "./layout.ts";
import { fold } from "./roles.ts";
import type { DistillRequest, DistillResult, WireFacts, WireNode } from "../observe/wire.ts";
import { formatNodes } from "../observe/format_observation.ts";
import { type DNode, MAX_PROBES, type Pass } from "./_tree.ts";
import { collect, originOf } from "./_collect.ts";
import { MAX_SUMMARY_TEXT } from "./_runs.ts";
import { vet } from "./_vet.ts";
import { describe } from "./_describe.ts";
import { emit, facts, tidy } from "./_emit.ts";

/** A distiller for one document, keeping ids for the document's life. */
export interface Distiller {
  /**
   * Distills the document.
   *
   * @param req what to produce and the next free id
   * @param owners the iframe elements the driver knows child frames of; frame nodes point into this list
   * @returns the distilled tree
   */
  observe(req: DistillRequest, owners?: readonly Element[]): DistillResult;
  /**
   * The element that has `id`, if it is still in the document.
   *
   * @param id an id from an earlier observation of this document
   * @returns the element, or `null` when it is gone or was never in this document
   */
  element(id: number): Element | null;
}

/**
 * Makes a distiller for `doc`.
 *
 * @param doc the document to distill
 * @param layout the layout-dependent facts (the browser's, or a stand-in in tests)
 * @returns the distiller, holding the id map for the document's life
 *
 * @example Distill a document under linkedom
 * ```text
 * const distiller = createDistiller(document, fakeLayout);
 * const result = distiller.observe({ nextId: 1, mode: "page", margin: 0, summariseAfter: 20, keepItems: 5, maxText: 80 });
 * ```
 */
export function createDistiller(doc: Document, layout: Layout): Distiller {
  const ids = new WeakMap<Element, number>();
  const byId = new Map<number, WeakRef<Element>>();
  let observed = false;
  // What the last call that was not a repeat (`req.again`) started from: a
  // repeat prints `*new` as it would have, and marks the ids it minted.
  let showNew = false;
  let minted = new Set<number>();

  function observe(req: DistillRequest, owners: readonly Element[] = []): DistillResult {
    const start = layout.now();
    const vp = layout.viewport();
    const pass: Pass = {
      req,
      layout,
      candidates: [],
      labels: new Map(),
      proxies: [],
      vp,
      above: { k: "m", n: 0, a: 0, why: "above" },
      below: { k: "m", n: 0, a: 0, why: "below" },
      kept: new Set(),
      standIns: new Set(),
      probes: MAX_PROBES,
      origin: originOf(doc),
      summaryText: MAX_SUMMARY_TEXT,
      here: (doc.URL ?? "").replace(/#.*$/, ""),
      occluders: [],
    };
    // Chromium's own error page (a frame the context's origin rule blocked, or
    // one that failed to load) is not the site's content: say so, no more.
    const failed = (doc.URL ?? "").startsWith("chrome-error:");
    const root = failed ? null : doc.body ?? doc.documentElement;
    const top: DNode | null = root
      ? collect(pass, root, {
        flags: 0,
        pointer: false,
        grab: false,
        inStrong: false,
        weak: undefined,
        // The walk starts at the body: a listener on the root element counts from here.
        delegation: doc.documentElement !== null &&
          (layout.listened(doc.documentElement) & LISTEN_CLICK) !== 0,
        clipper: undefined,
        inside: req.mode === "page",
      })
      : null;
    const passes: Record<string, number> = {};
    let mark = start;
    const lap = (name: string) => {
      const now = layout.now();
      passes[name] = Math.round((now - mark) * 10) / 10;
      mark = now;
    };
    lap("collect");
    let nextId = req.nextId;
    if (!req.again) {
      showNew = observed;
      minted = new Set();
    }
    if (top) {
      vet(pass, doc);
      lap("vet");
      nextId = assign(pass, ids, byId, nextId, minted);
      describe(pass);
      lap("describe");
    }
    const nodes: WireNode[] = [];
    if (failed) nodes.push({ k: "t", t: BLOCKED_TEXT });
    if (pass.above.n) nodes.push(pass.above);
    if (top) nodes.push(...tidy(emit(pass, top, owners)));
    if (pass.below.n) nodes.push(pass.below);
    lap("emit");
    // `*new` marks only once this document has been observed before.
    const lines = formatNodes(nodes, { showNew });
    observed = true;
    const elements: WireFacts[] = [];
    const frames: DistillResult["frames"] = [];
    facts(nodes, elements, frames);
    lap("format");
    const result: DistillResult = {
      title: fold(doc.title ?? ""),
      url: doc.URL ?? "",
      scroll: {
        x: Math.round(vp.x),
        y: Math.round(vp.y),
        width: Math.round(vp.sw),
        height: Math.round(vp.sh),
        vw: Math.round(vp.w),
        vh: Math.round(vp.h),
      },
      lines,
      elements,
      frames,
      nextId,
      ms: Math.round((layout.now() - start) * 10) / 10,
      passes,
    };
    if (req.tree) result.nodes = nodes;
    return result;
  }

  function element(id: number): Element | null {
    const el = byId.get(id)?.deref();
    if (!el) return null;
    if (!el.isConnected) return null;
    return el;
  }

  return { observe, element };
}

/** What a frame shows instead of Chromium's error page. */
const BLOCKED_TEXT = "(blocked frame: its page did not load or is outside the allowed origins)";

function assign(
  pass: Pass,
  ids: WeakMap<Element, number>,
  byId: Map<number, WeakRef<Element>>,
  nextId: number,
  minted: Set<number>,
): number {
  for (const node of pass.candidates) {
    if (node.keep !== 2) continue;
    let id = ids.get(node.el);
    if (id === undefined) {
      id = nextId++;
      ids.set(node.el, id);
      byId.set(id, new WeakRef(node.el));
      minted.add(id);
    }
    // New in this observation, a repeat's first call included.
    if (minted.has(id)) node.isNew = true;
    node.id = id;
  }
  // Forget ids of collected elements so the map does not grow without bound.
  if (byId.size > 4 * pass.candidates.length + 1024) {
    for (const [id, ref] of byId) if (!ref.deref()) byId.delete(id);
  }
  return nextId;
}
