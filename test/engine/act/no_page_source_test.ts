// No module of engine/act, engine/settle or engine/observe ships JavaScript
// source to the page: in-page code is typed page modules (engine/page/),
// bundled by `deno task build` into engine/observe/_page_bundle.ts (the one
// file left out here), and the engine sends only those bundles. A string literal holding code, or a function
// serialized with `toString()`, brings back untyped in-page code that can
// drift from the observer's (as the stand-in rule once did).
import { assertEquals } from "@std/assert";

const ROOT = new URL("../../../", import.meta.url);
const DIRS = ["engine/act/", "engine/settle/", "engine/observe/"];
/** The generated bundle: its code comes from engine/page/. */
const GENERATED = "engine/observe/_page_bundle.ts";

/** What marks a literal as code run in a page. */
const CODE =
  /=>|\bfunction\s*\w*\s*\(|\b(?:document|globalThis|window|this)\.\w|\b(?:addEventListener|querySelector(?:All)?|getBoundingClientRect|elementFromPoint|requestAnimationFrame)\b|\bnew Promise\b|\breturn\b[^\n]*;/;

/** The literal text of a source file's string and template literals (substitutions left out), and its code outside them and comments. */
export function scan(source: string): { literals: string[]; code: string } {
  const literals: string[] = [];
  let code = "";
  let i = 0;
  // A stack of open template literals: the brace depth at which each `${` was opened.
  const templates: number[] = [];
  let depth = 0;
  const readTemplate = (): void => {
    let text = "";
    while (i < source.length) {
      const c = source[i]!;
      if (c === "\\") {
        text += source.slice(i, i + 2);
        i += 2;
      } else if (c === "`") {
        i++;
        literals.push(text);
        return;
      } else if (c === "$" && source[i + 1] === "{") {
        i += 2;
        literals.push(text);
        templates.push(depth);
        depth++;
        return;
      } else {
        text += c;
        i++;
      }
    }
  };
  while (i < source.length) {
    const c = source[i]!;
    const next = source[i + 1];
    if (c === "/" && next === "/") {
      while (i < source.length && source[i] !== "\n") i++;
    } else if (c === "/" && next === "*") {
      const end = source.indexOf("*/", i + 2);
      i = end < 0 ? source.length : end + 2;
    } else if (c === '"' || c === "'") {
      let text = "";
      i++;
      while (i < source.length && source[i] !== c) {
        text += source[i] === "\\" ? source.slice(i, i + 2) : source[i];
        i += source[i] === "\\" ? 2 : 1;
      }
      i++;
      literals.push(text);
    } else if (c === "`") {
      i++;
      readTemplate();
    } else if (c === "{") {
      depth++;
      code += c;
      i++;
    } else if (c === "}") {
      depth--;
      i++;
      if (templates.length && templates[templates.length - 1] === depth) {
        templates.pop();
        readTemplate();
      } else {
        code += c;
      }
    } else if (c === "/" && /[=(,:;!&|?{}\[\n]\s*$/.test(code.slice(-20))) {
      // A regular expression literal: skipped, it is not sent anywhere.
      i++;
      let inClass = false;
      while (i < source.length && (source[i] !== "/" || inClass)) {
        if (source[i] === "\\") i++;
        else if (source[i] === "[") inClass = true;
        else if (source[i] === "]") inClass = false;
        i++;
      }
      i++;
      while (/[a-z]/.test(source[i] ?? "")) i++;
    } else {
      code += c;
      i++;
    }
  }
  return { literals, code };
}

/** What in a file ships page code: literals that hold code, functions serialized. */
export function offences(source: string): string[] {
  const { literals, code } = scan(source);
  const found = literals.filter((text) => CODE.test(text)).map((text) => text.slice(0, 80));
  for (const match of code.matchAll(/\.toString\(\)/g)) {
    found.push(match[0]);
  }
  return found;
}

Deno.test("offences() finds page code in literals and serialized functions", () => {
  const bad = [
    "export const FOCUS = `function () {\n  this.focus();\n}`;",
    'const BARRIER = "new Promise((resolve) => requestAnimationFrame(resolve))";',
    "const source = `(${hook.toString()})(${JSON.stringify(options)});`;",
    "send({ expression: 'document.title' });",
    "const ARM = `\n  const doc = target.ownerDocument;\n  if (x) return null;\n`;",
  ];
  for (const source of bad) assertEquals(offences(source).length > 0, true, source);
  const good = [
    'throw new ActionError("covered", `Element ${id} is covered by ${cover}`);',
    "return `(${ACTIVITY_HOOK})(${JSON.stringify(options)});`;",
    'const list = `; options: ${options.map((o) => `"${o}"`).join(", ")}`;',
    "const re = /=>|function\\(/g; // function () {}",
    "/** `function () { return 1; }` in a comment */ const n = 1;",
  ];
  for (const source of good) assertEquals(offences(source), [], source);
});

Deno.test("no module of engine/act, engine/settle or engine/observe ships JavaScript source to the page", async () => {
  const found: string[] = [];
  for (const dir of DIRS) {
    for await (const entry of Deno.readDir(new URL(dir, ROOT))) {
      if (!entry.isFile || !entry.name.endsWith(".ts") || dir + entry.name === GENERATED) continue;
      const source = await Deno.readTextFile(new URL(dir + entry.name, ROOT));
      for (const offence of offences(source)) found.push(`${dir}${entry.name}: ${offence}`);
    }
  }
  assertEquals(found, [], "in-page code belongs in engine/page/, bundled by `deno task build`");
});
