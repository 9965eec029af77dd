/**
 * Checks the code blocks of the README, `docs/` and the package's doc
 * comments, so that documentation cannot drift from the code:
 *
 * - the examples that are not run (```ts ignore: they need a container
 *   sandbox's image, a model or a cluster) are each written to a module of
 *   their own inside the repository, where `@webserv/webserv` resolves to
 *   this package, and `deno check` reads them all; in a markdown page such a
 *   block must say why it is not run on its first line
 *   (`// Not run here: …`);
 * - the markdown blocks that run are type-checked here (`deno check
 *   --doc-only`) and run by `deno test --doc` in `deno task test`;
 * - every python block is compiled (`python3 -m py_compile`);
 * - a fence in a language nothing checks (`typescript`, `js`, `py`) is refused.
 *
 * Used by `test/tools/doc_examples_test.ts`.
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
  yield new URL("CHANGELOG.md", ROOT);
  const docs = new URL("docs/", ROOT);
  try {
    for (const entry of Deno.readDirSync(docs)) {
      if (entry.isFile && entry.name.endsWith(".md")) yield new URL(entry.name, docs);
    }
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
  }
}

/** The markdown pages that exist, relative to the repository. */
export function markdownPages(): string[] {
  const out: string[] = [];
  for (const url of markdown()) {
    try {
      Deno.statSync(url);
    } catch (error) {
      if (error instanceof Deno.errors.NotFound) continue;
      throw error;
    }
    out.push(url.pathname.slice(ROOT.pathname.length));
  }
  return out.sort();
}

/** One fenced code block of a markdown page. */
export interface MarkdownBlock extends DocExample {
  /** The fence's language (`ts`, `sh`, `python`…; empty for none). */
  lang: string;
  /** The words after the language (`ignore`). */
  attributes: string[];
}

/**
 * Every fenced code block of the README, the changelog and `docs/`.
 *
 * @returns the blocks, in page and line order
 */
export function markdownBlocks(): MarkdownBlock[] {
  const out: MarkdownBlock[] = [];
  for (const file of markdownPages()) {
    const lines = Deno.readTextFileSync(new URL(file, ROOT)).split("\n");
    for (let i = 0; i < lines.length; i++) {
      const open = lines[i]!.match(/^```(\S*)\s*(.*)$/);
      if (!open) continue;
      let j = i + 1;
      while (j < lines.length && !/^```\s*$/.test(lines[j]!)) j++;
      out.push({
        file,
        line: i + 1,
        lang: open[1]!,
        attributes: open[2]!.split(/\s+/).filter(Boolean),
        code: lines.slice(i + 1, j).join("\n"),
      });
      i = j;
    }
  }
  return out;
}

/** The fence languages a markdown block may use: each is checked or is not code. */
export const CHECKED_LANGUAGES: readonly string[] = ["ts", "tsx", "python"];
/** Fence languages that hold no code a test could check (commands, output, data). */
export const PLAIN_LANGUAGES: readonly string[] = ["", "sh", "text", "json", "jsonl", "yaml"];

/** What a `ts ignore` block in a markdown page must open with. */
export const NOT_RUN_REASON: RegExp = /^\/\/ Not run here: \S.{9,}/;

/**
 * The blocks that break the rules above: a language nothing checks, or a
 * `ts ignore` block that does not say why it is not run.
 *
 * @param blocks the blocks, from {@linkcode markdownBlocks}
 * @returns one line per offending block, `file:line: why`
 */
export function blockProblems(blocks: MarkdownBlock[]): string[] {
  const problems: string[] = [];
  for (const block of blocks) {
    const where = `${block.file}:${block.line}`;
    if (![...CHECKED_LANGUAGES, ...PLAIN_LANGUAGES].includes(block.lang)) {
      problems.push(
        `${where}: a "${block.lang}" block is checked by nothing; use one of ${
          [...CHECKED_LANGUAGES, ...PLAIN_LANGUAGES.filter(Boolean)].join(", ")
        }`,
      );
    }
    if (/^tsx?$/.test(block.lang) && block.attributes.includes("ignore")) {
      const first = block.code.split("\n")[0] ?? "";
      if (!NOT_RUN_REASON.test(first)) {
        problems.push(
          `${where}: a "ts ignore" block opens with "// Not run here: <why>" (what it needs that the suite has not)`,
        );
      }
    }
  }
  return problems;
}

/**
 * Type-checks the markdown blocks that run (`deno check --doc-only`); they
 * are run by `deno test --doc`.
 *
 * @returns `deno check`'s verdict and output
 */
export async function checkRunnableMarkdown(): Promise<{ success: boolean; output: string }> {
  return await denoCheck(["--doc-only", ...markdownPages()]);
}

/** `deno check --quiet` of `args` from the repository's root: its verdict and its output. */
async function denoCheck(args: string[]): Promise<{ success: boolean; output: string }> {
  const { success, stdout, stderr } = await new Deno.Command(Deno.execPath(), {
    args: ["check", "--quiet", ...args],
    cwd: ROOT,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const decode = (bytes: Uint8Array) => new TextDecoder().decode(bytes);
  return { success, output: decode(stdout) + decode(stderr) };
}

/**
 * Compiles each python block with `python3 -m py_compile`.
 *
 * @param blocks the blocks, from {@linkcode markdownBlocks}
 * @returns one message per block that does not compile, naming its place
 */
export async function compilePython(blocks: MarkdownBlock[]): Promise<string[]> {
  const dir = await Deno.makeTempDir({ prefix: "webserv_doc_python_" });
  const failures: string[] = [];
  try {
    for (const [index, block] of blocks.filter((b) => b.lang === "python").entries()) {
      const path = `${dir}/block_${index}.py`;
      await Deno.writeTextFile(path, block.code + "\n");
      const { success, stderr } = await new Deno.Command("python3", {
        args: ["-m", "py_compile", path],
        stdout: "null",
        stderr: "piped",
      }).output();
      if (!success) {
        failures.push(`${block.file}:${block.line}: ${new TextDecoder().decode(stderr).trim()}`);
      }
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
  return failures;
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
    ...markdownPages().map((page) => new URL(page, ROOT)),
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
    return await denoCheck(paths);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

if (import.meta.main) {
  const blocks = markdownBlocks();
  const ignored = await checkExamples(ignoredExamples());
  const runnable = await checkRunnableMarkdown();
  const problems = [...blockProblems(blocks), ...await compilePython(blocks)];
  // deno-lint-ignore no-console
  console.log([ignored.output, runnable.output, ...problems].filter(Boolean).join("\n") || "ok");
  Deno.exit(ignored.success && runnable.success && problems.length === 0 ? 0 : 1);
}
