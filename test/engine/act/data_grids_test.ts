// A data grid whose cells turn into fields when clicked (Tabulator, from
// npm): nothing a person sees says a cell is editable, but it is in the tab
// order with a click listener of its own, which the cells of grids that do
// nothing on a click are not (Vaadin's roving tab stop: `libraries_test.ts`).
import { assert, assertEquals } from "@std/assert";
import { Browser } from "../../../engine/browser/browser.ts";
import { serveApps } from "../../../fixtures/apps/mod.ts";
import { TABULATOR_PEOPLE } from "../../../fixtures/apps/pages_tabulator.ts";
import { openAppPage, pageValue } from "./_app_pages.ts";

Deno.test("Env.step() edits a Tabulator cell: the editable cells get ids, a click gives a field, Enter saves", async () => {
  await using server = await serveApps();
  await using browser = await Browser.launch();
  await using env = await openAppPage(browser, server, "/tabulator");
  const observation = await env.observe();
  const cells = observation.elements.filter((el) => el.role === "gridcell");
  // The Name column's cells on the first page; the Role and Age cells do nothing on a click.
  assertEquals(
    cells.map((el) => el.name),
    TABULATOR_PEOPLE.slice(0, 5).map(([name]) => name),
    observation.text,
  );
  let step = await env.step({ action: "click", id: cells[2]!.id });
  const field = step.observation.elements.find((el) =>
    el.role === "textbox" && el.value === "Alan Turing"
  );
  assert(field, `no field holding the name after the click:\n${step.observation.text}`);
  step = await env.step({ action: "type", id: field.id, text: "Alan M. Turing", enter: true });
  assertEquals(
    await pageValue(env, "JSON.stringify(window.__team)"),
    JSON.stringify(
      TABULATOR_PEOPLE.map(([name]) => name === "Alan Turing" ? "Alan M. Turing" : name),
    ),
  );
  // The cell is itself again, under its id, with the new name.
  const cell = step.observation.elements.find((el) => el.id === cells[2]!.id);
  assertEquals(cell?.name, "Alan M. Turing", step.observation.text);
});
