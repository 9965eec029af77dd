// `type` into date-like fields reads what a person types, in the page's
// locale: unit cases for the reader, and the booking fixtures in en-US and
// en-GB, where typing used to be refused with value-not-set.
import { assertEquals, assertRejects, assertStringIncludes } from "@std/assert";
import { ActionError } from "../../../engine/act/errors.ts";
import { readDate, readTime, toInputValue } from "../../../engine/act/_dates.ts";
import { Browser } from "../../../engine/browser/browser.ts";
import type { Page } from "../../../engine/browser/page.ts";
import { servePages } from "../../../fixtures/pages/mod.ts";
import { actorOn } from "./_actor_on.ts";

Deno.test("toInputValue() reads dates and times as people write them, in the locale's order", () => {
  assertEquals(readTime("8:22 AM"), "08:22");
  assertEquals(readTime("8:22 pm"), "20:22");
  assertEquals(readTime("12:05 a.m."), "00:05");
  assertEquals(readTime("8 PM"), "20:00");
  assertEquals(readTime("20:22:15"), "20:22:15");
  assertEquals(readTime("13:00 PM"), undefined);
  assertEquals(readTime("8"), undefined);
  assertEquals(readDate("09/10/2012", "en-US"), "2012-09-10");
  assertEquals(readDate("09/10/2012", "en-GB"), "2012-10-09");
  assertEquals(readDate("10.09.2012", "en-US"), "2012-09-10");
  assertEquals(readDate("2012-09-10", "en-GB"), "2012-09-10");
  assertEquals(readDate("Sep 10, 2012", "en-GB"), "2012-09-10");
  assertEquals(readDate("Monday, 10th September 2012", "en-US"), "2012-09-10");
  assertEquals(readDate("10. September 2012", "de-DE"), "2012-09-10");
  assertEquals(readDate("10 septembre 2012", "fr"), "2012-09-10");
  assertEquals(readDate("2/30/2012", "en-US"), undefined);
  assertEquals(readDate("next Tuesday", "en-US"), undefined);
  assertEquals(toInputValue("datetime-local", "09/10/2012 8:22 AM", "en-US"), "2012-09-10T08:22");
  assertEquals(
    toInputValue("datetime-local", "Sep 10, 2012 at 20:22", "en-US"),
    "2012-09-10T20:22",
  );
  assertEquals(toInputValue("datetime-local", "2012-09-10T08:22", "en-US"), "2012-09-10T08:22");
  assertEquals(toInputValue("month", "September 2012", "en-US"), "2012-09");
  assertEquals(toInputValue("month", "09/2012", "en-US"), "2012-09");
  assertEquals(toInputValue("week", "Week 37, 2012", "en-US"), "2012-W37");
  assertEquals(toInputValue("week", "2012-W37", "en-US"), "2012-W37");
  assertEquals(toInputValue("week", "2012-W53", "en-US"), undefined);
  assertEquals(toInputValue("week", "2015-W53", "en-US"), "2015-W53");
});

async function value(page: Page, selector: string): Promise<unknown> {
  const { result } = await page.session.send("Runtime.evaluate", {
    expression: `document.querySelector(${JSON.stringify(selector)}).value`,
    returnByValue: true,
  });
  return result.value;
}

const FIELDS = { 1: "#day", 2: "#arrival", 3: "#reminder", 4: "#billing", 5: "#week" };

Deno.test("Actor.act() types a date or time as a person would, in the page's locale, and reads it back", async () => {
  await using server = servePages();
  await using browser = await Browser.launch();
  const open = (lang: string) => actorOn(browser, server.url(`/booking-${lang}`), FIELDS);
  {
    const { context, page, actor } = await open("en-US");
    await using _ = context;
    const typed = await actor.act({ action: "type", id: 2, text: "8:22 AM" });
    assertEquals(typed.detail, 'read "8:22 AM" as 08:22');
    await actor.act({ action: "type", id: 1, text: "09/10/2012" });
    await actor.act({ action: "type", id: 3, text: "09/10/2012 8:22 PM" });
    await actor.act({ action: "type", id: 4, text: "September 2012" });
    await actor.act({ action: "type", id: 5, text: "Week 37, 2012" });
    assertEquals(await value(page, "#arrival"), "08:22");
    assertEquals(await value(page, "#day"), "2012-09-10");
    assertEquals(await value(page, "#reminder"), "2012-09-10T20:22");
    assertEquals(await value(page, "#billing"), "2012-09");
    assertEquals(await value(page, "#week"), "2012-W37");
    // Refused only what cannot be read, with the format in the message.
    const error = await assertRejects(
      () => actor.act({ action: "type", id: 1, text: "next Tuesday" }),
      ActionError,
    );
    assertEquals(error.code, "value-not-set");
    assertStringIncludes(error.message, '"YYYY-MM-DD"');
    assertStringIncludes(error.message, "en-US");
    assertEquals(await value(page, "#day"), "2012-09-10");
  }
  {
    const { context, page, actor } = await open("en-GB");
    await using _ = context;
    await actor.act({ action: "type", id: 1, text: "09/10/2012" });
    assertEquals(await value(page, "#day"), "2012-10-09");
  }
});
