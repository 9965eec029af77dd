// More libraries of two patterns, driven through the observation and the
// actions: Choices.js (a combobox that filters as it is typed into and lists
// only some options until then), Tom Select (its combobox input hidden once
// an item is chosen), dnd-kit (pointer-driven sortable lists whose drag
// starts past a distance, or after a held press), dragula (cards a
// library moves while listening on the document alone), react-select (its
// input emptied once an option is chosen) and Headless UI's listbox (a native
// button with no role written).
import { assert, assertEquals, assertStringIncludes } from "@std/assert";
import { ActionError } from "../../../engine/act/errors.ts";
import { Browser } from "../../../engine/browser/browser.ts";
import type { EnvObservation } from "../../../engine/env_types.ts";
import { serveApps } from "../../../fixtures/apps/mod.ts";
import { DRAGULA_LANES, PANGEA_LANES } from "../../../fixtures/apps/pages_pickers_sortables.ts";
import { openAppPage, pageValue } from "./_app_pages.ts";

function elementOf(observation: EnvObservation, role: string, name: string, nth = 0) {
  const element = observation.elements.filter((el) => el.role === role && el.name === name)[nth];
  assert(element, `no ${role} "${name}" (#${nth}) in:\n${observation.text}`);
  return element;
}

Deno.test("Env.step() selects Choices.js options, listed or found by typing, and the page takes them", async () => {
  await using server = await serveApps();
  await using browser = await Browser.launch();
  await using env = await openAppPage(browser, server, "/choices");
  let observation = await env.observe();
  const assignee = elementOf(observation, "combobox", "Assignee");
  // Listed before typing: the option is clicked in the open dropdown.
  let step = await env.step({ action: "select", id: assignee.id, option: "Barbara Liskov" });
  assertEquals(await pageValue(env, `document.getElementById("assignee").value`), "u3");
  assertStringIncludes(step.observation.text, "Assigned to Barbara Liskov");
  // Not listed until typed (Choices renders eight): typed into its search field, then clicked.
  step = await env.step({ action: "select", id: assignee.id, option: "Margaret Hamilton" });
  assertEquals(await pageValue(env, `document.getElementById("assignee").value`), "u12");
  assertStringIncludes(step.observation.text, "Assigned to Margaret Hamilton");
  assertEquals(step.result.detail, "Margaret Hamilton");
  // A listed option the picker refuses (disabled): the click lands, the control shows no
  // change, and the action says so instead of reporting a choice.
  const refused = await env.step({ action: "select", id: assignee.id, option: "Donald Knuth" })
    .then(() => "ok", (error) => error instanceof ActionError ? error.message : String(error));
  assertStringIncludes(refused, "the page did not take it");
  assertEquals(await pageValue(env, `document.getElementById("assignee").value`), "u12");
  // Its list is still open over the next field: closed as a person would.
  observation = (await env.step({ action: "press", keys: "Escape" })).observation;
  // The multiple picker adds a label.
  step = await env.step({
    action: "select",
    id: elementOf(observation, "combobox", "Labels").id,
    option: "urgent",
  });
  assertEquals(
    await pageValue(
      env,
      `[...document.getElementById("labels").selectedOptions].map((o) => o.value)`,
    ),
    ["urgent"],
  );
  assertStringIncludes(step.observation.text, "Labels: urgent");
});

Deno.test("Env.step() selects Tom Select options through what the page shows once one is chosen: its label or the chosen item", async () => {
  await using server = await serveApps();
  await using browser = await Browser.launch();
  await using env = await openAppPage(browser, server, "/tom-select");
  const value = () => pageValue(env, `document.getElementById("reviewer").value`);
  // A reviewer is chosen from the start: its input hides and the page shows a plain box
  // holding the item, beside the label. No combobox is there to act on.
  let observation = await env.observe();
  assertEquals(observation.elements.filter((el) => el.role === "combobox"), []);
  const label = observation.elements.find((el) => el.name === "Reviewer");
  assert(label, `no element named Reviewer in:\n${observation.text}`);
  // Through the label, a reviewer found by typing (four are listed before).
  let step = await env.step({ action: "select", id: label.id, option: "Margaret Hamilton" });
  assertEquals(await value(), "r8");
  assertEquals(step.result.detail, "Margaret Hamilton");
  assertStringIncludes(step.observation.text, "Reviewed by Margaret Hamilton");
  // The chosen item itself, and a reviewer found by typing.
  observation = (await env.step({ action: "press", keys: "Tab" })).observation;
  const item = observation.elements.find((el) => el.name === "Margaret Hamilton");
  assert(item, `no element named Margaret Hamilton in:\n${observation.text}`);
  step = await env.step({ action: "select", id: item.id, option: "Ken Thompson" });
  assertEquals(await value(), "r6");
  assertStringIncludes(step.observation.text, "Reviewed by Ken Thompson");
  // An option it does not have is refused with the ones it lists, and nothing changes.
  const refused = await env.step({
    action: "select",
    id: step.observation.elements.find((el) => el.name === "Reviewer")!.id,
    option: "Nobody Here",
  }).then(() => "ok", (error) => error instanceof ActionError ? error.code : String(error));
  assertEquals(refused, "option-not-found");
  assertEquals(await value(), "r6");
});

Deno.test("dragula's cards, whose library listens on the document alone, get ids by their move cursor, and drag between lanes", async () => {
  await using server = await serveApps();
  await using browser = await Browser.launch();
  await using env = await openAppPage(browser, server, "/dragula");
  const observation = await env.observe();
  for (const [, cards] of DRAGULA_LANES) {
    for (const card of cards) {
      const element = observation.elements.find((el) => el.name === card);
      assert(element, `no id for the card "${card}" in:\n${observation.text}`);
      assertEquals(element.cues, ["draggable"]);
    }
  }
  // The lanes and their headings take no id: only the cards show the move cursor.
  assertEquals(observation.elements.length, 5, observation.text);
  const card = (name: string) => observation.elements.find((el) => el.name === name)!.id;
  const step = await env.step({
    action: "drag",
    id: card("Fix the login bug"),
    to: card("Plan the sprint"),
  });
  assertEquals(step.result.detail, "dragged");
  assertStringIncludes(
    step.observation.text,
    "To do: Write the tests, Update the docs | Doing: Review the patch | Done: Fix the login bug, Plan the sprint",
  );
});

Deno.test("Env.step() drags dnd-kit items past a distance and after a held press; the order shown changes", async () => {
  await using server = await serveApps();
  await using browser = await Browser.launch();
  await using env = await openAppPage(browser, server, "/dnd-kit");
  let observation = await env.observe();
  // Drag starts once the pointer moved 10 px.
  let step = await env.step({
    action: "drag",
    id: elementOf(observation, "button", "Plan the trip").id,
    to: elementOf(observation, "button", "Pack the bags").id,
  });
  assertStringIncludes(
    step.observation.text,
    "Steps order: Book flights, Pack the bags, Plan the trip, Leave",
  );
  // Drag starts once the press was held 250 ms within 5 px: a quick move cancels it.
  observation = step.observation;
  step = await env.step({
    action: "drag",
    id: elementOf(observation, "button", "Leave", 1).id,
    to: elementOf(observation, "button", "Plan the trip", 1).id,
  });
  assertStringIncludes(
    step.observation.text,
    "Held steps order: Leave, Plan the trip, Book flights, Pack the bags",
  );
  assertStringIncludes(step.result.detail ?? "", "holding the press");
});

Deno.test("Env.step() selects react-select options (a list in a portal or inside it) and Headless UI's, judged by what the page took", async () => {
  await using server = await serveApps();
  await using browser = await Browser.launch();
  await using env = await openAppPage(browser, server, "/react-select");
  const order = () => pageValue(env, "window.__order");
  let observation = await env.observe();
  const flavour = elementOf(observation, "combobox", "Flavour");
  // The list opens in a portal at the end of the body; once chosen, the input empties and
  // the choice shows in the box beside it. Before, the action answered value-not-set.
  let step = await env.step({ action: "select", id: flavour.id, option: "Pistachio" });
  assertEquals(step.result.detail, "Pistachio");
  assertStringIncludes(step.observation.text, "Flavour: Pistachio");
  // A second choice on the same picker: what it showed before is no choice of this one.
  step = await env.step({ action: "select", id: flavour.id, option: "Lemon sorbet" });
  assertEquals(step.result.detail, "Lemon sorbet");
  // Chosen already: said, not clicked again.
  step = await env.step({ action: "select", id: flavour.id, option: "Lemon sorbet" });
  assertEquals(step.result.detail, "Lemon sorbet; it was chosen already");
  observation = step.observation;
  // The multiple picker, its list inside it: each choice adds one.
  const toppings = elementOf(observation, "combobox", "Toppings");
  await env.step({ action: "select", id: toppings.id, option: "Sauce" });
  step = await env.step({ action: "select", id: toppings.id, option: "Nuts" });
  assertEquals(step.result.detail, "Nuts");
  assertEquals(await order(), {
    flavour: "Lemon sorbet",
    toppings: ["Sauce", "Nuts"],
    cup: "Small cup",
  });
  assertStringIncludes(step.observation.text, "Toppings: Sauce, Nuts");
  // Headless UI's listbox: a native button with no role written, showing the chosen cup.
  // Before, select did not open it and answered option-not-found.
  const cup = elementOf(step.observation, "button", "Small cup");
  step = await env.step({ action: "select", id: cup.id, option: "Waffle cone" });
  assertEquals(step.result.detail, "Waffle cone");
  assertStringIncludes(step.observation.text, "Served in: Waffle cone");
  // An option the picker does not have is named as missing, with what it lists.
  const missing = await env.step({ action: "select", id: flavour.id, option: "Durian" })
    .then(() => "ok", (error) => error instanceof ActionError ? error.code : String(error));
  assertEquals(missing, "option-not-found");
  assertEquals(await order(), {
    flavour: "Lemon sorbet",
    toppings: ["Sauce", "Nuts"],
    cup: "Waffle cone",
  });
});

Deno.test("Env.step() reads a React app mounted in a box as its parts and drags @hello-pangea/dnd cards between lanes", async () => {
  await using server = await serveApps();
  await using browser = await Browser.launch();
  await using env = await openAppPage(browser, server, "/pangea-board");
  const observation = await env.observe();
  // React listens on the box it mounts into for every event: that box is no target.
  // Before, it was one clickable named by all the board's text, its headings gone.
  assertEquals(
    observation.elements.map((el) => `${el.role} ${el.name}`),
    PANGEA_LANES.flatMap(([, cards]) => cards.map((card) => `button ${card}`)),
    observation.text,
  );
  assertStringIncludes(observation.text, "heading This week");
  assertStringIncludes(observation.text, "heading Doing");
  const step = await env.step({
    action: "drag",
    id: elementOf(observation, "button", "Order lunch").id,
    to: elementOf(observation, "button", "Print badges").id,
  });
  const status = String(await pageValue(env, `document.getElementById("status").textContent`));
  assert(
    [
      "To do: Draft the agenda, Book the room, Send invites | Doing: Order lunch, Print badges",
      "To do: Draft the agenda, Book the room, Send invites | Doing: Print badges, Order lunch",
    ].includes(status),
    status,
  );
  assertStringIncludes(step.observation.text, status);
});

Deno.test("Env.step() selects Ant Design options, plain items of a popup, through the picker or the item chosen", async () => {
  await using server = await serveApps();
  await using browser = await Browser.launch();
  await using env = await openAppPage(browser, server, "/antd-select");
  const shipping = () => pageValue(env, "window.__shipping");
  const observation = await env.observe();
  // Before: option-not-found, the ARIA options being a hidden listbox of values.
  let step = await env.step({
    action: "select",
    id: elementOf(observation, "combobox", "City").id,
    option: "Paris",
  });
  assertEquals(step.result.detail, "Paris");
  assertStringIncludes(step.observation.text, "Ship to: paris");
  // The hidden listbox for screen readers (0 × 0, overflow hidden) is no text of the page.
  assert(!/^ *listbox$/m.test(step.observation.text), step.observation.text);
  // The chosen item, drawn over the input, stands for the picker now.
  const chosen = step.observation.elements.find((el) => el.name === "Paris");
  assert(chosen, step.observation.text);
  step = await env.step({ action: "select", id: chosen.id, option: "Warsaw" });
  assertEquals(step.result.detail, "Warsaw");
  step = await env.step({
    action: "select",
    id: elementOf(step.observation, "combobox", "Handling").id,
    option: "express",
  });
  assertEquals(await shipping(), { city: "warsaw", tags: ["express"] });
  assertStringIncludes(step.observation.text, "Handling: express");
});

Deno.test("Env.step() selects in Mantine's Select and MultiSelect, read-only inputs whose lists open when clicked; a missing option types into no other field", async () => {
  await using server = await serveApps();
  await using browser = await Browser.launch();
  await using env = await openAppPage(browser, server, "/mantine");
  let observation = await env.observe();
  let step = await env.step({
    action: "type",
    id: elementOf(observation, "textbox", "Full name").id,
    text: "Ada",
  });
  // An option the list does not have: the error names it, and no key went to "Full name",
  // the field the agent typed into before.
  const missing = await env.step({
    action: "select",
    id: elementOf(step.observation, "textbox", "Country").id,
    option: "Narnia",
  }).then(() => "ok", (error) => error instanceof ActionError ? error.code : String(error));
  assertEquals(missing, "option-not-found");
  assertEquals(await pageValue(env, `window.__profile.name`), "Ada");
  observation = await env.observe();
  step = await env.step({
    action: "select",
    id: elementOf(observation, "textbox", "Country").id,
    option: "Spain",
  });
  step = await env.step({
    action: "select",
    id: elementOf(step.observation, "textbox", "Tags").id,
    option: "music",
  });
  assertEquals(
    await pageValue(env, `JSON.stringify(window.__profile)`),
    JSON.stringify({ name: "Ada", country: "Spain", tags: ["music"] }),
  );
});

Deno.test("Env.step() selects in nice-select boxes, whose lists are plain items in a box of theirs, see-through while closed", async () => {
  await using server = await serveApps();
  await using browser = await Browser.launch();
  await using env = await openAppPage(browser, server, "/nice-select");
  const observation = await env.observe();
  const boxes = observation.elements.filter((el) => el.name === "Select an option");
  assertEquals(boxes.length, 2, observation.text);
  // The searchable one: found by typing into its search field, then clicked in its open list.
  let step = await env.step({ action: "select", id: boxes[0]!.id, option: "Large" });
  assertEquals(step.result.detail, "Large");
  step = await env.step({ action: "select", id: boxes[1]!.id, option: "Olive" });
  assertEquals(
    await pageValue(env, `JSON.stringify(window.__shipping)`),
    JSON.stringify({ size: "Large", colour: "Olive" }),
  );
});
