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
