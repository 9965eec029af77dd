// Small vanilla libraries from npm: vanillajs-datepicker, whose panel
// listens once for every click and whose days show a pointer cursor only
// while hovered, Awesomplete, whose combobox is its own search field, and
// IMask, whose phone mask puts a fixed country code first.
import { assert, assertEquals, assertRejects } from "@std/assert";
import { ActionError } from "../../../engine/act/errors.ts";
import { Browser } from "../../../engine/browser/browser.ts";
import { serveApps } from "../../../fixtures/apps/mod.ts";
import { openAppPage, pageValue } from "./_app_pages.ts";

Deno.test("Env.step() picks a vanillajs-datepicker day, each day an id by its pointer cursor on hover, selects over Awesomplete's held choice, types through IMask's mask", async () => {
  await using server = await serveApps();
  await using browser = await Browser.launch();
  await using env = await openAppPage(browser, server, "/vanilla-trip");
  let observation = await env.observe();
  const field = observation.elements.find((el) => el.name === "Guide's language");
  assert(field, observation.text);
  // A label longer than one `type` takes is refused before anything reaches the page.
  await assertRejects(
    () => env.step({ action: "select", id: field.id, option: "x".repeat(100_000) }),
    ActionError,
    'the most one "select" takes',
  );
  assertEquals(await pageValue(env, "document.getElementById('lang').value"), "JavaScript");
  // The field holds "JavaScript": the search for another replaces it, not runs on after it.
  let step = await env.step({ action: "select", id: field.id, option: "Python" });
  assertEquals(step.result.detail, "Python");
  // IMask's phone mask puts its fixed country code first: the digits typed are there, taken.
  const phone = step.observation.elements.find((el) => el.name === "Phone");
  step = await env.step({ action: "type", id: phone!.id, text: "5550104477" });
  assertEquals(
    step.observation.elements.find((el) => el.id === phone!.id)?.value,
    "+1 (555) 010-4477",
  );
  observation = step.observation;
  const departure = observation.elements.find((el) => el.name === "Departure");
  step = await env.step({ action: "click", id: departure!.id });
  const days = step.observation.elements.filter((el) => /^\d+$/.test(el.name));
  // Six weeks of days, each its own id; the weekday names are text, and the panel around is none.
  assertEquals(days.length, 42, step.observation.text);
  assert(step.observation.text.includes("Su · Mo · Tu"), step.observation.text);
  assert(!step.observation.elements.some((el) => /^Su Mo/.test(el.name)), step.observation.text);
  await env.step({ action: "click", id: days.find((el) => el.name === "17")!.id });
  assertEquals(
    await pageValue(env, "JSON.stringify(window.__trip)"),
    JSON.stringify({ language: "Python", departure: "12/17/2026", phone: "+1 (555) 010-4477" }),
  );
});
