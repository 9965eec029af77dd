/**
 * The actions' in-page functions for options: a native `<select>` set as a
 * person's pick sets it, ARIA options (or the items of an open popup) found
 * by label or value, a custom picker's visible face, and what a picker shows
 * as chosen. See `ActFunctions` in `engine/act/_in_page.ts` for each
 * contract.
 *
 * @module
 */
import type { SelectResult, ShownChoice } from "../../act/_in_page.ts";
import { srOnly } from "../layout.ts";
import { controlOf, visible } from "./_dom.ts";
import { fold } from "./_fields.ts";

/** Chooses an option of a native `<select>` by label or value, as a person's pick does. */
export function selectNative(this: Element, wanted: string, by: "label" | "value"): SelectResult {
  const el = controlOf(this);
  if (el.localName !== "select") return { kind: "not-select" };
  const select = el as HTMLSelectElement;
  const options = Array.from(select.options).filter((o) => !o.disabled);
  const key = (o: HTMLOptionElement) => by === "value" ? o.value : fold(o.label || o.text);
  const option = options.find((o) => key(o) === wanted) ||
    options.find((o) => key(o).toLowerCase() === fold(wanted).toLowerCase());
  if (!option) return { kind: "not-found", options: options.slice(0, 20).map(key) };
  if (!option.selected || select.value !== option.value) {
    option.selected = true;
    select.dispatchEvent(new Event("input", { bubbles: true, composed: true }));
    select.dispatchEvent(new Event("change", { bubbles: true }));
  }
  return { kind: "done", chosen: key(option) };
}

const PICKER_FIELD = '[role="combobox"], [aria-haspopup="listbox"]';

/** The one combobox field inside a box that holds no other control, else null. */
function soleField(box: Element): Element | null {
  const fields = box.querySelectorAll(PICKER_FIELD);
  if (fields.length !== 1) return null;
  return box.querySelectorAll("input, select, textarea, button, a[href]").length <= 1
    ? fields[0]!
    : null;
}

/**
 * Whether a person sees the element: a box of its own, painted (not
 * transparent, not hidden), and not parked beyond the page's top or left
 * edge where no scroll reaches (Tom Select's input at `left: -10000px`).
 */
function shows(e: Element): boolean {
  const r = e.getBoundingClientRect();
  const page = e.ownerDocument.documentElement.getBoundingClientRect();
  return r.width >= 2 && r.height >= 2 && r.right > page.left && r.bottom > page.top &&
    e.checkVisibility({ opacityProperty: true, visibilityProperty: true });
}

/**
 * The box a picker's combobox field sits in, holding no other control: the
 * widest such box up to four levels out, or null when the element is no
 * combobox text field or no box holds it alone.
 */
function fieldBox(field: Element): Element | null {
  if (!field.matches("input, textarea") || !field.matches(PICKER_FIELD)) return null;
  let box: Element | null = null;
  for (let up = field.parentElement, n = 0; up && n < 4; up = up.parentElement, n++) {
    if (up.localName === "label" || up.localName === "form" || up.localName === "body") break;
    if (soleField(up) !== field) break;
    box = up;
  }
  return box;
}

/** The combobox field of the custom picker the element stands for, or null. */
function pickerField(el: Element): Element | null {
  if (el.localName === "label") {
    const control = controlOf(el);
    return control !== el && control.matches(PICKER_FIELD) ? control : null;
  }
  if (el.matches(PICKER_FIELD)) return null;
  // The box, or an item shown inside it (two levels at most).
  let box: Element | null = el;
  for (let up = 0; box && up < 3; up++, box = box.parentElement) {
    const field = soleField(box);
    if (field) return field;
  }
  return null;
}

/** The face of the custom picker the element stands for, or null. */
export function pickerFace(this: Element): Element | null {
  const field = pickerField(this);
  // The widest box that holds the field alone, when it shows: a nearer one
  // may lie under the chosen item (Ant Design's search box under "Paris").
  const box = field && fieldBox(field);
  if (box && shows(box)) return box;
  let face = field;
  for (let up = 0; face && up < 4; up++, face = face.parentElement) {
    if (shows(face)) return face;
  }
  return null;
}

/** Finds an ARIA option by label or value; the option element, or the labels seen. */
export function findOption(
  this: Element,
  wanted: string,
  by: "label" | "value",
): Element | string[] {
  const doc = this.ownerDocument;
  const scopes: ParentNode[] = [];
  if ((this.getAttribute("role") || "") === "listbox") scopes.push(this);
  for (const attr of ["aria-controls", "aria-owns"]) {
    for (const id of (this.getAttribute(attr) || "").split(/\s+/)) {
      const scope = id && doc.getElementById(id);
      if (scope) scopes.push(scope);
    }
  }
  if (scopes.length === 0) scopes.push(doc);
  const options: Element[] = [];
  for (const scope of scopes) {
    for (const o of Array.from(scope.querySelectorAll('[role="option"]'))) {
      if (visible(o)) options.push(o);
    }
  }
  const key = (o: Element) =>
    by === "value"
      ? (o.getAttribute("data-value") ?? o.getAttribute("value") ?? fold(o.textContent))
      : fold(o.getAttribute("aria-label") || o.textContent);
  const match = options.find((o) => key(o) === wanted) ||
    options.find((o) => key(o).toLowerCase() === fold(wanted).toLowerCase());
  if (match) return match;
  // The list a person sees may be no ARIA options at all (Ant Design draws
  // plain items in a popup and keeps a hidden listbox of values for screen
  // readers): an item of the open popup that reads the label.
  const item = by === "label" ? popupItem(this, wanted) : null;
  return item || options.slice(0, 20).map(key);
}

/**
 * The element of an open popup (a box positioned absolute or fixed, not
 * around the control) whose text is `wanted`, as a person reads it; the
 * control's own box is left out (it shows the choice made before), but not
 * a popup inside it (nice-select draws its list in a box of the control's).
 */
function popupItem(control: Element, wanted: string): Element | null {
  const doc = control.ownerDocument;
  const view = doc.defaultView;
  if (!view || !doc.body) return null;
  const want = fold(wanted).toLowerCase();
  if (!want) return null;
  const own = fieldBox(control) ?? control;
  const walker = doc.createTreeWalker(doc.body, 4 /* NodeFilter.SHOW_TEXT */);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    if (fold((node as Text).data).toLowerCase() !== want) continue;
    const el = node.parentElement;
    if (!el || !visible(el)) continue;
    // A closed popup may stay in place, see-through (nice-select's): not open.
    if (
      typeof el.checkVisibility === "function" && !el.checkVisibility({ opacityProperty: true })
    ) {
      continue;
    }
    for (let up: Element | null = el; up && up !== doc.body; up = up.parentElement) {
      // Up to the control's own box with no popup on the way: what it shows as chosen.
      if (up === own) break;
      const position = view.getComputedStyle(up).position;
      if ((position === "absolute" || position === "fixed") && !up.contains(own)) return el;
    }
  }
  return null;
}

/**
 * What a picker shows as chosen: its own text, the fields inside it (a
 * combobox's input), the selected options of a native select it wraps or
 * controls (Choices.js keeps one in sync inside its box), and the options marked
 * selected in the lists it controls (a portal's list, by `aria-controls`).
 */
export function shownChoice(this: Element, wanted: string): ShownChoice {
  const doc = this.ownerDocument;
  const want = fold(wanted).toLowerCase();
  // A picker's search field shows the choice beside itself, not in its value
  // (react-select empties its input and shows "Vanilla" in the box around it).
  const parts: string[] = [shownText(fieldBox(this) ?? this)];
  const fields = Array.from(this.querySelectorAll("input, textarea, select"));
  if (this.matches("input, textarea, select")) fields.unshift(this);
  for (const attr of ["aria-controls", "aria-owns"]) {
    for (const id of (this.getAttribute(attr) || "").split(/\s+/)) {
      const scope = id && doc.getElementById(id);
      if (!scope) continue;
      if (scope.localName === "select") fields.push(scope);
      for (const o of Array.from(scope.querySelectorAll('[role="option"][aria-selected="true"]'))) {
        parts.push(fold(o.getAttribute("aria-label") || o.textContent));
      }
    }
  }
  const chosen: string[] = [];
  for (const field of fields.slice(0, 20)) {
    if (field.localName === "select") {
      for (const o of Array.from((field as HTMLSelectElement).selectedOptions ?? [])) {
        chosen.push(fold(o.label || o.text));
      }
    } else parts.push(fold((field as HTMLInputElement).value ?? ""));
  }
  const mark = [...parts, ...chosen].join("\u0001");
  // A native select kept in sync is the control's value: what the page took, whatever its
  // open list highlights (Choices.js marks the option under the pointer `aria-selected`).
  if (fields.some((field) => field.localName === "select")) {
    const exact = chosen.some((label) => label.toLowerCase() === want);
    return { shows: exact, exact, mark };
  }
  const lower = parts.map((part) => part.toLowerCase());
  // Chips and "Selected: X" count as showing it, a longer word that starts alike does not.
  const word = new RegExp(`(^|[^\\p{L}\\p{N}])${escapeRegExp(want)}($|[^\\p{L}\\p{N}])`, "u");
  const exact = lower.some((part) => part === want);
  return { shows: exact || (want !== "" && word.test(lower[0]!)), exact, mark };
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/**
 * The text a control shows, leaving out options not chosen (a dropdown that
 * lives inside the combobox, open or not) and what is not rendered.
 */
function shownText(el: Element): string {
  const parts: string[] = [];
  const walk = (node: Element): void => {
    for (let kid = node.firstChild; kid; kid = kid.nextSibling) {
      if (kid.nodeType === 3) parts.push((kid as Text).data);
      else if (kid.nodeType === 1) {
        const child = kid as Element;
        const role = child.getAttribute("role");
        if (
          role === "option" && (child.getAttribute("aria-selected") !== "true" ||
            child.getAttribute("aria-disabled") === "true")
        ) continue;
        if (child.localName === "script" || child.localName === "style") continue;
        if (typeof child.checkVisibility === "function" && !child.checkVisibility()) continue;
        // Words for a screen reader only (a picker's live region) are not what it shows.
        if (srOnly(child)) continue;
        parts.push(" ");
        walk(child);
        parts.push(" ");
      }
    }
  };
  walk(el);
  return fold(parts.join("")).slice(0, 2000);
}
