// `type` on a block editor as WordPress's Gutenberg renders it (the
// `/block-editor` fixture): an empty paragraph holds U+FEFF padding and a
// `contenteditable="false"` placeholder, so it must read as empty and be typed
// into without clearing; clearing a paragraph that holds text must select the
// paragraph's own contents, not press Control+A (which selects, and Backspace
// then deletes, every block); and a page that deletes the field as it is
// cleared gets a typed error that says so, never a success or a bare stale id.
import { assertEquals, assertRejects, assertStringIncludes } from "@std/assert";
import { ActionError } from "../../../engine/act/errors.ts";
import { Browser } from "../../../engine/browser/browser.ts";
import type { Page } from "../../../engine/browser/page.ts";
import { servePages } from "../../../fixtures/pages/mod.ts";
import { actorOn } from "./_actor_on.ts";

const BLOCKS = { 1: "#block-1", 2: "#block-2", 3: "#block-3" };

async function read<T>(page: Page, expression: string): Promise<T> {
  const { result } = await page.session.send("Runtime.evaluate", {
    expression,
    returnByValue: true,
  });
  return result.value as T;
}

/** The block's text as a person reads it, without the editor's padding. */
function textOf(page: Page, id: string): Promise<string | null> {
  return read(
    page,
    `document.getElementById(${
      JSON.stringify(id)
    })?.innerText.replace(/\\ufeff/g, "").trim() ?? null`,
  );
}

Deno.test("type on a Gutenberg-like block editor types into the block, never deletes it", async (t) => {
  await using server = servePages();
  await using browser = await Browser.launch();
  const open = () => actorOn(browser, server.url("/block-editor"), BLOCKS);

  await t.step("an empty paragraph (U+FEFF and a placeholder) is typed into as is", async () => {
    const { context, page, actor } = await open();
    await using _ = context;
    await actor.act({ action: "type", id: 1, text: "Hello world" });
    assertEquals(await textOf(page, "block-1"), "Hello world");
    assertEquals(await read(page, "window.removed"), 0, "a block was deleted");
  });

  await t.step(
    "a paragraph's text is cleared within the paragraph, not with Control+A",
    async () => {
      const { context, page, actor } = await open();
      await using _ = context;
      await actor.act({ action: "type", id: 2, text: "New text" });
      assertEquals(await textOf(page, "block-2"), "New text");
      assertEquals(await read(page, "window.removed"), 0, "a block was deleted");
    },
  );

  await t.step(
    "a field the page deletes as it is cleared is a typed error naming that",
    async () => {
      const { context, page, actor } = await open();
      await using _ = context;
      const error = await assertRejects(
        () => actor.act({ action: "type", id: 3, text: "Saved" }),
        ActionError,
      );
      assertEquals(error.code, "value-not-set", error.message);
      assertStringIncludes(error.message, "removed from the page when its text was cleared");
      assertEquals(await textOf(page, "block-3"), null);
      // The other blocks are untouched, and the actor still types into them.
      await actor.act({ action: "type", id: 1, text: "Still here" });
      assertEquals(await textOf(page, "block-1"), "Still here");
    },
  );
});
