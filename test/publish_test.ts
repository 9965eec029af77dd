// The JSR package holds only what Deno users import: `deno publish --dry-run`
// lists the files it would upload, and none is a script of another language,
// a deployment file or a build recipe's data, and no published module imports
// a file left out of the package (a user's import of it would fail).
import { assert, assertEquals } from "@std/assert";

const ROOT = new URL("../", import.meta.url);

/** The files `deno publish --dry-run` would upload, relative to the repository. */
async function publishedFiles(): Promise<string[]> {
  const { code, stdout, stderr } = await new Deno.Command(Deno.execPath(), {
    args: ["publish", "--dry-run", "--allow-dirty"],
    cwd: ROOT,
    stdout: "piped",
    stderr: "piped",
    env: { NO_COLOR: "1" },
  }).output();
  // deno prints the file list on stderr or stdout depending on its version: read both.
  const text = new TextDecoder().decode(stdout) + new TextDecoder().decode(stderr);
  assertEquals(code, 0, `the dry run failed:\n${text.slice(-3000)}`);
  const prefix = ROOT.href;
  const files = new Set<string>();
  for (const match of text.matchAll(/(file:\/\/\S+)\s+\(/g)) {
    const url = match[1]!;
    if (url.startsWith(prefix)) files.add(decodeURIComponent(url.slice(prefix.length)));
  }
  return [...files].sort();
}

const SPECIFIER = /(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)["']([^"']+)["']/g;
const MODULE_URL = /new URL\(\s*["'](\.{1,2}\/[^"']+)["']\s*,\s*import\.meta\.url\s*\)/g;

/** The repository-relative files a module's code (not its comments) imports or loads. */
function localTargets(file: string, source: string): string[] {
  const code = source.split("\n").filter((line) => !/^\s*(\*|\/\/|\/\*)/.test(line)).join("\n");
  const targets: string[] = [];
  for (const pattern of [SPECIFIER, MODULE_URL]) {
    for (const match of code.matchAll(pattern)) {
      const specifier = match[1]!;
      if (!specifier.startsWith(".")) continue; // npm: and mapped names are dependencies
      const url = new URL(specifier, new URL(file, ROOT));
      targets.push(decodeURIComponent(url.href.slice(ROOT.href.length)));
    }
  }
  return targets;
}

Deno.test("deno publish ships no script, deployment file or recipe data, and no published module imports an excluded file", async () => {
  const files = await publishedFiles();
  assert(files.includes("mod.ts") && files.includes("engine/mod.ts"), files.join("\n"));
  const foreign = files.filter((file) =>
    /\.(py|php|rb|sh|ya?ml|conf|cnf|txt)$/.test(file) || file.startsWith("deploy/") ||
    file.startsWith("tools/") || file.startsWith("test/") || file.startsWith("bench/") ||
    file === ".git"
  );
  assertEquals(foreign, [], "these files are published and should not be");
  const published = new Set(files);
  const dangling: string[] = [];
  for (const file of files.filter((f) => /\.tsx?$/.test(f))) {
    const source = await Deno.readTextFile(new URL(file, ROOT));
    for (const target of localTargets(file, source)) {
      if (!published.has(target)) dangling.push(`${file} → ${target}`);
    }
  }
  assertEquals(dangling, [], "published modules import files the package leaves out");
});
