// A control that the page's scroll left under a toolbar fixed to the top (wp-admin's, after an
// AJAX action scrolled the list) is there for a person, who scrolls it out: the observation
// keeps its id, out of view, and a click scrolls it to the middle and lands on it. A full-view
// overlay still covers for good.
import { assert, assertEquals, assertRejects } from "@std/assert";
import { Actor } from "../../../engine/act/actor.ts";
import { ActionError } from "../../../engine/act/errors.ts";
import { Browser, newContext } from "../../../engine/browser/browser.ts";
import { Observer } from "../../../engine/observe/observer.ts";
import { Settler } from "../../../engine/settle/settler.ts";
import { serveSpa } from "../../../fixtures/spa/mod.ts";
import { evaluate } from "../../_util/page_eval.ts";

Deno.test("controls scrolled under a fixed top bar keep their ids and take clicks", async () => {
  await using server = serveSpa();
  await using browser = await Browser.launch();
  await using context = await newContext(browser);
  const settler = Settler.install(context);
  const observer = Observer.attach(context);
  const page = await context.newPage(`${server.origin}/act/under-bar`);
  const actor = new Actor(context, { resolver: observer, settler });
  // The search form and the link now lie under the 48 px bar, partly in the viewport.
  await evaluate(page, "window.scrollTo(0, 60)");
  assertEquals(
    await evaluate(page, "document.elementFromPoint(20, 20).closest('#bar') !== null"),
    true,
  );
  const under = await evaluate(
    page,
    "[$('#q').getBoundingClientRect().top, $('#all').getBoundingClientRect().top]",
  ) as number[];
  assert(under.every((top) => top > -20 && top < 48), `under the bar: ${under}`);

  const { elements } = await observer.observe(page);
  const box = elements.find((el) => el.role === "searchbox" && el.name === "Search comments");
  const all = elements.find((el) => el.role === "link" && el.name === "All (900)");
  assert(box, "the search box keeps its id under the bar");
  assert(all, "the link keeps its id under the bar");
  await actor.act({ action: "type", id: box.id, text: "Tara" });
  await actor.act({ action: "click", id: all.id });
  assertEquals(await evaluate(page, "window.__log"), [{ click: "all" }]);
  assertEquals(await evaluate(page, "$('#q').value"), "Tara");

  // An overlay over the whole view is no bar: what lies under it has no id, and a click is refused.
  await evaluate(page, "window.scrollTo(0, 60); $('#overlay').style.display = 'block'");
  const covered = await observer.observe(page);
  assert(
    !covered.elements.some((el) => el.name === "All (900)"),
    "nothing under a full-view overlay is offered",
  );
  const error = await assertRejects(() => actor.act({ action: "click", id: all.id }), ActionError);
  assert(["covered", "stale-id"].includes(error.code), error.message);
});
