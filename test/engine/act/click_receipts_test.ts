// Every click the engine reports ok carries a receipt it read from the
// target's document: `whole` (press, release and click on the target),
// `handled` (the press on the target, and the page prevented its default or
// changed the DOM while handling it), `gone` (the press on the target, then
// its document went away). A press without one is never ok.
import { assert, assertEquals, assertRejects } from "@std/assert";
import { Actor } from "../../../engine/act/actor.ts";
import { ActionError } from "../../../engine/act/errors.ts";
import { Browser, newContext } from "../../../engine/browser/browser.ts";
import type { Page } from "../../../engine/browser/page.ts";
import { ProtocolError } from "../../../engine/cdp/errors.ts";
import { Observer } from "../../../engine/observe/observer.ts";
import { ElementCalls, type Ref } from "../../../engine/act/_calls.ts";
import type { ActArgs, ActName, ActResult } from "../../../engine/act/_in_page.ts";
import { Pointer } from "../../../engine/act/_pointer.ts";
import { SelectorResolver } from "./_selector_resolver.ts";
import { evaluate as value } from "../../_util/page_eval.ts";

const PAGE = "data:text/html," + encodeURIComponent(`<!doctype html>
<body style="margin:0">
<button id=vanish onclick="window.vanished = (window.vanished || 0) + 1; this.remove()">Vanish</button>
<button id=menu>Menu</button>
<button id=plain onclick="window.plain = (window.plain || 0) + 1">Plain</button>
<script>
  // A select that opens its list on mousedown under a backdrop, as Material UI's does:
  // the release lands on the backdrop, and no click follows, for a person either.
  document.querySelector("#menu").addEventListener("mousedown", (e) => {
    e.preventDefault();
    const backdrop = document.createElement("div");
    backdrop.id = "backdrop";
    backdrop.style = "position:fixed;inset:0;background:rgba(0,0,0,.1)";
    document.body.append(backdrop);
  });
</script>
</body>`);

Deno.test("Actor.act() click receipts", async (t) => {
  await using browser = await Browser.launch();

  await t.step("a target the click removes is read as received whole, not as gone", async () => {
    await using context = await newContext(browser);
    const observer = Observer.attach(context);
    const actor = new Actor(context, { resolver: observer });
    const page = await context.newPage(PAGE);
    const { elements } = await observer.observe(page);
    const id = elements.find((e) => e.name === "Vanish")?.id;
    assert(id !== undefined, "the button has an id");
    const result = await actor.act({ action: "click", id });
    assertEquals(result.press, "whole");
    assertEquals(await value(page, "window.vanished"), 1);
  });

  await t.step("a press the page takes on mousedown is handled, its receipt read", async () => {
    await using context = await newContext(browser);
    const observer = Observer.attach(context);
    const actor = new Actor(context, { resolver: observer });
    const page = await context.newPage(PAGE);
    const { elements } = await observer.observe(page);
    const id = elements.find((e) => e.name === "Menu")?.id;
    assert(id !== undefined, "the button has an id");
    const result = await actor.act({ action: "click", id });
    assertEquals(result.press, "handled");
    assertEquals(await value(page, "!!document.querySelector('#backdrop')"), true);
  });

  // The browser cannot be made to replace a document between our press and
  // our read at will: the in-page reads answer as a navigation makes them.
  class Navigating extends ElementCalls {
    constructor(page: Page, readonly seen: boolean | "unloaded") {
      super(new SelectorResolver(page, { 1: "#plain" }), 5_000);
    }
    override async callInWorld<K extends ActName>(
      ref: Ref,
      name: K,
      ...args: ActArgs<K>
    ): Promise<ActResult<K>> {
      if (name === "PRESS_SEEN") {
        if (this.seen === "unloaded") {
          throw new ProtocolError("Cannot find context with specified id");
        }
        return this.seen as ActResult<K>;
      }
      const answer = await super.callInWorld(ref, name, ...args);
      // The record was read; a replaced document's world has none.
      return (name === "CLICK_RECORD" ? null : answer) as ActResult<K>;
    }
  }

  for (const seen of [true, "unloaded"] as const) {
    await t.step(
      `a press seen ${
        seen === true ? "on the target" : "as its document unloaded"
      }, then the document gone, is gone`,
      async () => {
        await using context = await newContext(browser);
        const page = await context.newPage(PAGE);
        const calls = new Navigating(page, seen);
        const pointer = new Pointer(calls, 5_000, () => page);
        const ref = await calls.element(1);
        assertEquals(await pointer.mouse(await pointer.aim(ref, 1), "click", "left", []), "gone");
      },
    );
  }

  await t.step("a press that missed the target, then the document gone, is an error", async () => {
    await using context = await newContext(browser);
    const page = await context.newPage(PAGE);
    const calls = new Navigating(page, false);
    const pointer = new Pointer(calls, 5_000, () => page);
    const ref = await calls.element(1);
    const error = await assertRejects(
      async () => await pointer.mouse(await pointer.aim(ref, 1), "click", "left", []),
      ActionError,
    );
    assertEquals(error.code, "target-moved");
  });
});
