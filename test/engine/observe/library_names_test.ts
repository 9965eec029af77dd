// Names and non-targets on production component libraries' own widgets:
// the month arrows of Naive UI's and Carbon's calendars, icons
// with no accessible name, are named by the words their class gives them;
// the calendar panel that listens for keys is no target named by its
// weekday row; the month name inside flatpickr's listened header is text;
// the current page of React-Bootstrap's pager, which keeps React's click
// handler, gets no id; a select drawn as its value beside a listbox arrow
// (PrimeReact's Dropdown) gets one id, the arrow's; the host of a disabled
// button, which keeps its click listener (Carbon's pager arrow), gets none,
// and neither does the host showing a tooltip that repeats its button's name.
import { assert, assertEquals } from "@std/assert";
import { Browser } from "../../../engine/browser/browser.ts";
import { Env } from "../../../engine/env.ts";
import type { EnvObservation } from "../../../engine/env_types.ts";
import { serveApps } from "../../../fixtures/apps/mod.ts";

const WAIT_READY = `new Promise((resolve) => { const start = Date.now();
  const poll = () => window.__appReady ? resolve(true) : Date.now() - start > 15000 ? resolve(false) : setTimeout(poll, 10);
  poll(); })`;

function find(observation: EnvObservation, role: string, name: string) {
  const element = observation.elements.find((el) => el.role === role && el.name === name);
  assert(element, `no ${role} "${name}" in:\n${observation.text}`);
  return element;
}

const month = (offset: number, style: "short" | "long") => {
  const now = new Date();
  return new Date(now.getFullYear(), now.getMonth() + offset, 1).toLocaleString("en-US", {
    month: style,
  });
};

Deno.test("Observer.observe() names library calendars' icon-only month arrows by their class; their panel and month name get no id", async (t) => {
  await using server = await serveApps();
  await using browser = await Browser.launch();
  await using env = await Env.create(browser, { startUrl: "about:blank" });
  const open = async (path: string) => {
    await env.step({ action: "goto", url: server.url(path) });
    assertEquals(await env.evaluate(WAIT_READY), true, `${path} got ready`);
    const form = await env.observe();
    return (await env.step({ action: "click", id: find(form, "textbox", "Due date").id }))
      .observation;
  };
  await t.step("Naive UI", async () => {
    const panel = await open("/naive-dialog");
    const unnamed = panel.elements.filter((el) => el.name === "");
    assertEquals(unnamed, [], panel.text);
    for (const name of ["fast previous", "previous", "next", "fast next"]) {
      find(panel, "clickable", name);
    }
    // The panel (focusable, listening for keys) holds the days: not a target named "Su Mo …".
    assert(!panel.elements.some((el) => el.name.startsWith("Su Mo")), panel.text);
    const { observation } = await env.step({
      action: "click",
      id: find(panel, "clickable", "next").id,
    });
    const year = new Date(new Date().getFullYear(), new Date().getMonth() + 1, 1).getFullYear();
    find(observation, "clickable", `${month(1, "short")} ${year}`);
  });
  await t.step("Carbon", async () => {
    const panel = await open("/carbon-dialog");
    assertEquals(panel.elements.filter((el) => el.name === ""), [], panel.text);
    find(panel, "clickable", "previous month");
    // flatpickr listens on the header around the arrows and the month's name: the name is text.
    assert(!panel.elements.some((el) => el.name === month(0, "long")), panel.text);
    assert(panel.text.includes(month(0, "long")), panel.text);
    const { observation } = await env.step({
      action: "click",
      id: find(panel, "clickable", "next month").id,
    });
    assert(observation.text.includes(month(1, "long")), observation.text);
  });
});

Deno.test("Observer.observe() gives a pager's current item no id though it keeps its click handler", async () => {
  await using server = await serveApps();
  await using browser = await Browser.launch();
  await using env = await Env.create(browser, { startUrl: "about:blank" });
  await env.step({ action: "goto", url: server.url("/bootstrap-table") });
  assertEquals(await env.evaluate(WAIT_READY), true);
  let observation = await env.observe();
  // React-Bootstrap renders the current page as `<span class="page-link">` in `li.active`.
  const pager = (o: EnvObservation) =>
    o.elements.filter((el) => /^\d/.test(el.name)).map((el) => `${el.role} ${el.name}`);
  assertEquals(pager(observation), ["button 2", "button 3"], observation.text);
  observation = (await env.step({ action: "click", id: find(observation, "button", "2").id }))
    .observation;
  assertEquals(await env.evaluate("window.__state.page"), 2);
  assertEquals(pager(observation), ["button 1", "button 3"], observation.text);
});

Deno.test("Observer.observe() gives a listened host of a disabled button no id of its own (Carbon's pager arrow)", async () => {
  await using server = await serveApps();
  await using browser = await Browser.launch();
  await using env = await Env.create(browser, { startUrl: "about:blank" });
  await env.step({ action: "goto", url: server.url("/carbon-table") });
  assertEquals(await env.evaluate(WAIT_READY), true);
  let observation = await env.observe();
  // `cds-button` listens for clicks on its host; on the first page its shadow button is disabled.
  const arrows = (o: EnvObservation) =>
    o.elements.filter((el) => /page$|^icon in/.test(el.name)).map((el) => `${el.role} ${el.name}`);
  assertEquals(arrows(observation), ["button Next page"], observation.text);
  observation =
    (await env.step({ action: "click", id: find(observation, "button", "Next page").id }))
      .observation;
  // Enabled on the second page: its button takes the id. The pointer rests on Next page,
  // whose host shows the tooltip "Next page": the button's name, no target of its own.
  assertEquals(arrows(observation), ["button Previous page", "button Next page"], observation.text);
});

Deno.test("Observer.observe() gives a select drawn as its value beside an arrow one id, the arrow's (PrimeReact's Dropdown)", async () => {
  await using server = await serveApps();
  await using browser = await Browser.launch();
  await using env = await Env.create(browser, { startUrl: "about:blank" });
  await env.step({ action: "goto", url: server.url("/prime-form") });
  assertEquals(await env.evaluate(WAIT_READY), true);
  // The listened box shows the value; the listbox trigger inside it is the arrow.
  const plan = (o: EnvObservation) =>
    o.elements.filter((el) => /plan|^(Free|Pro|Team)$/.test(el.name)).map((el) =>
      `${el.role} ${el.name}`
    );
  let observation = await env.observe();
  assertEquals(plan(observation), ["button Choose a plan"], observation.text);
  observation = (await env.step({
    action: "click",
    id: find(observation, "button", "Choose a plan").id,
  })).observation;
  observation = (await env.step({ action: "click", id: find(observation, "option", "Pro").id }))
    .observation;
  assertEquals(await env.evaluate("window.__state.plan"), "pro");
  assertEquals(plan(observation), ["button Choose a plan"], observation.text);
  assert(/\bPro\b/.test(observation.text), observation.text);
});
