/**
 * The distiller's last pass: the plain JSON tree of what is shown, and the
 * facts of each element with an id.
 *
 * @module
 */

import type { Rect } from "./layout.ts";
import {
  clip,
  fold,
  NAME_FROM_CONTENT,
  nameFromAttributes,
  saidIn,
  STRUCTURE_ROLES,
} from "./roles.ts";
import type {
  DistillRequest,
  DistillResult,
  WireBox,
  WireElement,
  WireFacts,
  WireFrame,
  WireNode,
  WireText,
} from "../observe/wire.ts";
import {
  consumed,
  contentText,
  type DNode,
  F_ARIA_HIDDEN,
  isHidden,
  type Pass,
  S_SCROLL,
} from "./_tree.ts";
import { composedContains, frameCovers } from "./_vet.ts";

/** Folds the white space text runs kept at their edges, dropping runs left empty. */
export function tidy(nodes: WireNode[]): WireNode[] {
  const out: WireNode[] = [];
  for (const node of nodes) {
    if (node.k === "t") {
      const t = fold(node.t);
      if (t) out.push({ k: "t", t });
      continue;
    }
    if (node.k === "e" && node.c) {
      const c = tidy(node.c);
      if (c.length) node.c = c;
      else delete node.c;
    }
    out.push(node);
  }
  return out;
}

/** What is left of emitted nodes once their text went into a name: the elements with ids. */
function prune(nodes: WireNode[]): WireNode[] {
  const out: WireNode[] = [];
  for (const node of nodes) {
    if (node.k === "f") out.push(node);
    if (node.k !== "e") continue;
    if (node.id !== undefined) {
      out.push(node);
      continue;
    }
    const inner = node.c ? prune(node.c) : [];
    out.push(...inner);
  }
  return out;
}

/** A box as the wire carries it: rounded `[x, y, width, height]`. */
export function box(r: Rect): WireBox {
  return [Math.round(r.x), Math.round(r.y), Math.round(r.w), Math.round(r.h)];
}

/** Names structure lines (headings, landmarks, cells) from attributes or content. */
function structureName(node: DNode, req: DistillRequest): string | undefined {
  const named = node.el.hasAttributes() || node.tag === "fieldset" || node.tag === "table";
  const fromContent = NAME_FROM_CONTENT.has(node.role);
  // accname: content comes before `title` for roles named from content (a column header).
  const attr = (named ? nameFromAttributes(node.el, node.tag, { title: !fromContent }) : "") ||
    node.ownText || "";
  if (attr) return clip(attr, req.maxText);
  if (!fromContent) return undefined;
  // Content with lines of its own inside (a link in a sentence of a cell) is
  // shown in place, not read into a name with the lines pulled out after it.
  if (holdsLine(node)) return undefined;
  const parts: string[] = [];
  contentText(node, parts);
  const name = fold(parts.join(""));
  if (!name) {
    return named
      ? clip(fold(node.el.getAttribute("title") ?? ""), req.maxText) || undefined
      : undefined;
  }
  const cell = CELLS.has(node.role);
  // A cell's text is the table's content: a cell holding prose (a forum laid
  // out in one cell) keeps it whole as its content rather than as a cut name.
  if (cell && name.length > MAX_CELL) return undefined;
  node.kids = node.kids.filter((kid) => typeof kid !== "string");
  node.named = true;
  return cell ? name : clip(name, req.maxText);
}

/**
 * Whether anything inside the node gets a line of its own (a candidate that keeps one).
 *
 * @param node a node of the working tree
 * @returns true when a candidate inside keeps its line
 */
export function holdsLine(node: DNode): boolean {
  for (const kid of node.kids) {
    if (typeof kid === "string" || "k" in kid) continue;
    if (kid.keep || holdsLine(kid)) return true;
  }
  return false;
}

/** Roles of table cells, whose content names them. */
const CELLS = new Set(["cell", "gridcell", "columnheader", "rowheader"]);

/** Longest cell text read into the cell's name, in characters; longer text is shown as content. */
const MAX_CELL = 1000;

/** Roles that hold other elements, so that an id on one scopes what lies inside. */
const CONTAINER_ROLES = new Set([
  "dialog",
  "alertdialog",
  "form",
  "list",
  "listbox",
  "menu",
  "menubar",
  "tree",
  "grid",
  "treegrid",
  "tablist",
  "radiogroup",
  "toolbar",
  "scrollable",
]);

/** The wire nodes of `node`: its line, or its children when it has none of its own. */
export function emit(
  pass: Pass,
  node: DNode,
  owners: readonly Element[],
  container?: number,
  scroller?: number,
): WireNode[] {
  const out = emitNode(pass, node, owners, container, scroller);
  // Unseen text is read into names above, never shown as text of its own.
  return node.unseen ? prune(out) : out;
}

function emitNode(
  pass: Pass,
  node: DNode,
  owners: readonly Element[],
  container?: number,
  outerScroller?: number,
): WireNode[] {
  const { req } = pass;
  const scroller = node.id !== undefined && node.sig & S_SCROLL ? node.id : outerScroller;
  const inner = node.id !== undefined && (node.sig & S_SCROLL || CONTAINER_ROLES.has(node.role))
    ? node.id
    : container;
  const line = node.keep > 0 ||
    (STRUCTURE_ROLES.has(node.role) && !(node.flags & F_ARIA_HIDDEN) && !isHidden(node));
  const name = node.keep ? node.name : line ? structureName(node, req) : undefined;
  const kids: WireNode[] = [];
  const quiet = node.tag === "label" && labelledKept(pass, node.el) ||
    pass.standIns.has(node.el) || node.unseen === true;
  // Whether the last text can run on into the next (no block box in between).
  let runs = false;
  const addText = (text: string, glue: boolean): void => {
    const last = kids[kids.length - 1];
    if (last && last.k === "t" && runs) last.t += glue ? text : ` ${text}`;
    else kids.push({ k: "t", t: text });
    runs = true;
  };
  for (const kid of node.kids) {
    if (typeof kid === "string") {
      if (quiet) continue;
      addText(kid, true);
    } else if ("k" in kid) {
      runs = false;
      if (kid.k === "f") {
        const frame: WireFrame = {
          k: "f",
          slot: owners.indexOf(kid.el),
          box: frameBox(pass, kid.el),
        };
        const title = fold(kid.el.getAttribute("title") ?? kid.el.getAttribute("aria-label") ?? "");
        if (title) frame.name = title;
        const veto = kid.veto ??
          (pass.modal && !composedContains(pass.modal, kid.el) ? "modal" : undefined);
        if (veto) frame.veto = veto;
        else {
          const covers = frameCovers(pass, kid.el, frame.box);
          if (covers.length) frame.covers = covers;
        }
        kids.push(frame);
      } else {
        if (kid.why === "similar" && scroller !== undefined) kid.scroll = scroller;
        kids.push(kid);
      }
    } else {
      const emitted = emit(pass, kid, owners, inner, scroller);
      const outs = node.named && consumed(kid) ? prune(emitted) : emitted;
      // A kept control's label says its text in a box of its own (a `<span>`,
      // a web component's `<slot>`): that text is the control's name too.
      if (quiet && outs.length && outs.every((out) => out.k === "t")) continue;
      if (kid.inline && outs.length && outs.every((out) => out.k === "t")) {
        // An inline box of text (`<b>`, `<code>`, a span) runs on in the sentence.
        addText(outs.map((out) => (out as WireText).t).join(" "), true);
        if (kid.spaceAfter) addText(" ", true);
        continue;
      }
      // A box that shows nothing in the flow (screen-reader-only words, an
      // empty inline) leaves the sentence whole: "· 1 December · 9 min read",
      // not parted with a separator where its words were.
      if (outs.length === 0 && (kid.unseen || kid.inline) && kid.tag !== "br") continue;
      if (kid.tag === "br" && kids[kids.length - 1]?.k === "t") addText(" ", true);
      runs = false;
      const only = outs.length === 1 ? outs[0] : undefined;
      if (kid.inline && only?.k === "e" && only.id !== undefined && !only.c) only.inline = true;
      for (const out of outs) kids.push(out);
      if (kid.inline && kid.spaceAfter) runs = false;
    }
  }
  if (!line) {
    // A generic wrapper: keep it as a group only when it groups several things.
    if (kids.length >= 2 && node.tag !== "body") return [{ k: "e", role: "", c: kids }];
    return kids;
  }
  if (node.keep === 0 && !name && kids.length === 0 && node.role !== "canvas") return [];
  if (name) {
    // Text that only says the name again (`[7] link "Share" Share`, a
    // fieldset's legend, the part of an `aria-labelledby` name the element
    // shows) is left out.
    for (let i = kids.length - 1; i >= 0; i--) {
      const kid = kids[i]!;
      if (kid.k === "t" && saidIn(name, fold(kid.t))) kids.splice(i, 1);
    }
  }
  dropEchoedImages(kids);
  const out: WireElement = { k: "e", role: node.role };
  if (node.id !== undefined) {
    out.id = node.id;
    if (container !== undefined) out.container = container;
  }
  if (name) out.name = name;
  if (node.value !== undefined) out.value = node.value;
  if (node.options) out.options = node.options;
  if (node.states) out.states = node.states;
  if (node.cues) out.cues = node.cues;
  if (node.href) out.href = node.href;
  if (node.quietHref) out.quietHref = true;
  if (node.description) out.description = node.description;
  if (node.id !== undefined && node.rect) {
    out.box = box(node.rect);
    out.inView = node.inView === true;
    if (node.isNew) out.isNew = true;
  }
  if (kids.length) out.c = kids;
  return [out];
}

/**
 * Drops an image line that only says what the element beside it is named
 * (a product photo before the product's link): it carries nothing more.
 */
function dropEchoedImages(kids: WireNode[]): void {
  for (let i = kids.length - 1; i >= 0; i--) {
    const kid = kids[i]!;
    if (kid.k !== "e" || kid.role !== "img" || kid.id !== undefined || kid.c || !kid.name) continue;
    const next = kids[i + 1], previous = kids[i - 1];
    if (
      next?.k === "e" && next.name === kid.name || previous?.k === "e" && previous.name === kid.name
    ) {
      kids.splice(i, 1);
    }
  }
}

/** Flattens the facts of elements with ids, and the frames, out of the tree. */
export function facts(nodes: WireNode[], out: WireFacts[], frames: DistillResult["frames"]): void {
  for (const node of nodes) {
    if (node.k === "f") {
      const frame: DistillResult["frames"][number] = { slot: node.slot, box: node.box };
      if (node.name) frame.name = node.name;
      if (node.veto) frame.veto = node.veto;
      if (node.covers) frame.covers = node.covers;
      frames.push(frame);
      continue;
    }
    if (node.k !== "e") continue;
    if (node.id !== undefined) {
      const box = node.box ?? [0, 0, 0, 0];
      out.push([
        node.id,
        node.role,
        node.name ?? "",
        node.value ?? null,
        node.states ? node.states.join(" ") : "",
        node.cues ? node.cues.join(" ") : "",
        box[0],
        box[1],
        box[2],
        box[3],
        (node.inView ? 1 : 0) | (node.isNew ? 2 : 0),
        node.href ?? "",
        node.container ?? 0,
        node.description ?? "",
      ]);
    }
    if (node.c) facts(node.c, out, frames);
  }
}

/** Whether the label's control got a line (and so took the label's text as its name). */
function labelledKept(pass: Pass, label: Element): boolean {
  const control = (label as HTMLLabelElement).control ??
    (label.getAttribute("for")
      ? label.ownerDocument.getElementById(label.getAttribute("for")!)
      : label.querySelector("input,select,textarea"));
  return control ? pass.kept.has(control) : false;
}

function frameBox(pass: Pass, el: Element): WireBox {
  const r = pass.layout.rect(el);
  const html = el as HTMLElement;
  const left = html.clientLeft ?? 0, top = html.clientTop ?? 0;
  return [
    Math.round(r.x + left),
    Math.round(r.y + top),
    Math.round(html.clientWidth || r.w),
    Math.round(html.clientHeight || r.h),
  ];
}
