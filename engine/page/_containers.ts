/**
 * Which weak-only candidates are containers, not targets: listened
 * ancestors of delegated targets, focusable boxes of prose, bare widget
 * parts, the wrappers of an input and the placeholder drawn for it, and
 * field labels beside their controls. Run by `vet` once every candidate is
 * measured and vetoed.
 *
 * @module
 */

import { fold, nameFromAttributes } from "./roles.ts";
import { iconName } from "./_class_names.ts";
import {
  contentText,
  type DNode,
  F_ARIA_HIDDEN,
  OWN_TARGET,
  type Pass,
  S_DELEGATED,
  S_ITEM,
  S_LISTENER,
  S_ONATTR,
  S_POINTER,
  S_SCROLL,
  STRONG,
  WEAK,
} from "./_tree.ts";

/**
 * A listener on an ancestor is not a signal that the ancestor is the
 * target. A weak-only candidate (listener, hover, tabindex, on* attribute)
 * with candidates inside that keep ids is a container, kept as structure,
 * when everything it shows belongs to those targets, or it only hovers or
 * takes focus, or it delegates (a target inside was found by the probe), or
 * it is too big to be one thing a person clicks (more than half the
 * viewport). Otherwise (a listened row with its own text and a Delete
 * button inside) it stays a target beside them. A pointer cursor of its own
 * or a delegated handler of its own keeps it unless it shows nothing of its own.
 * A disabled control inside counts as one held: the box around it is that
 * control, shown disabled, not a target of its own.
 */
/** Roles of dialogs, which hold their controls and are never a target beside them. */
const DIALOGS = new Set(["dialog", "alertdialog"]);

export function unwrapContainers(pass: Pass): void {
  quietPagerItems(pass);
  for (const node of pass.candidates) {
    // A disabled control is shown without an id; the listened box around it (a web
    // component's host over its shadow button: Carbon's pager arrow) is still that
    // control, not a target of its own.
    if (node.keep === 1 && node.disabled && node.sig & STRONG) {
      for (let up = node.up; up && !up.inner; up = up.up) up.inner = true;
      continue;
    }
    if (node.keep !== 2 || !(node.sig & ~S_SCROLL)) continue;
    // A part with a pointer cursor and no handler of its own (flatpickr's month arrows) is
    // served by a listener around it: that listener delegates, as a probed handler shows.
    const delegated = (node.sig & S_DELEGATED) !== 0 ||
      (node.sig & WEAK) === S_POINTER;
    for (let up = node.up; up; up = up.up) {
      if (up.inner && (!delegated || up.delegates)) break;
      up.inner = true;
      if (delegated) up.delegates = true;
    }
  }
  const { vp } = pass;
  for (const node of pass.candidates) {
    if (node.keep !== 2 || node.sig & STRONG) continue;
    if (!node.inner) {
      if (holdsProse(pass, node) || isBareDecoration(node) && !isIconControl(pass, node)) {
        node.sig &= ~WEAK;
        if (!(node.sig & S_SCROLL)) node.keep = 0;
      }
      continue;
    }
    const parts: string[] = [];
    // A dialog's title is the dialog's name, not its title bar's own text: a bar listened for
    // dragging, holding the close button (PrimeReact's Dialog), is no target beside it.
    const title = dialogTitle(node.el);
    contentText(node, parts, (kid) => kid.el === title || notOwnText(kid));
    // A dialog holding controls is where they live, not one more thing to click: its
    // handlers close it on a backdrop click or serve its controls (React-Bootstrap's Modal).
    const ownText = fold(parts.join(""));
    // A tooltip the page shows over a held control repeats that control's name (Carbon's
    // icon button shows "Next page" beside its shadow button while hovered): not its own.
    const own = !DIALOGS.has(node.role) && ownText !== "" && !namesHeld(pass, node, ownText);
    if (own && !isSelectBox(pass, node)) {
      if (node.sig & OWN_TARGET) continue;
      const r = node.rect;
      const big = r !== undefined && (r.w * r.h > vp.w * vp.h / 2 || r.h > vp.h);
      // A key listener on a focusable box holding targets (Naive UI's date panel) moves
      // focus among them: it is no click of its own.
      const listens = node.sig & S_ONATTR || (node.sig & S_LISTENER && !node.keysOnly);
      if (listens && !node.delegates && !big) continue;
    }
    node.sig &= ~WEAK;
    if (!(node.sig & S_SCROLL)) node.keep = 0;
  }
}

/** Characters past which a box's own text is more than a tooltip. */
const TOOLTIP_CHARS = 80;

/** Whether `text`, short as a tooltip, is the name (by its attributes) of a target `node` holds. */
function namesHeld(pass: Pass, node: DNode, text: string): boolean {
  if (text.length > TOOLTIP_CHARS) return false;
  for (const other of pass.candidates) {
    if (other === node || other.keep !== 2) continue;
    let up = other.up;
    while (up && up !== node) up = up.up;
    if (!up) continue;
    const target = other.proxy ?? other.el;
    if (nameFromAttributes(target, target.localName) === text) return true;
  }
  return false;
}

/**
 * Whether `node` is the box of a select drawn as its value beside an arrow
 * (PrimeReact's Dropdown): the one target it holds is a text-less trigger of
 * a listbox (`aria-haspopup="listbox"`). One control, one id: the trigger's,
 * with its role, name and state; the value the box shows stays as text.
 */
function isSelectBox(pass: Pass, node: DNode): boolean {
  let trigger: DNode | undefined;
  for (const other of pass.candidates) {
    if (other === node || other.keep !== 2 || !node.el.contains(other.proxy ?? other.el)) continue;
    if (trigger) return false;
    trigger = other;
  }
  if (!trigger || trigger.el.getAttribute("aria-haspopup") !== "listbox") return false;
  const parts: string[] = [];
  contentText(trigger, parts);
  return fold(parts.join("")) === "";
}

/** The element that names the dialog `el` is in (its `aria-labelledby`), if any. */
function dialogTitle(el: Element): Element | null {
  const dialog = el.closest("[role=dialog], [role=alertdialog], dialog");
  const by = dialog?.getAttribute("aria-labelledby")?.trim();
  if (!dialog || !by || by.includes(" ")) return null;
  const title = (dialog.getRootNode() as Document | ShadowRoot).getElementById(by);
  return title && el.contains(title) ? title : null;
}

/** A class that says its element is a pager (`pagination`, `pager`, `paginator`). */
const PAGER_CLASS = /(^|[\s_-])(pagination|pager|paginator)([\s_-]|$)/i;

/** A class that says a pager's item is the current one or out of use. */
const QUIET_ITEM_CLASS = /(^|\s)(active|current|disabled)(\s|$)/;

/**
 * The current page of a pager, and a disabled arrow, do nothing: a library
 * often keeps its click handler on them all the same (React-Bootstrap's
 * current item, a `<span>` in `li.page-item.active`). A weak-only candidate
 * inside a pager (an ancestor whose class says `pagination`, `pager` or
 * `paginator`) that is marked current (`aria-current`) or whose item (it or
 * an ancestor below the pager) has the class `active`, `current` or
 * `disabled`, and is no link, gets no id. Its text stays.
 */
function quietPagerItems(pass: Pass): void {
  for (const node of pass.candidates) {
    if (node.keep !== 2 || node.sig & STRONG || node.el.hasAttribute("href")) continue;
    let quiet = false;
    for (let el: Element | null = node.el, depth = 0; el && depth < 4; el = el.parentElement) {
      const cls = el.getAttribute("class") ?? "";
      if (PAGER_CLASS.test(cls)) {
        if (quiet) {
          node.sig &= ~WEAK;
          if (!(node.sig & S_SCROLL)) node.keep = 0;
        }
        break;
      }
      const current = el.getAttribute("aria-current");
      if ((current !== null && current !== "false") || QUIET_ITEM_CLASS.test(cls)) quiet = true;
      depth++;
    }
  }
}

/**
 * A field's label is part of its control: one control, one id. A weak-only
 * candidate (a label a web component listens on to focus its field, or the
 * listened box around it, Vaadin's) whose only text is a label naming a
 * control that keeps an id (by `for`, by wrapping, or by `aria-labelledby`)
 * gets no id, and the label's words, already the control's name, are not
 * shown again.
 */
export function fieldLabels(pass: Pass): void {
  const named = new Set<Element>();
  const ids = new Set<string>();
  for (const node of pass.candidates) {
    if (node.keep !== 2 || !(node.sig & STRONG)) continue;
    const target = node.proxy ?? node.el;
    const labels = (target as HTMLInputElement).labels;
    if (labels) { for (let i = 0; i < labels.length; i++) named.add(labels[i]!); }
    const by = target.getAttribute("aria-labelledby");
    if (by) { for (const id of by.trim().split(/\s+/)) ids.add(id); }
  }
  if (named.size === 0 && ids.size === 0) return;
  const isLabel = (el: Element) => named.has(el) || (el.id !== "" && ids.has(el.id));
  for (const node of pass.candidates) {
    if (node.keep !== 2 || node.sig & STRONG || node.proxy) continue;
    const label = labelIn(node, isLabel, 3);
    if (!label) continue;
    if (label !== node) {
      const parts: string[] = [];
      contentText(node, parts, (kid) => kid === label || notOwnText(kid));
      if (fold(parts.join(""))) continue;
    }
    node.sig &= ~WEAK;
    if (!(node.sig & S_SCROLL)) node.keep = 0;
    pass.standIns.add(label.el);
  }
}

/** The node, or one inside it (slotted content included, `depth` levels down), that is a field label. */
function labelIn(node: DNode, isLabel: (el: Element) => boolean, depth: number): DNode | undefined {
  if (isLabel(node.el)) return node;
  if (depth === 0) return undefined;
  for (const kid of node.kids) {
    if (typeof kid === "string" || "k" in kid) continue;
    const found = labelIn(kid, isLabel, depth - 1);
    if (found) return found;
  }
  return undefined;
}

/** Text-entry controls, which a library's drawn placeholder can name. */
const TEXT_ENTRY = /^(|text|search|email|url|tel|number|password)$/;

/** A class that says its element is a drawn placeholder (`n-input__placeholder`, `…-placeholder`). */
const PLACEHOLDER_CLASS = /placeholder/i;

/**
 * Libraries draw an input's placeholder as an element of its own beside it
 * (Naive UI, Element Plus, Ant Design), inside a listened or focusable
 * wrapper that opens the field. Where such a wrapper holds one text-entry
 * control that keeps an id, and everything else it shows is that drawn
 * placeholder (an element whose class says `placeholder`, or text equal to
 * the input's `placeholder`), the wrapper is part of the control: it gets
 * no id, the placeholder's words name the input when nothing else does, and
 * they are not shown again as text.
 */
export function drawnPlaceholders(pass: Pass): void {
  const inside = new Map<DNode, DNode[]>();
  for (const node of pass.candidates) {
    if (node.keep !== 2) continue;
    for (let up = node.up; up; up = up.up) {
      const list = inside.get(up);
      if (list) list.push(node);
      else inside.set(up, [node]);
    }
  }
  // Wrappers nest (Naive UI's select: a focusable label inside a listened box): a round
  // frees the outer ones of the inner ones' ids.
  for (let round = 0, changed = true; changed && round < 3; round++) {
    changed = false;
    for (const [wrapper, held] of inside) {
      if (wrapper.keep === 2 && unwrapPlaceholder(pass, wrapper, held)) changed = true;
    }
  }
}

/** Unwraps `wrapper` when all it holds is one text-entry control and its drawn placeholder. */
function unwrapPlaceholder(pass: Pass, wrapper: DNode, held: DNode[]): boolean {
  const kept = held.filter((node) => node.keep === 2);
  if (wrapper.sig & STRONG || kept.length !== 1) return false;
  const control = kept[0]!;
  const type = (control.el.getAttribute("type") ?? "").toLowerCase();
  if (!(control.tag === "input" && TEXT_ENTRY.test(type)) && control.tag !== "textarea") {
    return false;
  }
  if ((control.el as HTMLInputElement).value) return false;
  const attribute = fold(control.el.getAttribute("placeholder") ?? "");
  const drawn: DNode[] = [];
  const parts: string[] = [];
  contentText(wrapper, parts, (kid) => {
    const cls = kid.el.getAttribute("class") ?? "";
    if (!PLACEHOLDER_CLASS.test(cls)) return notOwnText(kid);
    drawn.push(kid);
    return true;
  });
  const rest = fold(parts.join(""));
  if (rest && rest !== attribute) return false;
  const words = drawn.map((kid) => {
    const text: string[] = [];
    contentText(kid, text);
    return fold(text.join(""));
  }).filter(Boolean).join(" ") || attribute;
  if (!words) return false;
  wrapper.sig &= ~WEAK;
  if (!(wrapper.sig & S_SCROLL)) wrapper.keep = 0;
  // A control named by a label of its own keeps that name; the words drawn
  // in its box ("Pick a city") stay on the page as a person sees them.
  if (nameFromAttributes(control.el, control.tag, { title: false })) return true;
  control.drawnPlaceholder = words;
  for (const kid of drawn) {
    pass.standIns.add(kid.el);
    for (const el of Array.from(kid.el.querySelectorAll("*"))) pass.standIns.add(el);
  }
  return true;
}

/**
 * Whether a weak-only candidate is a bare part of a widget: only a listener,
 * hover or focus signal (no pointer cursor, no `on*` attribute), no text,
 * no icon name, no name of its own (a table header's resize handle, a
 * virtual list's scrollbar thumb, the disabled arrow of a pager). Nothing
 * tells an agent what it does: it gets no id.
 */
function isBareDecoration(node: DNode): boolean {
  if (!(node.sig & WEAK) || node.sig & (S_POINTER | S_ONATTR | S_ITEM | S_SCROLL)) return false;
  const el = node.el;
  if (el.hasAttribute("aria-label") || el.hasAttribute("aria-labelledby")) return false;
  if (el.hasAttribute("title")) return false;
  const parts: string[] = [];
  contentText(node, parts);
  return fold(parts.join("")) === "";
}

/** The sides, in CSS pixels, of a box a person takes for one icon to click. */
const ICON_MIN = 10, ICON_MAX = 64;

/**
 * Whether a bare candidate (see {@linkcode isBareDecoration}) is an icon a
 * person clicks: a share, like, reply or "more" icon in a feed or a mail
 * row, with a click listener of its own and nothing else (no text, no
 * name, often not even a pointer cursor). Told from a widget's bare parts
 * (a resize handle, a scrollbar thumb, a drag grip, a disabled arrow) by
 * what it shows: an icon (an svg, an image, an icon font's glyph drawn by
 * `::before`, or what its tooltip or class names), in a box of an icon's
 * size, not marked disabled. The listener is its own (`S_LISTENER` is set
 * only where the listener is registered), so a row's delegated handler
 * never makes its decorations targets.
 */
function isIconControl(pass: Pass, node: DNode): boolean {
  if (!(node.sig & S_LISTENER) || node.keysOnly) return false;
  const el = node.el;
  const r = node.rect;
  if (!r || r.w < ICON_MIN || r.h < ICON_MIN || r.w > ICON_MAX || r.h > ICON_MAX) return false;
  if (/(^|[\s_-])disabled(\b|$)/i.test(el.getAttribute("class") ?? "")) return false;
  if (pass.layout.style(el).cursor === "not-allowed") return false;
  if (el.querySelector("svg, img, i, [class*=icon]")) return true;
  return drawsGlyph(el) || iconName(el) !== "";
}

/** Whether the element or a child draws a glyph with `::before`/`::after` (an icon font). */
function drawsGlyph(el: Element): boolean {
  const view = el.ownerDocument.defaultView;
  if (!view || typeof view.getComputedStyle !== "function") return false;
  for (const part of [el, ...Array.from(el.children).slice(0, 3)]) {
    for (const pseudo of ["::before", "::after"]) {
      const content = view.getComputedStyle(part, pseudo).content;
      if (content && content !== "none" && content !== "normal" && content !== '""') return true;
    }
  }
  return false;
}

/** Characters of text past which an element holds prose rather than a name. */
const PROSE_CHARS = 200;

/**
 * Whether a weak-only candidate without targets inside holds prose (a
 * chapter of paragraphs in a focusable `<div tabindex>`), so that it is a
 * container of text, not one thing to act on: its text would otherwise be
 * read into a name and cut. Decided as for listened ancestors: taking focus
 * or hovering is no reason to be a target; a listener or an `on*` handler
 * keeps it unless it is too big to be one thing a person clicks; a pointer
 * cursor or a delegated handler of its own keeps it.
 */
function holdsProse(pass: Pass, node: DNode): boolean {
  if (!(node.sig & WEAK) || node.sig & OWN_TARGET) return false;
  const parts: string[] = [];
  contentText(node, parts);
  if (fold(parts.join("")).length <= PROSE_CHARS) return false;
  if (!(node.sig & (S_LISTENER | S_ONATTR))) return true;
  const r = node.rect, { vp } = pass;
  return r !== undefined && (r.w * r.h > vp.w * vp.h / 2 || r.h > vp.h);
}

/**
 * Text inside a container that is not the container's own: a label's (it
 * names a control), and what is under `aria-hidden` (decoration, such as
 * the copy of a floating label in an outlined field's border).
 */
function notOwnText(kid: DNode): boolean {
  if (kid.flags & F_ARIA_HIDDEN) return true;
  return kid.tag === "label" && (kid.el as HTMLLabelElement).control != null;
}
