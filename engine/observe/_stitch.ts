/**
 * Stitching frames into one observation: ids relabelled into the context's,
 * frame ids marked, child frames' trees put in their slots, ids taken out
 * of frames nobody can act in (wholly or under a parent's box), and the
 * line an element is compared by in diffs.
 *
 * @module
 */
import type { DistillResult, FrameVeto, WireBox, WireElement, WireNode } from "./wire.ts";
import type { ObservedElement } from "./observation.ts";
import { describeElement, formatNodes } from "./format_observation.ts";

/**
 * Replaces every element id in a tree: an element's own, the id of its
 * container, and the scroll box a summary line points to.
 */
export function relabelNodes(nodes: WireNode[], map: (id: number) => number): void {
  for (const node of nodes) {
    const refs = node as { container?: unknown; scroll?: unknown };
    if (typeof refs.container === "number") refs.container = map(refs.container);
    if (typeof refs.scroll === "number") refs.scroll = map(refs.scroll);
    if (node.k !== "e") continue;
    if (node.id !== undefined) node.id = map(node.id);
    if (node.c) relabelNodes(node.c, map);
  }
}

/**
 * Takes ids out of a tree: those in `only`, or every one (an element's own,
 * its container's, a summary line's scroll box): the tree of a frame nobody
 * can act in.
 */
export function unlabelNodes(nodes: WireNode[], only?: ReadonlySet<number>): void {
  const drop = (id: unknown) => typeof id === "number" && (!only || only.has(id));
  for (const node of nodes) {
    const refs = node as { container?: unknown; scroll?: unknown };
    if (drop(refs.container)) delete refs.container;
    if (drop(refs.scroll)) delete refs.scroll;
    if (node.k !== "e") continue;
    if (drop(node.id)) {
      delete node.id;
      delete node.isNew;
    }
    if (node.c) unlabelNodes(node.c, only);
  }
}

/** Sets `frame` on every element with an id. */
export function markFrame(nodes: WireNode[], frameId: string): void {
  for (const node of nodes) {
    if (node.k !== "e") continue;
    if (node.id !== undefined) node.frame = frameId;
    if (node.c) markFrame(node.c, frameId);
  }
}

/** Replaces frame slots with the child frames' trees, shifting their boxes. */
export function stitch(nodes: WireNode[], slots: Map<number, WireNode[]>): WireNode[] {
  return nodes.map((node): WireNode => {
    if (node.k === "f") {
      const sub = slots.get(node.slot);
      const out: WireElement = { k: "e", role: "iframe" };
      if (node.name) out.name = node.name;
      if (sub?.length) out.c = sub;
      return out;
    }
    if (node.k === "e" && node.c) return { ...node, c: stitch(node.c, slots) };
    return node;
  });
}

/** The line of an element, as diffs compare it. */
export function describeLine(el: ObservedElement): string {
  const wire: WireElement = { k: "e", id: el.id, role: el.role, states: el.states, cues: el.cues };
  if (el.name) wire.name = el.name;
  if (el.value !== undefined) wire.value = el.value;
  return describeElement(wire);
}

/** How an iframe line says why nobody can act in its frame. */
export const VETO_TEXT: Record<FrameVeto, string> = {
  "inert": "inert",
  "aria-hidden": "aria-hidden",
  "no-pointer": "takes no pointer",
  "modal": "outside the open dialog",
};

/** A vetoed frame's answer without ids: its elements gone, its text formatted from the bare tree. */
export function unlabel(result: DistillResult): void {
  result.elements = [];
  const nodes = result.nodes ?? [];
  unlabelNodes(nodes);
  result.lines = formatNodes(nodes, { showNew: false });
}

/**
 * Drops the ids of a frame's elements whose centre lies under a box of the
 * parent document (`covers`, in the frame's viewport): the pointer cannot
 * reach them, so they show as the vetoed do, without ids.
 */
export function uncover(result: DistillResult, covers: WireBox[]): void {
  const under = new Set<number>();
  result.elements = result.elements.filter((facts) => {
    const cx = facts[6] + facts[8] / 2, cy = facts[7] + facts[9] / 2;
    const hidden = covers.some(([x, y, w, h]) => cx >= x && cx < x + w && cy >= y && cy < y + h);
    if (hidden) under.add(facts[0]);
    return !hidden;
  });
  if (!under.size) return;
  unlabelNodes(result.nodes ?? [], under);
  for (const facts of result.elements) {
    const all = facts as unknown[];
    if (typeof all[12] === "number" && under.has(all[12])) all[12] = 0;
  }
}
