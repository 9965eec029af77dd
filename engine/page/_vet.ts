/**
 * The distiller's second pass: boxes for candidates only, and the vetoes
 * (hidden, disabled, clipped, covered); containers of delegated targets
 * give up their own ids.
 *
 * @module
 */

import type { Layout, Rect } from "./layout.ts";
import type { WireBox } from "../observe/wire.ts";
import { drawnPlaceholders, fieldLabels, unwrapContainers } from "./_containers.ts";
import { fold, isDisabled } from "./roles.ts";
import { siblingStandIn } from "./stand_in.ts";
import { revealerOf } from "./_hover_reveal.ts";
import { shadowOf } from "./shadow_roots.ts";
import {
  type DNode,
  F_ARIA_DISABLED,
  F_ARIA_HIDDEN,
  F_IN_DISABLED_FIELDSET,
  F_INERT,
  FORM_TAGS,
  type Pass,
  S_PROXY,
  STRONG,
  WEAK,
} from "./_tree.ts";

/** The element, or the shadow host chain above it, is inside `container`. */
export function composedContains(container: Element, el: Element): boolean {
  let node: Node | null = el;
  while (node) {
    if (container.contains(node)) return true;
    const root: Node = node.getRootNode();
    node = (root as ShadowRoot).host ?? null;
  }
  return false;
}

/** An open modal: a `<dialog>` shown with `showModal()` or a visible `aria-modal` element. */
function openModal(doc: Document, layout: Layout): Element | null {
  try {
    const modal = doc.querySelector("dialog:modal");
    if (modal) return modal;
  } catch {
    // no :modal support (linkedom)
  }
  for (const el of Array.from(doc.querySelectorAll('[aria-modal="true"]'))) {
    const r = layout.rect(el);
    if (r.w > 0 && r.h > 0 && layout.style(el).visibility === "visible") return el;
  }
  return null;
}

/** Measures candidates, applies the vetoes and unwraps containers of delegated targets. */
export function vet(pass: Pass, doc: Document): void {
  const { layout, vp } = pass;
  const modal = openModal(doc, layout);
  pass.modal = modal;
  for (const proxy of pass.proxies) {
    if (proxy.standIn) {
      // A range input's thumb (`thumbStandIn`): the input takes the id, boxed by the thumb it
      // moves, never its label (a click there moves nothing); the box that hides it inside the
      // thumb clips it, not the thumb.
      const thumb = proxy.standIn;
      pass.standIns.add(thumb);
      while (proxy.clipper && thumb.contains(proxy.clipper.el)) {
        proxy.clipper = proxy.clipper.clipper;
      }
      proxy.sig |= S_PROXY;
      continue;
    }
    const labels = (proxy.el as HTMLInputElement).labels;
    const label = labels && labels.length ? pass.labels.get(labels[0]!) : undefined;
    if (label && layout.visible(label.el)) {
      label.proxy = proxy.el;
      label.role = proxy.role;
      label.sig |= S_PROXY;
      if (!pass.candidates.includes(label)) pass.candidates.push(label);
      // The control drawn beside it, with no words of its own (a switch's
      // track, Element Plus's), is that same control: no second, nameless id.
      const drawn = siblingStandIn(layout, proxy.el);
      if (drawn && !drawn.contains(label.el) && !fold(drawn.textContent ?? "")) {
        pass.standIns.add(drawn);
        for (const el of Array.from(drawn.querySelectorAll("*"))) pass.standIns.add(el);
      }
      continue;
    }
    // A hidden button without a label drawing it is hidden, not stood in for.
    if (proxy.tag === "button") continue;
    // No label names it: a visible sibling (a label without `for`, a span
    // drawn by CSS) stands in, and the input itself takes the id, so that
    // checking it acts on the real control.
    const standIn = siblingStandIn(layout, proxy.el);
    if (standIn) {
      proxy.standIn = standIn;
      pass.standIns.add(standIn);
      const parent = proxy.el.parentElement;
      if (
        !fold(standIn.textContent ?? "") && parent && fold(parent.textContent ?? "").length <= 80
      ) {
        // A box drawn by CSS, the words beside it: the whole small wrapper stands in.
        pass.standIns.add(parent);
        for (let sib = parent.firstElementChild; sib; sib = sib.nextElementSibling) {
          if (sib !== proxy.el && !sib.querySelector("input,select,textarea,button,a[href]")) {
            pass.standIns.add(sib);
          }
        }
      }
    }
    const r = layout.rect(proxy.el);
    if (standIn || r.w >= 2 && r.h >= 2) proxy.sig |= S_PROXY;
  }
  for (const node of pass.candidates) {
    const { el, flags } = node;
    if (flags & (F_ARIA_HIDDEN | F_INERT)) continue;
    if (pass.standIns.has(el)) continue;
    if (wrapsProxied(pass, node)) continue;
    if (modal && !composedContains(modal, el)) continue;
    if (!(node.sig & S_PROXY) && !layout.visible(el) && !transparentField(pass, node)) {
      revealedOnHover(pass, node);
      continue;
    }
    const disabled = node.proxy
      ? isDisabled(node.proxy, node.proxy.localName)
      : (flags & F_ARIA_DISABLED) !== 0 ||
        FORM_TAGS.has(node.tag) &&
          (el.hasAttribute("disabled") || (flags & F_IN_DISABLED_FIELDSET) !== 0);
    node.disabled = disabled;
    const shown = node.standIn ?? el;
    const r = layout.rect(shown);
    node.rect = r;
    if (r.w < 2 || r.h < 2) continue;
    if (r.x + r.w <= -vp.x || r.y + r.h <= -vp.y) {
      revealedOnHover(pass, node);
      continue;
    }
    node.inView = r.x < vp.w && r.x + r.w > 0 && r.y < vp.h && r.y + r.h > 0;
    const clipped = node.clipper ? clipState(pass, node, r) : CLIP_NONE;
    if (clipped === CLIP_HIDDEN) continue;
    if (clipped === CLIP_SCROLLED) node.inView = false;
    // Only the part its scroll boxes show can be hit: an item half scrolled
    // out of a list is probed where it shows, not over what lies below the list.
    const seen = node.inView && node.clipper ? shownPart(pass, node, r) : r;
    if (seen.w < 1 || seen.h < 1) node.inView = false;
    if (disabled || node.noPointer) {
      // Shown, so the agent knows it is there, but nothing to act on.
      if (node.sig & STRONG) node.keep = 1;
      continue;
    }
    // A transparent input laid over its stand-in or label is the element itself, not a cover.
    const covers = node.inView && mayBeCovered(pass, shown, seen)
      ? coverHits(layout, shown, seen, vp, node.proxy ?? (node.standIn && el))
      : undefined;
    if (covers) {
      if (!scrollsOutFromUnder(pass, covers)) continue;
      // Under a bar the page scrolls it out from: there, out of view (a click scrolls first).
      node.inView = false;
    }
    node.keep = 2;
  }
  drawnPlaceholders(pass);
  fieldLabels(pass);
  unwrapContainers(pass);
  for (const node of pass.candidates) if (node.keep) pass.kept.add(node.proxy ?? node.el);
}

/**
 * A control the page hides until the pointer is over its container (see
 * `_hover_reveal.ts`: wp-admin's row actions) is kept, boxed as that
 * container, which a person hovers to reach it; acting on it hovers there first.
 */
function revealedOnHover(pass: Pass, node: DNode): void {
  if (!(node.sig & STRONG)) return;
  const trigger = revealerOf(node.el);
  if (!trigger) return;
  const { layout, vp } = pass;
  const r = layout.rect(trigger);
  if (r.w < 2 || r.h < 2 || r.x + r.w <= -vp.x || r.y + r.h <= -vp.y) return;
  if (!layout.visible(trigger)) return;
  node.rect = r;
  node.revealedOnHover = true;
  node.inView = r.x < vp.w && r.x + r.w > 0 && r.y < vp.h && r.y + r.h > 0;
  node.disabled = (node.flags & F_ARIA_DISABLED) !== 0 ||
    FORM_TAGS.has(node.tag) && node.el.hasAttribute("disabled");
  node.keep = node.disabled ? 1 : 2;
}

/** Types of `<input>` a person types into. */
const TEXT_FIELD = /^(|text|search|email|url|tel|number|password)$/;

/**
 * An empty text field drawn transparent until focused (Material Web's
 * outlined field while its label sits in it): still painted for the
 * pointer, so a hit test at its centre lands on it. It is the control a
 * person clicks.
 */
function transparentField(pass: Pass, node: DNode): boolean {
  const el = node.el;
  const type = (el.getAttribute("type") ?? "").toLowerCase();
  if (node.tag !== "textarea" && !(node.tag === "input" && TEXT_FIELD.test(type))) return false;
  const { layout } = pass;
  if (layout.style(el).visibility !== "visible") return false;
  const r = layout.rect(el);
  if (r.w < 2 || r.h < 2) return false;
  const root = el.getRootNode() as Document | ShadowRoot;
  if (typeof root.elementFromPoint !== "function") return false;
  return layout.hit(root, r.x + r.w / 2, r.y + r.h / 2) === el;
}

/**
 * A weak-only candidate that wraps the hidden input a label stands in for
 * is part of that one control (the ripple box of a drawn checkbox), and so
 * is one inside that label (a switch's drawn track): not a target of its
 * own, the label's id acts on it.
 */
function wrapsProxied(pass: Pass, node: DNode): boolean {
  if (!pass.proxies.length || !(node.sig & WEAK) || node.sig & STRONG) return false;
  const label = node.el.closest("label");
  const owner = label ? pass.labels.get(label) : undefined;
  if (!owner?.proxy || !(owner.sig & S_PROXY)) return false;
  // The drawn box or switch track inside the label is part of the control too.
  return node.el.contains(owner.proxy) || owner.el !== node.el;
}

const CLIP_NONE = 0;

/** Outside the visible part of a scroll container: there, but scrolled out of view. */
const CLIP_SCROLLED = 1;

/** Cut away by an `overflow: hidden` box that does not scroll: not visible at all. */
const CLIP_HIDDEN = 2;

/**
 * The element's box against every clipping ancestor: wholly outside one
 * that scrolls means scrolled out of view, wholly outside one that only
 * clips means hidden. Positioned content can escape a clipping box that is
 * not its containing block, so "hidden" in the viewport is confirmed by a
 * hit test at the box's centre.
 */
function clipState(pass: Pass, node: DNode, r: Rect): number {
  let state = CLIP_NONE;
  for (let c = node.clipper; c; c = c.clipper) {
    const box = c.clipBox ??= clientBox(pass.layout, c.el);
    const outside = r.x >= box.x + box.w || r.x + r.w <= box.x || r.y >= box.y + box.h ||
      r.y + r.h <= box.y;
    if (!outside) continue;
    if (c.scrolls) {
      state = CLIP_SCROLLED;
      continue;
    }
    const { vp } = pass;
    const cx = r.x + r.w / 2, cy = r.y + r.h / 2;
    if (cx >= 0 && cy >= 0 && cx < vp.w && cy < vp.h) {
      const root = node.el.getRootNode() as Document | ShadowRoot;
      const hit = typeof root.elementFromPoint === "function"
        ? pass.layout.hit(root, cx, cy)
        : null;
      if (hit && (hit === node.el || node.el.contains(hit) || (node.standIn?.contains(hit)))) {
        continue;
      }
    }
    return CLIP_HIDDEN;
  }
  return state;
}

/** The part of `r` that every scrolling ancestor of the node shows (their boxes are measured by `clipState`). */
function shownPart(pass: Pass, node: DNode, r: Rect): Rect {
  let x0 = r.x, y0 = r.y, x1 = r.x + r.w, y1 = r.y + r.h;
  for (let c = node.clipper; c; c = c.clipper) {
    if (!c.scrolls) continue;
    const box = c.clipBox ??= clientBox(pass.layout, c.el);
    x0 = Math.max(x0, box.x);
    y0 = Math.max(y0, box.y);
    x1 = Math.min(x1, box.x + box.w);
    y1 = Math.min(y1, box.y + box.h);
  }
  return { x: x0, y: y0, w: Math.max(0, x1 - x0), h: Math.max(0, y1 - y0) };
}

/** The padding box of a clipping element: where its content shows. */
function clientBox(layout: Layout, el: Element): Rect {
  const r = layout.rect(el);
  const html = el as HTMLElement;
  if (!html.clientWidth && !html.clientHeight) return r;
  return {
    x: r.x + (html.clientLeft ?? 0),
    y: r.y + (html.clientTop ?? 0),
    w: html.clientWidth,
    h: html.clientHeight,
  };
}

/**
 * Whether anything can lie over `el`'s box `r`: a positioned element (with
 * its overflow) that overlaps the box and is neither `el`, inside it, nor
 * around it. Boxes in normal flow do not overlap, so the hit tests (the
 * vet's main cost) are spent only where a cover can be. What this misses
 * (negative margins, grid items placed in one cell, transforms) the
 * actor's own hit test still names as the cover when an action is tried.
 */
function mayBeCovered(pass: Pass, el: Element, r: Rect): boolean {
  const { occluders } = pass;
  if (occluders.length === 0) return false;
  const boxes = occluderBoxes(pass);
  for (let i = 0; i < boxes.length; i++) {
    const o = boxes[i]!;
    if (o.x >= r.x + r.w || o.x + o.w <= r.x || o.y >= r.y + r.h || o.y + o.h <= r.y) continue;
    const occluder = occluders[i]!;
    if (occluder === el || occluder.contains(el) || el.contains(occluder)) continue;
    return true;
  }
  return false;
}

/** The boxes of the positioned elements, with their overflow, measured once a pass. */
function occluderBoxes(pass: Pass): Rect[] {
  const { occluders, layout } = pass;
  return pass.occluderBoxes ??= occluders.map((o) => {
    const box = layout.rect(o);
    // Content overflowing a positioned box (a zero-height wrapper of a menu) lies over others too.
    const html = o as HTMLElement;
    return {
      x: box.x,
      y: box.y,
      w: Math.max(box.w, html.scrollWidth ?? 0),
      h: Math.max(box.h, html.scrollHeight ?? 0),
    };
  });
}

/**
 * The parts of an iframe's content box (`box`, in this frame's viewport)
 * that a positioned element lies over, in the child frame's viewport: each
 * overlap of a positioned box with the iframe's visible part where a hit
 * test at its centre lands on something other than the iframe. The child's
 * elements there take no pointer (a cookie banner over an embed, an overlay
 * that is a modal without `aria-modal`); the driver drops their ids.
 */
export function frameCovers(pass: Pass, iframe: Element, box: WireBox): WireBox[] {
  const { occluders, vp, layout } = pass;
  if (occluders.length === 0) return [];
  const root = iframe.getRootNode() as Document | ShadowRoot;
  if (typeof root.elementFromPoint !== "function") return [];
  const [fx, fy, fw, fh] = box;
  const x0 = Math.max(fx, 0), y0 = Math.max(fy, 0);
  const x1 = Math.min(fx + fw, vp.w), y1 = Math.min(fy + fh, vp.h);
  const covers: WireBox[] = [];
  const boxes = occluderBoxes(pass);
  for (let i = 0; i < boxes.length; i++) {
    const o = boxes[i]!;
    const ox0 = Math.max(x0, o.x), oy0 = Math.max(y0, o.y);
    const ox1 = Math.min(x1, o.x + o.w), oy1 = Math.min(y1, o.y + o.h);
    if (ox1 - ox0 < 1 || oy1 - oy0 < 1) continue;
    const occluder = occluders[i]!;
    if (occluder === iframe || occluder.contains(iframe)) continue;
    const hit = layout.hit(root, (ox0 + ox1) / 2, (oy0 + oy1) / 2);
    if (!hit || hit === iframe) continue;
    covers.push([
      Math.round(ox0 - fx),
      Math.round(oy0 - fy),
      Math.round(ox1 - ox0),
      Math.round(oy1 - oy0),
    ]);
  }
  return covers;
}

/**
 * Whether every element covering the box lies in a bar fixed (or stuck) to
 * the viewport's top or bottom edge, a site's header or wp-admin's toolbar,
 * that scrolling the page moves the box out from under: the page can scroll
 * away from that edge, and the bar is a bar, not an overlay of the whole
 * view. A person scrolls the control out; a click scrolls it to the middle.
 */
function scrollsOutFromUnder(pass: Pass, covers: Element[]): boolean {
  const { layout, vp } = pass;
  for (const hit of covers) {
    let bar: Element | null = hit;
    while (bar && !/^(fixed|sticky)$/.test(layout.style(bar).position)) bar = bar.parentElement;
    if (!bar) return false;
    const b = layout.rect(bar);
    if (b.h >= vp.h / 2) return false;
    const atTop = b.y <= 1, atBottom = b.y + b.h >= vp.h - 1;
    if (!(atTop && vp.y > 0) && !(atBottom && vp.y + vp.h < vp.sh - 1)) return false;
  }
  return true;
}

/**
 * What covers the box, when every probe point of it hits something that is
 * neither the element, inside it, one of its labels, the shadow host it lies
 * in (slotted content answers hit tests as its host), one of its ancestors
 * (an ancestor means the point is clipped by a scroll container, not
 * covered), nor `input`: the styled-away control the element stands in for,
 * which often lies transparent over it and takes the click itself; else
 * `undefined`.
 */
function coverHits(
  layout: Layout,
  el: Element,
  r: Rect,
  vp: { w: number; h: number },
  input?: Element | false,
): Element[] | undefined {
  const root = el.getRootNode() as Document | ShadowRoot;
  if (typeof root.elementFromPoint !== "function") return undefined;
  const hits: Element[] = [];
  const x0 = Math.max(r.x, 0), x1 = Math.min(r.x + r.w, vp.w);
  const y0 = Math.max(r.y, 0), y1 = Math.min(r.y + r.h, vp.h);
  const points: [number, number][] = [
    [(x0 + x1) / 2, (y0 + y1) / 2],
    [x0 + (x1 - x0) * 0.2, y0 + (y1 - y0) * 0.2],
    [x0 + (x1 - x0) * 0.8, y0 + (y1 - y0) * 0.8],
    [x0 + (x1 - x0) * 0.8, y0 + (y1 - y0) * 0.2],
    [x0 + (x1 - x0) * 0.2, y0 + (y1 - y0) * 0.8],
  ];
  for (const [x, y] of points) {
    const hit = layout.hit(root, x, y);
    if (!hit) return undefined;
    if (hit === el || el.contains(hit) || hit.contains(el) || hit === input) return undefined;
    // A web component's own host: the point is on its slotted text (a label's words), which
    // a hit test in the shadow tree answers with the host. The component is the element.
    if (shadowOf(hit) && composedContains(hit, el)) return undefined;
    const label = hit.closest("label");
    if (label && (label.control === el || label.contains(el))) return undefined;
    hits.push(hit);
  }
  return hits;
}
