/**
 * The distiller's fourth pass: roles, names, values, states, cues and link
 * targets of the elements that keep ids.
 *
 * @module
 */

import {
  clip,
  fold,
  labelText,
  NAME_FROM_CONTENT,
  nameFromAttributes,
  saidIn,
  statesOf,
  valueOf,
} from "./roles.ts";
import { iconName } from "./_class_names.ts";
import { holdsLine } from "./_emit.ts";
import {
  contentText,
  type DNode,
  F_ARIA_HIDDEN,
  type Pass,
  S_DELEGATED,
  S_EDITABLE,
  S_HOVER,
  S_ITEM,
  S_LISTENER,
  S_NATIVE,
  S_ONATTR,
  S_POINTER,
  S_PROXY,
  S_ROLE,
  S_SCROLL,
  S_TABINDEX,
} from "./_tree.ts";

/** Roles of controls that may be drawn as an icon alone. */
const ICON_ROLES = new Set(["clickable", "button", "link"]);

/** Roles of a control that stands for a form's toggle. */
const TOGGLE_ROLES = new Set(["checkbox", "radio", "switch", "menuitemcheckbox", "menuitemradio"]);

function describeNode(pass: Pass, node: DNode, focused: Element | null): void {
  const { req } = pass;
  const target = node.proxy ?? node.el;
  const tag = node.proxy ? node.proxy.localName : node.tag;
  let role = node.role;
  const scrollOnly = (node.sig & ~(S_SCROLL | S_TABINDEX)) === 0 && (node.sig & S_SCROLL) !== 0;
  if (!role) role = node.sig & S_EDITABLE ? "textbox" : scrollOnly ? "scrollable" : "clickable";
  node.role = role;
  const fromContent = !scrollOnly && (NAME_FROM_CONTENT.has(role) ||
    (node.sig & (S_POINTER | S_LISTENER | S_ONATTR | S_DELEGATED | S_ITEM)) !== 0);
  // accname 1.2 step 2: content comes before `title` for roles named from content.
  let keepText = false;
  let name = node.proxy
    ? (node.proxy.localName === "button" && nameFromAttributes(target, tag)) || proxyName(node)
    : nameFromAttributes(target, tag, { title: !fromContent });
  // A button is labelable: one drawn as a checkbox, radio or switch (Radix's, in a `<label>`)
  // is named by its label, as Chromium names it, before its content (an indicator glyph, or
  // nothing while unchecked); any other button by its label when its content says nothing.
  if (!name && tag === "button" && !node.proxy && TOGGLE_ROLES.has(role)) name = labelText(target);
  if (!name && node.standIn) name = standInText(node.el, node.standIn);
  if (!name && node.drawnPlaceholder) name = node.drawnPlaceholder;
  if (!name && node.sig & S_NATIVE) name = hostLabel(target);
  if (!name && (role === "combobox" || role === "listbox") && !node.proxy) {
    name = enhancedSelectLabel(target);
  }
  if (!name && role === "row") {
    // A row that is a target is named by its cells (shown as cells, not again as a name).
    const parts: string[] = [];
    cellsText(node, parts);
    name = fold(parts.join(" "));
  } else if (!name && fromContent) {
    const parts: string[] = [];
    contentText(node, parts);
    name = fold(parts.join(""));
    // The element's own text is its name: do not repeat it below the line. Text too
    // long for a name (a clickable card holding a paragraph) stays below it whole.
    if (name.length > req.maxText) keepText = true;
    else if (name) node.named = true;
  }
  if (!name && tag === "button" && !node.proxy) name = labelText(target);
  // A control hidden until its container is hovered (`visibility: hidden` until
  // `.card:hover`) has no visible text yet: its own words are what hovering shows.
  if (!name && fromContent && node.revealedOnHover) name = fold(target.textContent ?? "");
  const title = fromContent ? fold(target.getAttribute("title") ?? "") : "";
  if (!name && fromContent) name = title || fold(target.getAttribute("placeholder") ?? "");
  // A tooltip that only repeats words of the name ("Edit" on "Edit Copper Sky") says nothing more.
  else if (title && !saidIn(name, title)) node.description = clip(title, req.maxText);
  // An icon-only control nothing names: its tooltip, or the words its class or its icon's
  // gives it (`…__prev` → "previous", `<i class="fa fa-share">` → "share").
  if (!name && ICON_ROLES.has(role) && !node.proxy) name = iconName(target) || rowHint(target);
  if (keepText) {
    // The name is the start of the text; the text itself is the content.
  } else if (name && fromContent && !node.named) {
    if (target.hasAttribute("aria-labelledby")) {
      // Named by other text: its own text is content of its own and stays, unless it says the same.
      node.kids = node.kids.filter((kid) => typeof kid !== "string" || fold(kid) !== name);
    } else {
      // `aria-label` and the like replace what it shows (an icon's letters, a repeated caption).
      node.kids = node.kids.filter((kid) => typeof kid !== "string");
    }
  } else if (node.named) node.kids = node.kids.filter((kid) => typeof kid !== "string");
  if (name) node.name = clip(name, req.maxText);
  // An editor's text as a person reads it: its paragraphs apart, not glued
  // ("Hello there Second line", not "Hello thereSecond line").
  const value = node.sig & S_EDITABLE && !node.proxy
    ? fold((node.el as HTMLElement).innerText ?? node.el.textContent ?? "")
    : valueOf(target, tag, role);
  if (value !== undefined && value !== "") node.value = clip(fold(value), req.maxText);
  if (node.sig & S_EDITABLE) {
    // A value shown whole is not repeated below the line (an editor's paragraphs); a longer
    // text stays below, whole, and so does anything inside that keeps a line of its own.
    const whole = value === undefined || fold(value).length <= req.maxText;
    node.kids = node.kids.filter((kid) =>
      typeof kid !== "string" && (!whole || "k" in kid || kid.keep > 0 || holdsLine(kid))
    );
  }
  if (tag === "select") node.options = optionsOf(target, req.maxText);
  if ((tag === "a" || tag === "area") && role === "link") {
    const href = compactHref(target, pass);
    if (href) node.href = href;
    // A row's action shown on hover ("Edit “…”", "Move “…” to the Trash") says what it does;
    // its target (the row's own, a nonce) would double the row's line.
    if (href && name && (saysTarget(href, name) || node.revealedOnHover)) node.quietHref = true;
  }
  const states = statesOf(target, tag, role, node.disabled);
  if (focused === target) states.push("focused");
  if (node.sig & S_SCROLL) {
    const el = node.el;
    if (el.scrollHeight > el.clientHeight + 2) {
      states.push(`scroll=${Math.round(el.scrollTop)}/${el.scrollHeight - el.clientHeight}`);
    } else {
      states.push(`scrollx=${Math.round(el.scrollLeft)}/${el.scrollWidth - el.clientWidth}`);
    }
  }
  if (states.length) node.states = states;
  const cues: string[] = [];
  if (!(node.sig & (S_NATIVE | S_ROLE | S_PROXY))) {
    if (node.sig & S_EDITABLE) cues.push("editable");
    if (node.sig & (S_LISTENER | S_ONATTR | S_DELEGATED | S_ITEM)) cues.push("listener");
    if (node.sig & S_POINTER) cues.push(node.grab ? "draggable" : "pointer");
    if (node.sig & S_TABINDEX) cues.push("focusable");
  }
  // Hover styling, or shown only while the pointer is over its container.
  if (node.sig & S_HOVER || node.revealedOnHover) cues.push("hover");
  if (node.sig & S_SCROLL && role !== "scrollable") cues.push("scrollable");
  if (cues.length) node.cues = cues;
}

/**
 * The last resort for an icon nothing names (a glyph of an icon font, a bare
 * svg): the row it sits in, as a person tells the icons of a list apart
 * ("icon in “Trail run at dawn”"). Only for an element that shows an icon.
 */
function rowHint(el: Element): string {
  if (!el.querySelector("svg, img, i")) return "";
  let up = el.parentElement;
  for (let hop = 0; up && hop < 6; hop++, up = up.parentElement) {
    // As it reads: words of blocks apart (`textContent` runs a heading into its paragraph).
    const text = fold((up as HTMLElement).innerText ?? up.textContent ?? "");
    if (text) return `icon in “${clip(text, 40)}”`;
  }
  return "";
}

/** A label's name for the control it stands in for: its text, without decoration hidden from assistive tech. */
function proxyName(node: DNode): string {
  const parts: string[] = [];
  contentText(node, parts, (kid) => (kid.flags & F_ARIA_HIDDEN) !== 0);
  return fold(parts.join("")) || fold(node.el.textContent ?? "");
}

/**
 * The name a web component's own label gives the native control inside its
 * shadow root (Material Web's checkbox inside `<label><md-checkbox> Terms</label>`):
 * the host's `aria-label`, else the text of the `<label>` around the host
 * without the host's subtree. A label outside cannot reach into the
 * shadow root; a form-associated host is labelled in its place.
 */
function hostLabel(el: Element): string {
  let root = el.getRootNode() as Document | ShadowRoot;
  for (let hops = 0; hops < 4 && "host" in root && root.host; hops++) {
    const host = root.host;
    const aria = fold(host.getAttribute("aria-label") ?? "");
    if (aria) return aria;
    const label = host.closest("label");
    if (label) {
      const text = fold(textOutside(label, host));
      if (text) return text;
    }
    root = host.getRootNode() as Document | ShadowRoot;
  }
  return "";
}

/**
 * The label of the native `<select>` a picker library hid inside the
 * combobox it draws (Choices.js wraps it; the page's `<label for>` still
 * names the select): a person reads that label as the picker's name.
 */
function enhancedSelectLabel(el: Element): string {
  const select = el.querySelector("select");
  return select ? nameFromAttributes(select, "select", { title: false }) : "";
}

/** The text under `root`, without `skip`'s subtree, scripts and styles. */
function textOutside(root: Node, skip: Element): string {
  let out = "";
  for (let kid = root.firstChild; kid; kid = kid.nextSibling) {
    if (kid === skip) continue;
    if (kid.nodeType === 3) out += (kid as Text).data;
    else if (kid.nodeType === 1) {
      const tag = (kid as Element).localName;
      if (tag !== "script" && tag !== "style") out += ` ${textOutside(kid, skip)} `;
    }
  }
  return out;
}

/** The text of a row's cells, one part per cell, without what has a line of its own. */
function cellsText(node: DNode, out: string[]): void {
  for (const kid of node.kids) {
    if (typeof kid === "string" || "k" in kid || kid.keep) continue;
    const parts: string[] = [];
    contentText(kid, parts);
    out.push(fold(parts.join("")));
  }
}

/** Describes every candidate that keeps a line: role, name, value, states, cues, link target. */
export function describe(pass: Pass): void {
  const focused = pass.layout.focused();
  for (const node of pass.candidates) if (node.keep) describeNode(pass, node, focused);
}

/**
 * The name a stand-in gives its hidden input: its text, else the text of
 * the input's parent when that is short (`<input><span class=box></span> Newsletter`).
 */
function standInText(input: Element, standIn: Element): string {
  const own = fold(standIn.textContent ?? "");
  if (own) return own;
  const around = fold(input.parentElement?.textContent ?? "");
  return around.length <= 80 ? around : "";
}

/** Longest link target shown, in characters. */
const MAX_HREF = 80;

/**
 * Where a link goes, compactly: path, query and fragment on the document's
 * own origin, origin and path elsewhere; nothing for script links.
 */
function compactHref(el: Element, pass: Pass): string {
  // The browser's resolved `href` spares parsing a URL per link.
  let href = (el as HTMLAnchorElement).href;
  if (typeof href !== "string") href = el.getAttribute("href") ?? "";
  if (!href.startsWith("http")) {
    return /^javascript:/i.test(href) ? "" : clip(href, MAX_HREF);
  }
  const hash = href.indexOf("#");
  const bare = hash === -1 ? href : href.slice(0, hash);
  if (bare === pass.here) return hash === -1 ? "" : href.slice(hash); // this page: its fragment
  const { origin } = pass;
  if (origin && href.startsWith(origin) && href.charCodeAt(origin.length) === 47) {
    return clip(href.slice(origin.length), MAX_HREF);
  }
  return clip(href.replace(/^https?:\/\//, ""), MAX_HREF);
}

/** Lower-case letters and digits only, for comparing a name with a path. */
function squash(text: string): string {
  return text.toLowerCase().replace(/[^\p{L}\p{N}]+/gu, "");
}

/**
 * Whether a link's name already says where it goes: the target's last
 * path segment, decoded and without an extension, spells the name
 * (`"Copper Sky"` → `#/film/Copper-Sky`, `"Projects"` → `/projects`);
 * an in-page anchor (`#year`) never does.
 */
function saysTarget(href: string, name: string): boolean {
  const bare = href.replace(/[?].*$/, "").replace(/\/+$/, "");
  const slash = bare.lastIndexOf("/");
  // An in-page anchor (`#year`) says something the name does not: it stays.
  if (slash < 0 || bare.indexOf("#", slash) >= 0) return false;
  let last = bare.slice(slash + 1);
  try {
    last = decodeURIComponent(last);
  } catch {
    // a malformed escape: compare as written
  }
  last = last.replace(/\.[a-z0-9]{1,5}$/i, "");
  const target = squash(last);
  return target !== "" && target === squash(name);
}

/** Option labels of a select, group labels folded in as `group/option`, at most 25. */
function optionsOf(el: Element, maxText: number): string[] {
  const out: string[] = [];
  const options = el.querySelectorAll("option");
  for (let i = 0; i < options.length && out.length < 25; i++) {
    const option = options[i]!;
    const group = option.parentElement?.localName === "optgroup"
      ? option.parentElement.getAttribute("label")
      : null;
    const label = fold(option.getAttribute("label") ?? option.textContent ?? "");
    out.push(clip(group ? `${fold(group)}/${label}` : label, maxText));
  }
  if (options.length > out.length) out.push(`… ${options.length - out.length} more`);
  return out;
}
