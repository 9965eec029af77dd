// The site scaffold: it writes a site module and its test, registers the site, and refuses a
// bad name or a site that exists. (What it writes passes the site checker as generated: the
// wiki site was made by it, see test/fixtures/sites/wiki/wiki_test.ts.)
import { assertEquals, assertRejects, assertStringIncludes } from "@std/assert";
import { scaffoldSite } from "../../tools/site_new.ts";

Deno.test("scaffoldSite() writes the site and its test and registers it, once", async () => {
  const root = await Deno.makeTempDir();
  try {
    const base = new URL(`file://${root}/`);
    await Deno.mkdir(new URL("fixtures/sites/", base), { recursive: true });
    await Deno.copyFile("fixtures/sites/registry.ts", new URL("fixtures/sites/registry.ts", base));
    const files = await scaffoldSite(base, "blog-two", "Blog Two");
    assertEquals(files, {
      site: "fixtures/sites/blog-two/mod.ts",
      test: "test/fixtures/sites/blog-two/blog-two_test.ts",
      readme: "fixtures/sites/blog-two/README.md",
    });
    const readme = await Deno.readTextFile(new URL(files.readme, base));
    assertStringIncludes(readme, "# Blog Two (`blog-two`)");
    assertStringIncludes(readme, "<!-- end of the generated part -->");
    const site = await Deno.readTextFile(new URL(files.site, base));
    assertStringIncludes(site, 'const NAME = "blog-two";');
    assertStringIncludes(site, "Blog Two");
    const registry = await Deno.readTextFile(new URL("fixtures/sites/registry.ts", base));
    assertStringIncludes(registry, 'import blogTwo from "./blog-two/mod.ts";');
    assertStringIncludes(registry, "[blogTwo.name]: blogTwo,");
    // Among the sites the fixture backend serves, not the real applications.
    const sites = registry.slice(registry.indexOf("export const SITES"));
    assertStringIncludes(sites.slice(0, sites.indexOf("});")), "[blogTwo.name]: blogTwo,");
    await assertRejects(() => scaffoldSite(base, "blog-two", "Again"), TypeError, "exists already");
    await assertRejects(() => scaffoldSite(base, "Bad Name", "x"), TypeError, "Invalid site name");
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});
