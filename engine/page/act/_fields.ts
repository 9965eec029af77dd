/**
 * The actions' other in-page functions: focus and caret, scrolling, file
 * inputs, and reading, setting and watching a field's value (the pickers'
 * are in `_pickers.ts`). See `ActFunctions` in `engine/act/_in_page.ts` for each
 * contract.
 *
 * @module
 */
import type { ScrollByResult, ViewportSize } from "../../act/_in_page.ts";
import type { FieldState, FieldWatch } from "../../act/_typing.ts";
import { activeOf, controlOf, viewOf, viewportOf } from "./_dom.ts";
import { shadowOf } from "../shadow_roots.ts";

/** The page's locale: the document's `lang`, else the browser's language. */
export function pageLocale(this: Element): string {
  const doc = this.ownerDocument;
  return doc.documentElement.lang || viewOf(this).navigator.language || "en-US";
}

/** The next ancestor for scrolling: the slot it is assigned to, its parent, or its shadow host. */
function scrollParent(e: Element): Element | null {
  return e.assignedSlot || e.parentElement || ((e.parentNode as ShadowRoot | null)?.host ?? null);
}

/** A short description of a scroll container: tag, id or first class. */
function short(e: Element): string {
  return e.localName +
    (e.id
      ? "#" + e.id
      : typeof e.className === "string" && e.className.trim()
      ? "." + e.className.trim().split(/\s+/)[0]
      : "");
}

/** Scrolls the element or its nearest ancestor that scrolls on that axis. */
export function scrollBy(
  this: Element,
  vertical: boolean,
  sign: number,
  amount: number,
): ScrollByResult {
  return scrollFrom(this, vertical, sign, amount);
}

function scrollFrom(el: Element, vertical: boolean, sign: number, amount: number): ScrollByResult {
  const doc = el.ownerDocument;
  const win = viewOf(el);
  const scrolls = (e: Element) => {
    const cs = win.getComputedStyle(e);
    if (vertical) {
      return /(auto|scroll|overlay)/.test(cs.overflowY) && e.scrollHeight > e.clientHeight;
    }
    return /(auto|scroll|overlay)/.test(cs.overflowX) && e.scrollWidth > e.clientWidth;
  };
  let box: Element | null = el;
  while (box && box !== doc.documentElement && box !== doc.body && !scrolls(box)) {
    box = scrollParent(box);
  }
  if (!box || box === doc.documentElement || box === doc.body) return { kind: "none" };
  const size = vertical ? box.clientHeight : box.clientWidth;
  const delta = sign * (amount > 0 ? amount : Math.round(size * 0.8));
  const before = [box.scrollLeft, box.scrollTop];
  box.scrollBy({ left: vertical ? 0 : delta, top: vertical ? delta : 0, behavior: "instant" });
  if (box.scrollLeft === before[0] && box.scrollTop === before[1]) {
    return { kind: "at-end", container: short(box) };
  }
  return {
    kind: "scrolled",
    container: short(box),
    x: Math.round(box.scrollLeft),
    y: Math.round(box.scrollTop),
  };
}

/** The document element of the element's document. */
export function documentElement(this: Element): Element {
  return this.ownerDocument.documentElement;
}

/** Focuses the element (or the focusable it labels); returns whether it has focus. */
export function focus(this: Element): boolean {
  const el = controlOf(this) as HTMLElement;
  const active = () => activeOf(el.ownerDocument);
  if (active() !== el && !el.contains(active())) el.focus({ preventScroll: true });
  const now = active();
  return now === el || el.contains(now);
}

/**
 * Characters editors put in an empty field that a person does not see as
 * typed: zero-width spaces, joiners and the byte-order mark (Gutenberg's
 * rich text pads an empty paragraph with U+FEFF).
 */
const INVISIBLE = /[\u200b-\u200d\u2060\ufeff]/g;

/**
 * Whether the editable holds text a person sees as typed content. In a
 * contenteditable, text inside parts that are not editable
 * (`contenteditable="false"`: placeholders, widgets) and zero-width padding
 * do not count, and neither does a lone `<br>` (the browser's and editors'
 * stand-in for an empty line): an empty Gutenberg paragraph holds U+FEFF
 * and a placeholder span, and clearing it would delete the block.
 */
export function hasText(this: Element): boolean {
  const el = controlOf(this);
  const value = (el as HTMLInputElement).value;
  if ("value" in el && typeof value === "string") return value.length > 0;
  // A tree walker's FILTER_REJECT skips the part's whole subtree.
  const walker = el.ownerDocument.createTreeWalker(
    el,
    NodeFilter.SHOW_ELEMENT | NodeFilter.SHOW_TEXT,
    (node) =>
      node.nodeType === Node.ELEMENT_NODE &&
        (node as Element).getAttribute("contenteditable") === "false"
        ? NodeFilter.FILTER_REJECT
        : NodeFilter.FILTER_ACCEPT,
  );
  let breaks = 0;
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    if (node.nodeType === Node.TEXT_NODE) {
      if ((node.textContent || "").replace(INVISIBLE, "").length > 0) return true;
    } else if ((node as Element).localName === "br") breaks++;
  }
  return breaks > 1;
}

/**
 * Selects a contenteditable's own contents with a DOM selection (true), so
 * that clearing it cannot reach past the field: editors bind Control+A to
 * "select all blocks" (Gutenberg), and Backspace then deletes them. False for
 * inputs and textareas, where Control+A selects only the value.
 */
export function selectContents(this: Element): boolean {
  const el = controlOf(this) as HTMLElement;
  if (!el.isContentEditable || "value" in el) return false;
  const selection = el.ownerDocument.getSelection();
  if (!selection) return false;
  const range = el.ownerDocument.createRange();
  range.selectNodeContents(el);
  selection.removeAllRanges();
  selection.addRange(range);
  return true;
}

/** Puts the caret at the end of an editable. */
export function caretToEnd(this: Element): void {
  const el = controlOf(this) as HTMLInputElement;
  if (typeof el.setSelectionRange === "function" && typeof el.value === "string") {
    try {
      el.setSelectionRange(el.value.length, el.value.length);
      return;
    } catch {
      // Not a text input (a number field): the caret stays where it is.
    }
  }
  if (el.isContentEditable) {
    const selection = el.ownerDocument.getSelection();
    const range = el.ownerDocument.createRange();
    range.selectNodeContents(el);
    range.collapse(false);
    if (!selection) return;
    selection.removeAllRanges();
    selection.addRange(range);
  }
}

/**
 * Whitespace folded and trimmed.
 *
 * @param s a text, or nothing
 * @returns the text with each run of whitespace one space, without spaces at its ends
 */
export function fold(s: string | null | undefined): string {
  return (s || "").replace(/\s+/g, " ").trim();
}

/** Scrolls the element into view, centred. */
export function scrollIntoView(this: Element): boolean {
  if (!this.isConnected) return false;
  this.scrollIntoView({ block: "center", inline: "center", behavior: "instant" });
  return true;
}

/**
 * The element as a file input: itself, the control of a label, or the one
 * file input inside it (a drop zone holding its hidden input).
 */
export function fileInput(this: Element): Element | null {
  const el = controlOf(this);
  const isFile = (node: Element) =>
    node.localName === "input" && ((node as HTMLInputElement).type || "").toLowerCase() === "file";
  if (isFile(el)) return el;
  const inner = this.querySelectorAll('input[type="file" i]');
  return inner.length === 1 ? inner[0]! : null;
}

/** Words of a control that takes files: a drop zone, an "Attach" or "Choose a photo" button. */
const UPLOAD_WORDS =
  /upload|file|drop|attach|browse|choose|photo|image|picture|avatar|import|document|media/i;

/**
 * Whether the element says it takes files (its text, label, title, class or
 * id), so that clicking it to open a file chooser, or dropping files on it,
 * is what a person wanting to give it files does.
 */
export function takesFiles(this: Element): boolean {
  const words = [
    (this as HTMLElement).innerText ?? this.textContent ?? "",
    this.getAttribute("aria-label") ?? "",
    this.getAttribute("title") ?? "",
    this.getAttribute("class") ?? "",
    this.id,
  ].join(" ");
  return UPLOAD_WORDS.test(words.slice(0, 2000));
}

/** The viewport size of the element's document. */
export function viewport(this: Element): ViewportSize {
  return viewportOf(this.ownerDocument);
}

/** Reads the field's state. */
export function fieldState(this: Element): FieldState {
  const el = controlOf(this);
  const tag = el.localName;
  const field = tag === "input" || tag === "textarea";
  const input = el as HTMLInputElement;
  return {
    connected: el.isConnected,
    disabled: typeof el.matches === "function" && el.matches(":disabled"),
    tag,
    type: tag === "input" ? String(input.type || "text").toLowerCase() : "",
    value: field ? String(input.value) : null,
    text: field ? null : String((el as HTMLElement).innerText ?? el.textContent ?? ""),
    maxLength: field && typeof input.maxLength === "number" ? input.maxLength : -1,
  };
}

/** Sets an input's or textarea's value through its prototype's native setter, as a user's edit. */
export function setValue(this: Element, value: string): boolean {
  const el = controlOf(this);
  const view = viewOf(el);
  const proto = el.localName === "textarea"
    ? view.HTMLTextAreaElement.prototype
    : view.HTMLInputElement.prototype;
  const setter = Object.getOwnPropertyDescriptor(proto, "value")?.set;
  if (!setter) return false;
  setter.call(el, value);
  el.dispatchEvent(
    new view.InputEvent("input", {
      bubbles: true,
      composed: true,
      inputType: "insertReplacementText",
      data: value,
    }),
  );
  el.dispatchEvent(new view.Event("change", { bubbles: true }));
  return true;
}

/** The editable element that has focus in the element's document, or `null`. */
export function focusedEditable(this: Element): Element | null {
  const a = activeOf(this.ownerDocument);
  if (!a || a === this.ownerDocument.body) return null;
  const type = (a.getAttribute("type") || "").toLowerCase();
  const editable = a.localName === "textarea" || (a as HTMLElement).isContentEditable ||
    (a.localName === "input" &&
      !/^(checkbox|radio|submit|button|reset|image|file|hidden)$/.test(type));
  return editable && !a.matches(":disabled") && !(a as HTMLInputElement).readOnly ? a : null;
}

/** The focus each picker saw before an action's click, by picker (kept on the world's global). */
function focusMarks(): WeakMap<Element, Element | null> {
  const g = globalThis as unknown as { __webservFocusMarks?: WeakMap<Element, Element | null> };
  return g.__webservFocusMarks ??= new WeakMap();
}

/** Notes where the focus is before `select` clicks the picker (`this`). */
export function markFocus(this: Element): boolean {
  focusMarks().set(this, activeOf(this.ownerDocument));
  return true;
}

/**
 * The editable element with focus, as {@linkcode focusedEditable}, when it
 * is the picker's (`this`): the picker itself or a field inside it, or one
 * the focus moved to since {@linkcode markFocus} (its popup's search box).
 * A field that kept the focus through the click (the page kept it there)
 * is another control's, which typing to filter the picker must not reach.
 * What the field holds is selected, so that the label typed next replaces
 * it as a person's typing would: a combobox that is its own search field
 * (Awesomplete's) holds the last choice, which a label typed after it ran into.
 */
export function pickerField(this: Element): Element | null {
  const focused = focusedEditable.call(this);
  const field = !focused || focused === this || this.contains(focused)
    ? focused
    : focused === focusMarks().get(this)
    ? null
    : focused;
  if (
    field && (field as HTMLInputElement).value &&
    typeof (field as HTMLInputElement).select === "function"
  ) {
    (field as HTMLInputElement).select();
  }
  return field;
}

/**
 * Where the focus is for typing into the element: `outside` it, inside it
 * with the caret `at-end` of what it holds, or `inside` it elsewhere (a
 * caret mid-text, a selection).
 */
export function focusState(this: Element): "outside" | "at-end" | "inside" {
  const el = controlOf(this);
  const doc = el.ownerDocument;
  const active = activeOf(doc);
  if (!active || (active !== el && !el.contains(active))) return "outside";
  // The body is the active element of a document nothing in has focus: an
  // editor's frame (TinyMCE's body) the keys do not reach until clicked.
  if (active === doc.body && !doc.hasFocus()) return "outside";
  if (active.localName === "input" || active.localName === "textarea") {
    const field = active as HTMLInputElement;
    try {
      const end = field.value.length;
      return field.selectionStart === end && field.selectionEnd === end ? "at-end" : "inside";
    } catch {
      return "inside";
    }
  }
  const selection = el.ownerDocument.getSelection();
  if (!selection || selection.rangeCount === 0) return "inside";
  const range = selection.getRangeAt(0);
  if (!range.collapsed || !el.contains(range.endContainer)) return "inside";
  const rest = el.ownerDocument.createRange();
  rest.selectNodeContents(el);
  rest.setStart(range.endContainer, range.endOffset);
  return rest.toString().replace(/[\s\u200B-\u200D\u2060\uFEFF]+/g, "") === ""
    ? "at-end"
    : "inside";
}

/** A field watch: what it saw so far, and how to stop it. */
export interface Watch {
  /** Stops the watch and returns what it saw. */
  stop(): FieldWatch;
}

/** Starts watching a field while it is typed into. */
export function watchField(this: Element): Watch {
  const el = controlOf(this);
  const doc = el.ownerDocument;
  let root: Element = el;
  for (let i = 0; i < 3; i++) {
    const up = root.parentElement || ((root.parentNode as ShadowRoot | null)?.host ?? null);
    if (!up || up === doc.body || up === doc.documentElement || root.localName === "form") break;
    root = up;
  }
  const added: string[] = [];
  let changed = false;
  const take = (records: MutationRecord[]) => {
    for (const r of records) {
      for (const n of Array.from(r.addedNodes)) {
        const t = n.nodeType === 1
          ? ((n as HTMLElement).innerText || n.textContent || "")
          : n.nodeType === 3
          ? n.textContent || ""
          : "";
        if (t.trim()) added.push(t.replace(/\s+/g, " ").trim());
      }
    }
  };
  const observer = new MutationObserver(take);
  observer.observe(root, { childList: true, subtree: true });
  const onChange = () => {
    changed = true;
  };
  el.addEventListener("change", onChange);
  return {
    stop() {
      take(observer.takeRecords());
      observer.disconnect();
      el.removeEventListener("change", onChange);
      return { added: added.slice(0, 50), changed };
    },
  };
}

/**
 * What a drag can change, as one string to compare before and after: where
 * the element is (a slider's handle, a card moved to another lane), its own
 * value and the values of the page's sliders and fields, and the text of the
 * page in reading order (a sorted list). Shadow roots count as the document
 * does: a web component's slider (Shoelace's) keeps its input, and the
 * tooltip that shows its value, inside one.
 */
export function dragMark(this: Element): string {
  const doc = this.ownerDocument;
  const r = this.getBoundingClientRect();
  const valueOf = (el: Element) =>
    el.getAttribute("aria-valuenow") ?? (el as HTMLInputElement).value ?? "";
  const values = [valueOf(this)];
  const texts = [doc.body ? (doc.body as HTMLElement).innerText ?? doc.body.textContent ?? "" : ""];
  const visit = (root: Document | ShadowRoot) => {
    const walker = doc.createTreeWalker(root, NodeFilter.SHOW_ELEMENT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      const el = node as Element;
      if (values.length <= 500 && el.matches("[aria-valuenow], input, select, textarea")) {
        values.push(valueOf(el));
      }
      const shadow = shadowOf(el);
      if (!shadow) continue;
      texts.push(shadow.textContent ?? "");
      visit(shadow);
    }
  };
  visit(doc);
  return `${Math.round(r.x)},${Math.round(r.y)}|${values.join("\u0001")}|${texts.join("\u0001")}`;
}

/** Stops a watch from `watchField` (`this`) and returns what it saw. */
export function readWatch(this: Watch): FieldWatch {
  return this.stop();
}
