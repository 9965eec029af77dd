// The import boundaries of DESIGN.md and STYLE.md, written down and checked:
// a folder may import only what its rule allows.
import { assertEquals } from "@std/assert";

const ROOT = new URL("../", import.meta.url).pathname;

interface Rule {
  /** Files under this folder (relative to the repo root)… */
  folder: string;
  /** …may not import files under any of these folders. */
  forbidden: string[];
  /** Files allowed despite `forbidden`, such as a package's public `mod.ts`. */
  allowed?: string[];
  /** When set, `allowed` applies only to files under this folder. */
  only?: string;
  /** Files allowed despite `forbidden` for every file under `folder`. */
  shared?: string[];
}

const RULES: Rule[] = [
  { folder: "engine/", forbidden: ["sandboxes/", "adapters/", "fixtures/", "bench/", "test/"] },
  { folder: "sandboxes/", forbidden: ["adapters/", "fixtures/", "bench/", "test/"] },
  { folder: "sandboxes/incus/", forbidden: ["sandboxes/docker/"] },
  { folder: "sandboxes/docker/", forbidden: ["sandboxes/incus/"] },
  // Adapters use the surface users get: the entry points in deno.json, nothing deeper.
  {
    folder: "adapters/",
    forbidden: ["engine/", "sandboxes/", "fixtures/", "bench/", "test/"],
    // The rollout server also puts the sandboxes and the sites together, through their entry points.
    allowed: [
      "sandboxes/mod.ts",
      "sandboxes/incus/mod.ts",
      "sandboxes/docker/mod.ts",
      "fixtures/sites/mod.ts",
      "fixtures/sites/kit/mod.ts",
      "fixtures/sites/demo/mod.ts",
    ],
    only: "adapters/http/",
    // The engine and its CDP layer are public entry points of their own (`./engine`,
    // `./cdp`); the failure log
    // (`logFailure`, counted in /metrics) is internal, shared by the package's parts.
    shared: ["engine/mod.ts", "engine/cdp/mod.ts", "engine/log.ts"],
  },
  { folder: "fixtures/", forbidden: ["adapters/", "bench/", "test/"] },
  { folder: "mod.ts", forbidden: ["fixtures/", "bench/", "test/"] },
];

const SPECIFIER = /(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)["']([^"']+)["']/g;

function* walk(dir: string): Generator<string> {
  for (const entry of Deno.readDirSync(dir)) {
    if (entry.name.startsWith(".") || entry.name === "node_modules") continue;
    const path = `${dir}${entry.name}`;
    if (entry.isDirectory) yield* walk(`${path}/`);
    else if (/\.(ts|tsx|js|mjs)$/.test(entry.name)) yield path;
  }
}

function relative(path: string): string {
  return path.startsWith(ROOT) ? path.slice(ROOT.length) : path;
}

Deno.test("imports respect the folder boundaries of DESIGN.md", () => {
  const violations: string[] = [];
  for (const file of walk(ROOT)) {
    const from = relative(file);
    const rules = RULES.filter((rule) => from.startsWith(rule.folder));
    if (rules.length === 0) continue;
    // Comment lines (doc examples) are documentation, not the module graph.
    const source = Deno.readTextFileSync(file).split("\n")
      .filter((line) => !/^\s*(\*|\/\/)/.test(line)).join("\n");
    for (const match of source.matchAll(SPECIFIER)) {
      const specifier = match[1]!;
      if (!specifier.startsWith(".")) continue; // npm: and bare names are dependencies
      const target = relative(new URL(specifier, `file://${file}`).pathname);
      for (const rule of rules) {
        const exempt = rule.only === undefined || from.startsWith(rule.only);
        if (exempt && rule.allowed?.includes(target)) continue;
        if (rule.shared?.includes(target)) continue;
        const hit = rule.forbidden.find((folder) => target.startsWith(folder));
        if (hit) {
          violations.push(`${from} imports ${target} (${rule.folder} may not import ${hit})`);
        }
      }
    }
  }
  assertEquals(violations, []);
});
