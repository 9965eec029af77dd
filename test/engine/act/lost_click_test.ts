// A click reports ok only when the page received it whole. On the
// `/hover-swap` fixture a :hover or :active rule swaps an icon for one that
// is 0 px wide until it loads, and a label re-renders as the pointer enters
// it: the press can land on the target and the release on its parent, so no
// click fires. Each click must either reach the target's handler (ok) or be
// a typed error; never ok with nothing received.
import { assert, assertEquals } from "@std/assert";
import { Actor } from "../../../engine/act/actor.ts";
import { ActionError } from "../../../engine/act/errors.ts";
import { Browser, newContext } from "../../../engine/browser/browser.ts";
import type { Page } from "../../../engine/browser/page.ts";
import { Settler } from "../../../engine/settle/settler.ts";
import { servePages } from "../../../fixtures/pages/mod.ts";
import { SelectorResolver } from "./_selector_resolver.ts";

async function clicks(page: Page): Promise<Record<string, number>> {
  const { result } = await page.session.send("Runtime.evaluate", {
    expression: "window.clicks",
    returnByValue: true,
  });
  return result.value as Record<string, number>;
}

const TARGETS = { 1: '[aria-label="Bold"]', 2: '[aria-label="Italic"]', 3: "#save" };
const NAMES: Record<number, string> = { 1: "Bold", 2: "Italic", 3: "Save" };

Deno.test("Actor.act() reports a click ok only when the target received press, release and click", async (t) => {
  await using server = servePages();
  await using browser = await Browser.launch();
  for (const id of [1, 2, 3]) {
    await t.step(`${NAMES[id]}: ok means the page got the click, else a typed error`, async () => {
      for (let trial = 0; trial < 3; trial++) {
        // A fresh context each time: the slow icon is not in its cache yet.
        await using context = await newContext(browser);
        const settler = Settler.install(context);
        const page = await context.newPage(server.url("/hover-swap"));
        const actor = new Actor(context, {
          resolver: new SelectorResolver(page, TARGETS),
          settler,
        });
        try {
          const result = await actor.act({ action: "click", id });
          assertEquals(
            (await clicks(page))[NAMES[id]!],
            1,
            `the click on ${NAMES[id]} was reported ok but the page did not receive it`,
          );
          assert(result.press === "whole", `a plain click is received whole, got ${result.press}`);
        } catch (error) {
          if (!(error instanceof ActionError)) throw error;
          assert(
            ["target-moved", "not-visible", "stale-id"].includes(error.code),
            `unexpected ${error.code}: ${error.message}`,
          );
          assertEquals((await clicks(page))[NAMES[id]!], 0, error.message);
        }
        // The page and the actor stay usable: a plain keyboard action works.
        await actor.act({ action: "press", keys: "Tab" });
      }
    });
  }
});
