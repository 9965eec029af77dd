/**
 * Reading elements back out of an observation's text: what a client that
 * holds only the text (a chat transcript, the MCP face's tool result) uses
 * to find an id by role and name. `describeElement` in
 * `format_observation.ts` writes the syntax read here, and the Python
 * client's `webserv.observation_text.parse_elements` is this function's
 * twin; a program that holds the observation itself reads its `elements`
 * (`findElement`) instead.
 *
 * @module
 */

/** One element as its text shows it. */
export interface TextElement {
  /** The element's id. */
  id: number;
  /** The role word (`"link"` for a line with a `→` target, `""` when the line has none). */
  role: string;
  /** The name, quotes taken off (`""` when the element has none). */
  name: string;
  /** A link's target as shown after `→`, when shown. */
  href?: string;
  /** The whole line the element is on, indentation taken off. */
  line: string;
}

const ID = /\[(\d+)\] ?/g;
/** Where a bare name ends: a separator between parts of a line, or the line's end. */
const NAME_END = / · | \| /;
/** A bare name and a link target: `Pricing → /pricing`. */
const ARROW = /^((?:(?!\[\d+\])[^"])*?) → (\S+)/;
/** A role word: lower-case letters, then a space, a colon or the end. */
const ROLE = /^([a-z]+)(?=[ :]|$)/;

/**
 * Every element with an id in an observation's text, in the order shown:
 * `[3] button Save`, `[4] Docs → /docs` (a link: the arrow says so),
 * `[5] checkbox "Remember me" checked` (quoted when more follows the name).
 *
 * @param text an observation's text (or any part of it)
 * @returns the elements, each with its id, role, name, target and line
 *
 * @example Find a link and a button by name
 * ```ts
 * import { parseElements } from "./parse_observation.ts";
 * const text = 'main\n [3] button Save · [4] Docs → /docs\n [5] checkbox "Remember me" checked';
 * const found = parseElements(text);
 * console.assert(found[1]!.role === "link" && found[1]!.name === "Docs" && found[1]!.href === "/docs");
 * console.assert(found[2]!.name === "Remember me");
 * ```
 */
export function parseElements(text: string): TextElement[] {
  const out: TextElement[] = [];
  for (const raw of text.split("\n")) {
    const line = raw.trimStart();
    for (const match of line.matchAll(ID)) {
      const rest = line.slice(match.index + match[0].length);
      out.push({ id: Number(match[1]), ...readElement(rest), line });
    }
  }
  return out;
}

/** Role, name and target from the text after an id. */
function readElement(rest: string): { role: string; name: string; href?: string } {
  if (rest.startsWith('"')) {
    const { name, after } = quoted(rest);
    const target = /^ → (\S+)/.exec(after);
    return target ? { role: "link", name, href: target[1]! } : { role: "", name };
  }
  if (rest.startsWith("→ ")) return { role: "link", name: "", href: rest.slice(2).split(" ")[0]! };
  const arrow = ARROW.exec(rest);
  if (arrow && !NAME_END.test(arrow[1]!)) return { role: "link", name: arrow[1]!, href: arrow[2]! };
  const role = ROLE.exec(rest)?.[1] ?? "";
  const after = rest.slice(role.length);
  if (!after.startsWith(" ") || after.startsWith(" [")) return { role, name: "" };
  const body = after.slice(1);
  if (body.startsWith('"')) return { role, name: quoted(body).name };
  return { role, name: body.split(NAME_END)[0]! };
}

function quoted(text: string): { name: string; after: string } {
  const end = text.indexOf('"', 1);
  if (end < 0) return { name: text.slice(1), after: "" };
  return { name: text.slice(1, end), after: text.slice(end + 1) };
}
