// Controls a page shows only while the pointer is over their container
// (wp-admin's row actions, the `/row-actions` fixture: `left: -9999em` until
// `tr:hover .row-actions`) get ids, boxed as their row, and a click on one
// moves the pointer over the row first; an element hidden off-screen with no
// hover rule (a skip link) gets none. One hidden by `visibility: hidden`
// until its card is hovered is named by its own words, with the hover cue.
import { assert, assertEquals, assertStringIncludes } from "@std/assert";
import { Browser } from "../../../engine/browser/browser.ts";
import { Env } from "../../../engine/env.ts";
import { servePages } from "../../../fixtures/pages/mod.ts";

Deno.test("a row's actions revealed on hover get ids, and clicking one hovers its row first", async () => {
  await using server = servePages();
  await using browser = await Browser.launch();
  await using env = await Env.create(browser, { startUrl: server.url("/row-actions") });
  const observation = await env.observe();
  const trash = observation.elements.find((el) => el.name === "Move “Second post” to the Trash");
  assert(trash, observation.text);
  const title = observation.elements.find((el) => el.name === "Second post");
  assert(title, observation.text);
  // Boxed as its row, which the pointer goes to: the row holds the title link.
  const [, rowY, , rowHeight] = trash.box;
  const [, titleY] = title.box;
  assert(rowY <= titleY && rowY + rowHeight > titleY, `${trash.box} ${title.box}`);
  assertEquals(trash.inViewport, true);
  assert(!observation.elements.some((el) => el.name === "Skip to the posts"), observation.text);
  const result = await env.step({ action: "click", id: trash.id });
  assertStringIncludes(result.observation.text, "Trashed: Second post");
});

Deno.test("a button hidden until its card is hovered is named by its own words, with the hover cue", async () => {
  await using server = servePages();
  await using browser = await Browser.launch();
  await using env = await Env.create(browser, { startUrl: server.url("/row-actions") });
  const observation = await env.observe();
  const hide = observation.elements.find((el) => el.role === "button" && el.name === "Hide");
  assert(hide, observation.text);
  assertEquals(hide.cues, ["hover"]);
  assert(
    !observation.elements.some((el) => el.role === "button" && el.name === ""),
    observation.text,
  );
  assertStringIncludes(observation.text, `[${hide.id}] button "Hide" hover`);
  const result = await env.step({ action: "click", id: hide.id });
  assertStringIncludes(result.observation.text, "Hidden: Ada Lovelace");
});
