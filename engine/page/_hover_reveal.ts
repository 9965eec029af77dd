/**
 * Controls a page shows only while the pointer is over their container:
 * wp-admin's row actions ("Edit | Quick Edit | Trash") sit at
 * `left: -9999em` until `tr:hover .row-actions` puts them back; a card's
 * buttons stay at `opacity: 0` until `.card:hover .actions`. A person
 * reaches them by moving the pointer over the container, so they are
 * targets: the distiller gives them ids, and a click or hover on one moves
 * the pointer over its container first.
 *
 * Which container reveals which element is read from the page's own style
 * rules, not guessed: a rule whose selector has one `:hover` on a compound
 * before the last one (`tr:hover .row-actions`) and whose declarations can
 * show a hidden box (position, offsets, display, visibility, opacity,
 * transform, clip) reveals the elements its selector matches without the
 * `:hover` (`tr .row-actions` and their descendants), when the pointer is
 * over the ancestor its `:hover` compound matches (`tr`).
 *
 * @module
 */

/** One revealing rule: the container the pointer hovers, and what then shows. */
export interface HoverRule {
  /** The selector, without `:hover`, of the container hovered (`"tr"`). */
  trigger: string;
  /** The whole selector without `:hover` (`"tr .row-actions"`). */
  target: string;
}

/** Declarations that can bring a hidden or off-screen box into view. */
const REVEALING = [
  "position",
  "left",
  "right",
  "top",
  "bottom",
  "inset",
  "display",
  "visibility",
  "opacity",
  "transform",
  "clip",
  "clip-path",
];

const HOVER = ":hover";

/** Splits a selector list at its top-level commas. */
function selectors(list: string): string[] {
  const out: string[] = [];
  let depth = 0, start = 0;
  for (let i = 0; i < list.length; i++) {
    const c = list[i];
    if (c === "(" || c === "[") depth++;
    else if (c === ")" || c === "]") depth--;
    else if (c === "," && depth === 0) {
      out.push(list.slice(start, i).trim());
      start = i + 1;
    }
  }
  out.push(list.slice(start).trim());
  return out;
}

/** The rule a selector makes, or `undefined` when it reveals nothing on a container's hover. */
function ruleOf(selector: string, root: ParentNode): HoverRule | undefined {
  const at = selector.indexOf(HOVER);
  if (at < 0 || selector.indexOf(HOVER, at + 1) >= 0 || selector.includes("::")) return;
  // The hovered compound ends at the next top-level combinator.
  let end = at + HOVER.length, depth = 0;
  for (; end < selector.length; end++) {
    const c = selector[end]!;
    if (c === "(" || c === "[") depth++;
    else if (c === ")" || c === "]") depth--;
    else if (depth === 0 && /[\s>+~]/.test(c)) break;
  }
  // `a:hover` styles the hovered element itself: nothing hidden is revealed.
  if (!selector.slice(end).trim()) return;
  const trigger = (selector.slice(0, at) + selector.slice(at + HOVER.length, end)).trim() || "*";
  const target = selector.slice(0, at) + selector.slice(at + HOVER.length);
  try {
    root.querySelector(trigger);
    root.querySelector(target);
  } catch {
    return;
  }
  return { trigger, target };
}

/**
 * The selector (`:hover` taken out) of a rule that gives the hovered element
 * itself a pointer cursor (`.datepicker-cell:not(.disabled):hover`), or
 * `undefined`.
 */
function pointerOf(selector: string, root: ParentNode): string | undefined {
  const at = selector.indexOf(HOVER);
  if (at < 0 || selector.indexOf(HOVER, at + 1) >= 0 || selector.includes("::")) return;
  // Only on the last compound: the element hovered is the one the cursor shows on.
  if (/[\s>+~]/.test(selector.slice(at + HOVER.length).replace(/\([^)]*\)|\[[^\]]*\]/g, ""))) {
    return;
  }
  const plain = selector.slice(0, at) + selector.slice(at + HOVER.length);
  try {
    root.querySelector(plain);
  } catch {
    return;
  }
  return plain;
}

function collect(
  rules: CSSRuleList,
  root: ParentNode,
  out: HoverRule[],
  pointers: string[],
): void {
  for (let i = 0; i < rules.length; i++) {
    const rule = rules[i] as CSSRule & {
      selectorText?: string;
      style?: CSSStyleDeclaration;
      cssRules?: CSSRuleList;
      media?: MediaList;
    };
    if (rule.cssRules && !rule.selectorText) {
      // @media, @supports, @layer: only the groups that apply now.
      const media = rule.media?.mediaText;
      const view = (root as Node).ownerDocument?.defaultView ??
        (root as Document).defaultView;
      if (media && view && !view.matchMedia(media).matches) continue;
      collect(rule.cssRules, root, out, pointers);
      continue;
    }
    const text = rule.selectorText;
    const style = rule.style;
    if (!text || !style || !text.includes(HOVER)) continue;
    if (style.getPropertyValue("cursor") === "pointer") {
      for (const selector of selectors(text)) {
        const plain = pointerOf(selector, root);
        if (plain) pointers.push(plain);
      }
    }
    if (!REVEALING.some((name) => style.getPropertyValue(name) !== "")) continue;
    for (const selector of selectors(text)) {
      const made = ruleOf(selector, root);
      if (made) out.push(made);
    }
  }
}

/**
 * The revealing rules of a document or shadow root's style sheets
 * (cross-origin sheets, unreadable, are left out).
 *
 * @param root the document or shadow root
 * @returns its rules
 */
export function hoverRules(root: Document | ShadowRoot): HoverRule[] {
  return rulesOf(root).rules;
}

/** A root's revealing rules and the selectors of its pointer-on-hover rules. */
function rulesOf(root: Document | ShadowRoot): { rules: HoverRule[]; pointers: string } {
  const out: HoverRule[] = [];
  const pointers: string[] = [];
  const sheets = [...Array.from(root.styleSheets), ...(root.adoptedStyleSheets ?? [])];
  for (const sheet of sheets) {
    let rules: CSSRuleList;
    try {
      rules = sheet.cssRules;
    } catch {
      continue;
    }
    collect(rules, root, out, pointers);
  }
  return { rules: out, pointers: [...new Set(pointers)].join(", ") };
}

/**
 * The container whose hover reveals `el`: the nearest ancestor of the
 * element a rule reveals (or of `el` itself) that the rule's `:hover`
 * compound matches.
 *
 * @param el the element
 * @param rules the rules of its document or shadow root
 * @returns the container, or `null` when no rule reveals `el`
 */
export function hoverRevealer(el: Element, rules: readonly HoverRule[]): Element | null {
  for (const rule of rules) {
    const shown = el.closest(rule.target);
    const trigger = shown?.parentElement?.closest(rule.trigger);
    if (trigger) return trigger;
  }
  return null;
}

/** Each root's rules, read once per style sheet count (a page adding a sheet reads again). */
const cache = new WeakMap<
  Document | ShadowRoot,
  { count: number; rules: HoverRule[]; pointers: string }
>();

/** The rules of an element's own root, read once while its style sheet count stays the same. */
function cachedRules(el: Element): { rules: HoverRule[]; pointers: string } | undefined {
  const root = el.getRootNode() as Document | ShadowRoot;
  if (!("styleSheets" in root)) return undefined;
  const count = root.styleSheets.length + (root.adoptedStyleSheets?.length ?? 0);
  let entry = cache.get(root);
  if (!entry || entry.count !== count) cache.set(root, entry = { count, ...rulesOf(root) });
  return entry;
}

/**
 * Whether the page's style gives an element a pointer cursor while it is
 * hovered (a calendar's day cells, `cursor: pointer` only on
 * `.datepicker-cell:hover`): what a person sees when the pointer is over it.
 *
 * @param el the element
 * @returns whether a rule of its root does
 */
export function pointerOnHover(el: Element): boolean {
  const pointers = cachedRules(el)?.pointers;
  if (!pointers) return false;
  try {
    return el.matches(pointers);
  } catch {
    return false;
  }
}

/**
 * {@linkcode hoverRevealer} with the rules of the element's own root, read
 * once while its style sheet count stays the same.
 *
 * @param el the element
 * @returns the container whose hover reveals it, or `null`
 */
export function revealerOf(el: Element): Element | null {
  const rules = cachedRules(el)?.rules;
  return rules?.length ? hoverRevealer(el, rules) : null;
}
