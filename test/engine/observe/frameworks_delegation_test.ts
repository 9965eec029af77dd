// A framework that delegates its events listens on the box it mounts into:
// that box is no target, and the elements whose handlers it keeps are (a
// Svelte 5 app keeps them under a symbol of its own, `Symbol("events")`).
import { assert, assertEquals, assertStringIncludes } from "@std/assert";
import { Browser } from "../../../engine/browser/browser.ts";
import { serveApps } from "../../../fixtures/apps/mod.ts";
import { openAppPage, pageValue } from "../act/_app_pages.ts";

Deno.test("Env.observe() reads a Svelte 5 app mounted in a box as its parts, its delegated targets with ids", async () => {
  await using server = await serveApps();
  await using browser = await Browser.launch();
  await using env = await openAppPage(browser, server, "/svelte-feedback");
  const observation = await env.observe();
  // Before: the box was one clickable named by the widget's text, and the two answers,
  // plain spans with delegated handlers only, had no id.
  assertEquals(
    observation.elements.map((el) => `${el.role} ${el.name}`),
    [
      "clickable Yes, it helped",
      "clickable Not really",
      "button Clear my answer",
      "link Help centre",
    ],
    observation.text,
  );
  assertStringIncludes(observation.text, "heading Was this page helpful?");
  const yes = observation.elements.find((el) => el.name === "Yes, it helped");
  assert(yes);
  const step = await env.step({ action: "click", id: yes.id });
  assertStringIncludes(step.observation.text, "Thanks for your answer: yes.");
  assertEquals(await pageValue(env, "globalThis.__feedback"), { yes: 13, no: 3, said: "yes" });
});
