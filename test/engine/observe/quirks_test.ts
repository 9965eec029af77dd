// A page without a doctype renders in quirks mode, where the root element's
// client box is the whole document: the observation must still know the
// viewport, or everything counts as in view and the scroll range is 0.
import { assert, assertEquals, assertMatch } from "@std/assert";
import { Browser } from "../../../engine/browser/browser.ts";
import { Env } from "../../../engine/env.ts";
import { serveHtml } from "../../_util/html_server.ts";

Deno.test("Observer.observe() judges the viewport right when the page is in quirks mode", async () => {
  const rows = Array.from({ length: 80 }, (_, i) => `<p><a href="/r${i}">Row ${i}</a></p>`).join(
    "",
  );
  await using server = serveHtml({
    "/": `<html><head><title>Quirks</title></head><body>${rows}</body></html>`,
  });
  const site = { origin: server.url("").replace(/\/$/, ""), reset: () => Promise.resolve() };
  await using browser = await Browser.launch();
  await using env = await Env.create(browser, { site });
  assertEquals(await env.evaluate("document.compatMode"), "BackCompat");
  const observation = await env.observe();
  const last = observation.elements.find((el) => el.name === "Row 79");
  assert(last, observation.text);
  assertEquals(last.inViewport, false);
  assertEquals(observation.elements.find((el) => el.name === "Row 0")?.inViewport, true);
  assertMatch(observation.text.split("\n")[0] ?? "", /scroll 0\/[1-9]\d*/);
  // And a click on a row below the fold scrolls it into view and lands.
  await env.step({ action: "click", id: last.id });
  assertMatch((await env.observe()).url, /\/r79$/);
});
