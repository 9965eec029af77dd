// Doc examples that are not run (they launch a browser, a server or a
// sandbox) still type-check, and import the package's published names.
import { assert, assertEquals } from "@std/assert";
import { checkExamples, ignoredExamples } from "../../tools/doc_examples.ts";

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
    ignoredExamples().some((example) => example.file === "README.md"),
    "the README's ignored examples are type-checked too",
  );
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
