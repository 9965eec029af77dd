// The committed page bundle must match a fresh build of engine/page/.
import { assertEquals } from "@std/assert";
import { buildPageBundle, BUNDLE_PATH } from "../../../tools/build_page.ts";

Deno.test("buildPageBundle() matches the committed engine/observe/_page_bundle.ts", async () => {
  const fresh = await buildPageBundle();
  const committed = await Deno.readTextFile(BUNDLE_PATH);
  assertEquals(
    committed === fresh,
    true,
    "engine/observe/_page_bundle.ts is stale: run `deno task build` and commit it",
  );
});
