/**
 * Type-checks the doc examples that are not run (```ts ignore: they launch
 * a browser, a server or a sandbox): each is written to a module of its own
 * inside the repository, where `@webserv/webserv` resolves to this package,
 * and `deno check` reads them all. The examples that run are type-checked by
 * `deno test --doc`. Used by `test/tools/doc_examples_test.ts`.
 *
 * Run: `deno run --allow-read --allow-write --allow-run tools/doc_examples.ts`.
 *
 * @module
 */

const ROOT = new URL("../", import.meta.url);

/** One example that is not run. */
export interface DocExample {
  /** The file it is in, relative to the repository. */
  file: string;
  /** The line its fence opens on. */
  line: number;
  /** Its code. */
  code: string;
}

function* sources(dir: URL): Generator<URL> {
  for (const entry of Deno.readDirSync(dir)) {
    if (entry.name.startsWith(".") || entry.name === "node_modules") continue;
    const url = new URL(entry.name + (entry.isDirectory ? "/" : ""), dir);
    if (entry.isDirectory) yield* sources(url);
    else if (/\.tsx?$/.test(entry.name) && !entry.name.endsWith("_test.ts")) yield url;
  }
}

/**
 * The README and the pages under `docs/`: their examples that would launch
 * a sandbox are marked `ignore` (`deno test --doc` would run them, and a
 * sandbox's image may not exist yet where the suite runs).
 */
function* markdown(): Generator<URL> {
  yield new URL("README.md", ROOT);
  const docs = new URL("docs/", ROOT);
  try {
    for (const entry of Deno.readDirSync(docs)) {
      if (entry.isFile && entry.name.endsWith(".md")) yield new URL(entry.name, docs);
    }
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
  }
}

/**
 * The examples marked `ignore` in the package's modules and its markdown pages.
 *
 * @returns every such example, in file order
 */
export function ignoredExamples(): DocExample[] {
  const out: DocExample[] = [];
  const roots = ["engine/", "adapters/", "sandboxes/", "fixtures/sites/"].map((p) =>
    new URL(p, ROOT)
  );
  const files = [
    new URL("mod.ts", ROOT),
    ...roots.flatMap((root) => [...sources(root)]),
    ...markdown(),
  ];
  for (const url of files) {
    const lines = Deno.readTextFileSync(url).split("\n");
    const file = url.pathname.slice(ROOT.pathname.length);
    // In a module the fences sit in doc comments (` * ```ts ignore`); in a
    // markdown page they open a line.
    const prefix = file.endsWith(".md") ? "" : String.raw`\s*\*`;
    const open = new RegExp(`^${prefix}\\s*\`\`\`tsx? ignore\\s*$`);
    const close = new RegExp(`^${prefix}\\s*\`\`\`\\s*$`);
    for (let i = 0; i < lines.length; i++) {
      if (!open.test(lines[i]!)) continue;
      const code: string[] = [];
      let j = i + 1;
      for (; j < lines.length && !close.test(lines[j]!); j++) {
        code.push(prefix ? lines[j]!.replace(/^\s*\* ?/, "") : lines[j]!);
      }
      out.push({ file, line: i + 1, code: code.join("\n") });
      i = j;
    }
  }
  return out;
}

/**
 * Type-checks the examples.
 *
 * @param examples the examples
 * @returns `deno check`'s exit code and output, with each module named by its example's place
 */
export async function checkExamples(
  examples: DocExample[],
): Promise<{ success: boolean; output: string }> {
  const dir = new URL(`.doc_examples_${Deno.pid}/`, ROOT);
  await Deno.mkdir(dir, { recursive: true });
  try {
    const paths: string[] = [];
    for (const [index, example] of examples.entries()) {
      const name = `${String(index).padStart(3, "0")}_${
        example.file.replace(/\W/g, "_")
      }_${example.line}.ts`;
      // A module of its own (top-level await, its own names).
      await Deno.writeTextFile(new URL(name, dir), `${example.code}\nexport {};\n`);
      paths.push(new URL(name, dir).pathname);
    }
    const { success, stdout, stderr } = await new Deno.Command(Deno.execPath(), {
      args: ["check", "--quiet", ...paths],
      cwd: ROOT,
      stdout: "piped",
      stderr: "piped",
    }).output();
    const decode = (bytes: Uint8Array) => new TextDecoder().decode(bytes);
    return { success, output: decode(stdout) + decode(stderr) };
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

if (import.meta.main) {
  const { success, output } = await checkExamples(ignoredExamples());
  // deno-lint-ignore no-console
  console.log(output || "ok");
  Deno.exit(success ? 0 : 1);
}
