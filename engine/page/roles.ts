/**
 * Roles, names, values and states of elements, after WAI-ARIA 1.2
 * (https://www.w3.org/TR/wai-aria-1.2/), HTML-AAM
 * (https://www.w3.org/TR/html-aam-1.0/) and, in simplified form, the
 * accessible name computation (https://www.w3.org/TR/accname-1.2/).
 *
 * Page code: DOM APIs only, no layout.
 *
 * @module
 */

/** ARIA roles an agent can act on directly. */
export const INTERACTIVE_ROLES: ReadonlySet<string> = new Set([
  "button",
  "link",
  "checkbox",
  "radio",
  "switch",
  "tab",
  "menuitem",
  "menuitemcheckbox",
  "menuitemradio",
  "option",
  "combobox",
  "textbox",
  "searchbox",
  "spinbutton",
  "slider",
  "scrollbar",
  "treeitem",
  "gridcell",
]);

/** Roles whose name comes from their content when nothing else names them. */
export const NAME_FROM_CONTENT: ReadonlySet<string> = new Set([
  "button",
  "link",
  "checkbox",
  "radio",
  "switch",
  "tab",
  "menuitem",
  "menuitemcheckbox",
  "menuitemradio",
  "option",
  "treeitem",
  "gridcell",
  "cell",
  "columnheader",
  "rowheader",
  "heading",
  "clickable",
  "tooltip",
]);

/** Roles kept as a line of structure even without an id. */
export const STRUCTURE_ROLES: ReadonlySet<string> = new Set([
  "heading",
  "navigation",
  "main",
  "banner",
  "contentinfo",
  "complementary",
  "search",
  "form",
  "dialog",
  "alertdialog",
  "alert",
  "table",
  "grid",
  "treegrid",
  "row",
  "cell",
  "columnheader",
  "rowheader",
  "listbox",
  "menu",
  "menubar",
  "tablist",
  "tabpanel",
  "tree",
  "radiogroup",
  "toolbar",
  "group",
  "region",
  "img",
  "progressbar",
  "meter",
  "status",
  "list",
  "listitem",
  "canvas",
]);

const INPUT_ROLES: Record<string, string> = {
  button: "button",
  submit: "button",
  reset: "button",
  image: "button",
  checkbox: "checkbox",
  radio: "radio",
  range: "slider",
  number: "spinbutton",
  search: "searchbox",
  file: "button",
  color: "button",
};

const TAG_ROLES: Record<string, string> = {
  button: "button",
  select: "combobox",
  textarea: "textbox",
  summary: "button",
  option: "option",
  h1: "heading",
  h2: "heading",
  h3: "heading",
  h4: "heading",
  h5: "heading",
  h6: "heading",
  nav: "navigation",
  main: "main",
  aside: "complementary",
  search: "search",
  dialog: "dialog",
  table: "table",
  tr: "row",
  td: "cell",
  th: "columnheader",
  ul: "list",
  ol: "list",
  li: "listitem",
  fieldset: "group",
  details: "group",
  progress: "progressbar",
  meter: "meter",
  canvas: "canvas",
  output: "status",
};

/**
 * The element's role: the first token of `role`, else the implicit role of
 * its tag, else `""`.
 *
 * @param el the element
 * @param tag its lowercase local name
 * @param explicit the `role` attribute, when the caller has read it already
 * @returns the role, or `""` for a generic element
 */
export function roleOf(
  el: Element,
  tag: string,
  explicit: string | null = el.getAttribute("role"),
): string {
  if (explicit) {
    const first = explicit.trim().split(/\s+/)[0] ?? "";
    if (first && first !== "none" && first !== "presentation" && first !== "generic") return first;
    if (first) return "";
  }
  switch (tag) {
    case "a":
    case "area":
      return el.hasAttribute("href") ? "link" : "";
    case "input": {
      const type = (el.getAttribute("type") ?? "text").toLowerCase();
      if (type === "hidden") return "";
      const mapped = INPUT_ROLES[type];
      if (mapped) return mapped;
      return el.hasAttribute("list") ? "combobox" : "textbox";
    }
    case "select":
      return el.hasAttribute("multiple") || Number(el.getAttribute("size") ?? "0") > 1
        ? "listbox"
        : "combobox";
    case "img":
      return el.getAttribute("alt") === "" ? "" : "img";
    case "header":
    case "footer":
      return el.parentElement?.closest("article,aside,main,nav,section") ? "" : (
        tag === "header" ? "banner" : "contentinfo"
      );
    case "section":
      return el.hasAttribute("aria-label") || el.hasAttribute("aria-labelledby") ? "region" : "";
    case "form":
      return "form";
    case "svg":
      return "";
    default:
      return TAG_ROLES[tag] ?? "";
  }
}

/** Whether the element is a native control an agent can act on. */
export function isNativeControl(el: Element, tag: string): boolean {
  switch (tag) {
    case "a":
    case "area":
      return el.hasAttribute("href");
    case "button":
    case "select":
    case "textarea":
      return true;
    case "input":
      return (el.getAttribute("type") ?? "").toLowerCase() !== "hidden";
    case "summary":
      return el.parentElement?.localName === "details" &&
        el.parentElement.querySelector("summary") === el;
    default:
      return false;
  }
}

/**
 * Folds whitespace runs to one space and trims.
 *
 * @param text any text
 * @returns the folded text
 */
export function fold(text: string): string {
  const trimmed = text.trim();
  // Most text is either blank or already folded: skip the regex then.
  return trimmed && /\s\s|[\t\n\r\f]/.test(trimmed) ? trimmed.replace(/\s+/g, " ") : trimmed;
}

/**
 * Cuts text to `max` characters, marking the cut with an ellipsis.
 *
 * @param text the text
 * @param max the longest result
 * @returns the text, cut if needed
 */
export function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, Math.max(0, max - 1))}…`;
}

/** Text of elements referenced by `aria-labelledby`, looked up in the element's tree. */
function labelledBy(el: Element): string {
  const ids = el.getAttribute("aria-labelledby");
  if (!ids) return "";
  const root = el.getRootNode() as Document | ShadowRoot;
  const parts: string[] = [];
  for (const id of ids.trim().split(/\s+/)) {
    const ref = typeof root.getElementById === "function"
      ? root.getElementById(id)
      : el.ownerDocument.getElementById(id);
    if (ref) parts.push(ref.getAttribute("aria-label") ?? referencedText(ref));
  }
  return fold(parts.join(" "));
}

/**
 * An element's text as `aria-labelledby` reads it: its text content, with a
 * select in it read as its chosen options only (Pikaday's calendar is
 * labelled by a title holding its month and year selects: every month's
 * name ran into the grid's name).
 */
function referencedText(ref: Element): string {
  if (!ref.querySelector("select")) return ref.textContent ?? "";
  let out = "";
  const visit = (node: Node): void => {
    for (let child = node.firstChild; child; child = child.nextSibling) {
      if (child.nodeType === 3) out += (child as Text).data;
      else if (child.nodeType !== 1) continue;
      else if ((child as Element).localName === "select") {
        const chosen = Array.from((child as HTMLSelectElement).selectedOptions ?? []);
        out += ` ${chosen.map((option) => option.text).join(" ")} `;
      } else visit(child);
    }
  };
  visit(ref);
  return out;
}

/**
 * Text of the labels of a labelable element, without the control's own text.
 *
 * @param el a labelable element (an input, a select, a button, …)
 * @returns the folded text of its labels, or `""`
 */
export function labelText(el: Element): string {
  const labels = (el as HTMLInputElement).labels;
  const parts: string[] = [];
  if (labels && labels.length) {
    for (const label of Array.from(labels)) parts.push(textWithout(label, el));
  } else {
    // linkedom and detached trees: fall back to the two label forms by hand.
    const id = el.getAttribute("id");
    const root = el.getRootNode() as Document | ShadowRoot;
    if (id && typeof root.querySelector === "function") {
      const forLabel = root.querySelector(`label[for="${cssEscape(id)}"]`);
      if (forLabel) parts.push(textWithout(forLabel, el));
    }
    const wrapping = el.closest("label");
    if (wrapping) parts.push(textWithout(wrapping, el));
  }
  return fold(parts.join(" "));
}

function cssEscape(value: string): string {
  return value.replace(/["\\]/g, "\\$&");
}

/** Text content of `root` leaving out `skip` and hidden bits such as scripts. */
function textWithout(root: Element, skip: Element): string {
  let out = "";
  const visit = (node: Node): void => {
    for (let child = node.firstChild; child; child = child.nextSibling) {
      if (child === skip) continue;
      if (child.nodeType === 3) out += (child as Text).data;
      else if (child.nodeType === 1) {
        const tag = (child as Element).localName;
        if (tag === "script" || tag === "style" || tag === "select" || tag === "textarea") continue;
        if (tag === "input") continue;
        out += " ";
        visit(child);
        out += " ";
      }
    }
  };
  visit(root);
  return out;
}

/**
 * The accessible name from attributes and labels, before content: by
 * precedence aria-labelledby, aria-label, associated label, alt, value of a
 * button input, title, placeholder.
 *
 * @param el the element
 * @param tag its lowercase local name
 * @param options `title`: whether `title` and `placeholder` may name it (default true); roles
 *   named from their content pass false, as content comes before `title` (accname 1.2 step 2I)
 * @returns the folded name, or `""` when none of those name it
 */
export function nameFromAttributes(
  el: Element,
  tag: string,
  options: { title?: boolean } = {},
): string {
  const byId = labelledBy(el);
  if (byId) return byId;
  const aria = fold(el.getAttribute("aria-label") ?? "");
  if (aria) return aria;
  if (
    tag === "input" || tag === "select" || tag === "textarea" || tag === "meter" ||
    tag === "progress" || tag === "output"
  ) {
    const type = (el.getAttribute("type") ?? "").toLowerCase();
    if (tag === "input" && (type === "submit" || type === "button" || type === "reset")) {
      const value = fold(el.getAttribute("value") ?? "");
      if (value) return value;
      if (type !== "button") return type === "submit" ? "Submit" : "Reset";
    }
    const label = labelText(el);
    if (label) return label;
  }
  if (tag === "img" || tag === "area" || (tag === "input" && el.getAttribute("type") === "image")) {
    const alt = fold(el.getAttribute("alt") ?? "");
    if (alt) return alt;
  }
  if (tag === "fieldset") {
    const legend = el.querySelector("legend");
    if (legend) return fold(legend.textContent ?? "");
  }
  if (tag === "table") {
    const caption = el.querySelector("caption");
    if (caption) return fold(caption.textContent ?? "");
  }
  if (options.title === false) return "";
  const title = fold(el.getAttribute("title") ?? "");
  if (title) return title;
  return fold(el.getAttribute("placeholder") ?? el.getAttribute("aria-placeholder") ?? "");
}

/**
 * The name of an `<svg>` used as an icon: its `aria-label` or `<title>`.
 *
 * @param el the svg element
 * @returns the folded name, or `""`
 */
export function svgName(el: Element): string {
  const aria = el.getAttribute("aria-label");
  if (aria) return fold(aria);
  for (let child = el.firstElementChild; child; child = child.nextElementSibling) {
    if (child.localName === "title") return fold(child.textContent ?? "");
  }
  return "";
}

/**
 * The value shown for a control: the text of an input or textarea
 * (passwords masked), the selected options of a select, ARIA value
 * attributes otherwise.
 *
 * @param el the element
 * @param tag its lowercase local name
 * @param role its role
 * @returns the value, or `undefined` when the element has none to show
 */
export function valueOf(el: Element, tag: string, role: string): string | undefined {
  if (tag === "input") {
    const input = el as HTMLInputElement;
    const type = (input.type || el.getAttribute("type") || "text").toLowerCase();
    if (
      type === "checkbox" || type === "radio" || type === "submit" || type === "button" ||
      type === "reset" || type === "image" || type === "file"
    ) {
      if (type === "file") {
        const files = input.files;
        return files && files.length ? Array.from(files, (f) => f.name).join(", ") : undefined;
      }
      return undefined;
    }
    const value = input.value ?? el.getAttribute("value") ?? "";
    if (type === "password") return value ? "•".repeat(Math.min(value.length, 8)) : undefined;
    return value === "" ? undefined : value;
  }
  if (tag === "textarea") {
    const value = (el as HTMLTextAreaElement).value ?? el.textContent ?? "";
    return value === "" ? undefined : value;
  }
  if (tag === "select") {
    const select = el as HTMLSelectElement;
    const options = select.options ? Array.from(select.options) : [];
    const chosen = options.filter((o) => o.selected).map((o) => fold(o.label || o.text || ""));
    return chosen.length ? chosen.join(", ") : undefined;
  }
  const now = el.getAttribute("aria-valuetext") ?? el.getAttribute("aria-valuenow");
  if (now !== null && now !== "") return now;
  if (role === "combobox" || role === "textbox" || role === "searchbox") {
    if ((el as HTMLElement).isContentEditable || el.getAttribute("contenteditable") !== null) {
      return undefined;
    }
  }
  return undefined;
}

/**
 * States shown on an element's line: checked, selected, expanded or
 * collapsed, pressed, disabled, required, readonly, multiple, min and max.
 *
 * @param el the element
 * @param tag its lowercase local name
 * @param role its role
 * @param disabled whether it is disabled, when the caller knows already
 * @returns the states, in a fixed order
 */
export function statesOf(
  el: Element,
  tag: string,
  role: string,
  disabled = isDisabled(el, tag),
): string[] {
  const states: string[] = [];
  const input = el as HTMLInputElement;
  if (tag === "input" && (input.type === "checkbox" || input.type === "radio")) {
    if (input.indeterminate) states.push("mixed");
    else if (checkedAsShown(input)) states.push("checked");
  } else {
    const checked = el.getAttribute("aria-checked");
    if (checked === "true") states.push("checked");
    else if (checked === "mixed") states.push("mixed");
  }
  if (
    tag === "option"
      ? (el as HTMLOptionElement).selected
      : el.getAttribute("aria-selected") === "true"
  ) {
    states.push("selected");
  }
  const expanded = el.getAttribute("aria-expanded");
  if (expanded === "true") states.push("expanded");
  else if (expanded === "false") states.push("collapsed");
  else if (tag === "summary" && el.parentElement) {
    states.push(el.parentElement.hasAttribute("open") ? "expanded" : "collapsed");
  }
  const pressed = el.getAttribute("aria-pressed");
  if (pressed === "true") states.push("pressed");
  if (disabled) states.push("disabled");
  if (
    (tag === "input" || tag === "select" || tag === "textarea") && el.hasAttribute("required") ||
    el.getAttribute("aria-required") === "true"
  ) {
    states.push("required");
  }
  if (
    (tag === "input" || tag === "textarea") && el.hasAttribute("readonly") ||
    el.getAttribute("aria-readonly") === "true"
  ) {
    states.push("readonly");
  }
  if (tag === "select" && el.hasAttribute("multiple")) states.push("multiple");
  if (role === "slider" || role === "spinbutton" || tag === "input") {
    const min = el.getAttribute(tag === "input" ? "min" : "aria-valuemin");
    const max = el.getAttribute(tag === "input" ? "max" : "aria-valuemax");
    if (min !== null && min !== "") states.push(`min=${min}`);
    if (max !== null && max !== "") states.push(`max=${max}`);
  }
  // What a field takes, so an agent knows what to type (`type` sets a date
  // through its value in this format).
  const format = tag === "input"
    ? INPUT_FORMATS[(el.getAttribute("type") ?? "").toLowerCase()]
    : undefined;
  if (format !== undefined) states.push(...format);
  return states;
}

/** The input types shown on the line, with the format each takes. */
const INPUT_FORMATS: Record<string, string[]> = {
  date: ["type=date", "format=YYYY-MM-DD"],
  time: ["type=time", "format=HH:MM"],
  "datetime-local": ["type=datetime-local", "format=YYYY-MM-DDTHH:MM"],
  month: ["type=month", "format=YYYY-MM"],
  week: ["type=week", "format=YYYY-Www"],
  email: ["type=email"],
  tel: ["type=tel"],
  url: ["type=url"],
  color: ["type=color", "format=#rrggbb"],
};

/**
 * Whether the element is disabled: a disabled form control (also through a
 * disabled fieldset) or `aria-disabled="true"` on it or an ancestor.
 *
 * @param el the element
 * @param tag its lowercase local name
 * @returns whether it is disabled
 */
export function isDisabled(el: Element, tag: string): boolean {
  if (
    tag === "button" || tag === "input" || tag === "select" || tag === "textarea" ||
    tag === "option" || tag === "optgroup" || tag === "fieldset"
  ) {
    if (el.hasAttribute("disabled")) return true;
    try {
      if (el.matches(":disabled")) return true;
    } catch {
      // a DOM without :disabled; the fieldset walk below decides
    }
    const fieldset = el.parentElement?.closest("fieldset[disabled]");
    if (fieldset) {
      const legend = fieldset.querySelector("legend");
      if (!legend || !legend.contains(el)) return true;
    }
  }
  return el.closest('[aria-disabled="true"]') !== null;
}

/**
 * Whether `text` is `name` or a run of whole words of it.
 *
 * @param name what an element is called
 * @param text words found beside it
 * @returns true when the words say nothing the name does not
 */
export function saidIn(name: string, text: string): boolean {
  if (!text) return false;
  if (text === name) return true;
  const at = name.indexOf(text);
  if (at < 0) return false;
  const before = at === 0 ? " " : name[at - 1]!, after = name[at + text.length] ?? " ";
  return !/[\p{L}\p{N}]/u.test(before) && !/[\p{L}\p{N}]/u.test(after);
}

/**
 * Whether a checkbox or radio input is checked as the page shows it. A
 * person sees a visible native box's own state; an input drawn elsewhere (0
 * size or transparent, a styled switch beside it) shows what the page keeps
 * in `aria-checked` when it writes one: Element Plus's switch turns
 * `aria-checked` to true and leaves the hidden input's `checked` false.
 *
 * @param input the input
 * @returns true when it is checked
 */
export function checkedAsShown(input: HTMLInputElement): boolean {
  const aria = input.getAttribute("aria-checked");
  if ((aria !== "true" && aria !== "false") || (aria === "true") === input.checked) {
    return input.checked;
  }
  const r = typeof input.getBoundingClientRect === "function"
    ? input.getBoundingClientRect()
    : undefined;
  const hidden = (r !== undefined && (r.width < 2 || r.height < 2)) ||
    (typeof input.checkVisibility === "function" &&
      !input.checkVisibility({ opacityProperty: true }));
  return hidden ? aria === "true" : input.checked;
}
