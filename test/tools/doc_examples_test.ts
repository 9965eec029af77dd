// Doc examples that are not run (they launch a browser, a server or a
// sandbox) still type-check, and import the package's published names.
import { assert, assertEquals } from "@std/assert";
import {
  blockProblems,
  checkExamples,
  checkRunnableMarkdown,
  compilePython,
  ignoredExamples,
  markdownBlocks,
} from "../../tools/doc_examples.ts";

Deno.test("every doc example that is not run type-checks and imports published names", async () => {
  const examples = ignoredExamples();
  assert(examples.length > 20, `only ${examples.length} examples found`);
  const relative = examples.filter((example) => /from\s+["']\.\.?\//.test(example.code))
    .map((example) => `${example.file}:${example.line}`);
  assertEquals(relative, [], "examples import @webserv/webserv…, not relative paths");
  const { success, output } = await checkExamples(examples);
  assert(success, output);
});

// `deno test --doc` runs the markdown examples not marked `ignore`, in the
// main block of `.ci/run`, before any image is built: one that opens an
// Incus or Docker sandbox failed on a fresh machine (the WordPress image is
// built by a later step).
Deno.test("the markdown examples that run open no container sandbox", () => {
  const pages = ["README.md", ...docsPages()];
  const offending: string[] = [];
  for (const page of pages) {
    const lines = Deno.readTextFileSync(new URL(`../../${page}`, import.meta.url)).split("\n");
    for (let i = 0; i < lines.length; i++) {
      if (!/^```tsx?\s*$/.test(lines[i]!)) continue;
      let j = i + 1;
      while (j < lines.length && !/^```\s*$/.test(lines[j]!)) j++;
      const code = lines.slice(i + 1, j).join("\n");
      if (/sandboxes\/(incus|docker)|IncusSandbox|DockerSandbox|SharedRuntimeSandbox/.test(code)) {
        offending.push(`${page}:${i + 1}`);
      }
      i = j;
    }
  }
  assertEquals(offending, [], "mark these ```ts ignore: they need a daemon and an image");
  assert(
    ignoredExamples().some((example) => example.file.startsWith("docs/")),
    "the ignored examples of docs/ are type-checked too",
  );
});

Deno.test("every markdown block is in a checked language, and each ts ignore block says why it is not run", () => {
  const blocks = markdownBlocks();
  assert(blocks.some((block) => block.file.startsWith("docs/")), "no block found under docs/");
  assertEquals(blockProblems(blocks), []);
});

Deno.test("blockProblems() names a ts ignore block without a reason and a language nothing checks", () => {
  const problems = blockProblems([
    { file: "docs/x.md", line: 3, lang: "ts", attributes: ["ignore"], code: "const a = 1;" },
    {
      file: "docs/x.md",
      line: 9,
      lang: "ts",
      attributes: ["ignore"],
      code: "// Not run here: needs an Incus daemon and its image\nconst a = 1;",
    },
    { file: "docs/x.md", line: 15, lang: "typescript", attributes: [], code: "const a = 1;" },
  ]);
  assertEquals(problems.map((problem) => problem.split(":").slice(0, 2).join(":")), [
    "docs/x.md:3",
    "docs/x.md:15",
  ]);
});

Deno.test("the markdown blocks that run type-check", async () => {
  const { success, output } = await checkRunnableMarkdown();
  assert(success, output);
});

Deno.test("every python block of the README and docs/ compiles", async () => {
  const blocks = markdownBlocks();
  assert(blocks.filter((block) => block.lang === "python").length >= 5, "python blocks expected");
  assertEquals(await compilePython(blocks), []);
  const broken = await compilePython([
    { file: "docs/x.md", line: 1, lang: "python", attributes: [], code: "def f(:\n  pass" },
  ]);
  assertEquals(broken.length, 1, "a block that does not compile is reported");
  assert(broken[0]!.startsWith("docs/x.md:1: "), broken[0]);
});

function docsPages(): string[] {
  try {
    return [...Deno.readDirSync(new URL("../../docs/", import.meta.url))]
      .filter((entry) => entry.isFile && entry.name.endsWith(".md"))
      .map((entry) => `docs/${entry.name}`);
  } catch {
    return [];
  }
}
