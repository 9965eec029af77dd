// Production component libraries from npm: their data tables get
// no ids on rows, cells and headers that do nothing (hover styling, a
// library's click and resize handlers, delegated row handlers); a header
// announced as sortable and a row with a pointer cursor of its own keep one.
// Web components' checkboxes and switches are ticked through their ids,
// though a hit test on their slotted label text answers with their own host.
// Their modal dialogs give ids to what is inside only (a title bar listened
// for dragging is none), and their dialog, date picker and web-component
// table tasks succeed through the observation.
import { assert, assertEquals } from "@std/assert";
import { Browser, newContext } from "../../../engine/browser/browser.ts";
import type { BrowserContext } from "../../../engine/browser/browser_context.ts";
import type { Page } from "../../../engine/browser/page.ts";
import { Observer } from "../../../engine/observe/observer.ts";
import { Env } from "../../../engine/env.ts";
import type { EnvObservation } from "../../../engine/env_types.ts";
import { serveApps } from "../../../fixtures/apps/mod.ts";
import type { TaskAgent } from "../../../fixtures/apps/tasks.ts";
import { LIBRARY_TASKS } from "../../../fixtures/apps/tasks_libraries.ts";

const WAIT_READY = `new Promise((resolve) => { const start = Date.now();
  const poll = () => window.__appReady ? resolve(true) : Date.now() - start > 15000 ? resolve(false) : setTimeout(poll, 10);
  poll(); })`;

async function ready(page: Page): Promise<void> {
  const { result } = await page.session.send("Runtime.evaluate", {
    expression: WAIT_READY,
    awaitPromise: true,
    returnByValue: true,
  });
  assertEquals(result.value, true, "the page got ready");
}

/** Goes to a library page, waits until its app says it is ready, and observes it. */
async function openReady(env: Env, url: string): Promise<EnvObservation> {
  await env.step({ action: "goto", url });
  assertEquals(await env.evaluate(WAIT_READY), true, `${url} got ready`);
  return await env.observe();
}

/** A new page of the context at a desktop's size (1280×800), as the libraries' layouts expect. */
async function desktopPage(context: BrowserContext): Promise<Page> {
  const page = await context.newPage();
  await page.session.send("Emulation.setDeviceMetricsOverride", {
    width: 1280,
    height: 800,
    deviceScaleFactor: 1,
    mobile: false,
  });
  return page;
}

const TABLE_PARTS = new Set(["row", "cell", "gridcell", "columnheader", "rowheader"]);

Deno.test("Observer.observe() gives no ids to the cells of library data tables that do nothing", async (t) => {
  await using server = await serveApps();
  await using browser = await Browser.launch();
  await using context = await newContext(browser);
  const observer = Observer.attach(context);
  const page = await desktopPage(context);
  // Per page: the table parts that keep an id (role and name).
  const expected: Record<string, string[]> = {
    "/naive-table": [],
    "/mui-table": [],
    "/prime-table": [],
    // Web components' own tables: Carbon's cds-table, Vaadin's grid (focusable gridcells).
    "/carbon-table": [],
    "/vaadin-table": [],
    // aria-sort announces the sortable header.
    "/bootstrap-table": ["columnheader Age"],
    // The sortable column has a pointer cursor of its own; a row click handler draws one on rows.
    "/quasar-table": [
      "columnheader arrow_upward Age",
      ...[0, 1, 2, 3, 4].map((i) =>
        `row ${
          [
            "Ada Byron London 36",
            "Grace Hopper New York 85",
            "Alan Turing Wilmslow 41",
            "Edsger Dijkstra Nuenen 72",
            "Barbara Liskov Boston 86",
          ][i]
        }`
      ),
    ],
  };
  for (const [path, parts] of Object.entries(expected)) {
    await t.step(path, async () => {
      await page.session.send("Page.navigate", { url: server.url(path) });
      await ready(page);
      const { elements, text } = await observer.observe(page);
      const kept = elements.filter((el) => TABLE_PARTS.has(el.role)).map((el) =>
        `${el.role} ${el.name}`
      );
      assertEquals(kept, parts, text);
    });
  }
});

Deno.test("Env.step() ticks web components' checkboxes and switches (Carbon on Lit, Ionic on Stencil, Material Web)", async (t) => {
  await using server = await serveApps();
  await using browser = await Browser.launch();
  await using env = await Env.create(browser, { startUrl: "about:blank" });
  const open = (path: string) => openReady(env, server.url(path));
  const state = async () => await env.evaluate("window.__state") as Record<string, unknown>;
  // Per page: [action, role, name, the state key and value it sets]. Material Web's controls
  // are named by the labels around their hosts, outside their shadow roots.
  const cases: Record<string, [string, string, string, string, unknown][]> = {
    "/carbon-form": [
      ["check", "checkbox", "I accept the terms and the privacy policy", "terms", true],
      ["check", "checkbox", "Send me the newsletter", "news", true],
      ["uncheck", "checkbox", "I accept the terms and the privacy policy", "terms", false],
      ["uncheck", "switch", "Email alerts", "alerts", false],
    ],
    "/ionic-form": [
      ["check", "checkbox", "I accept the terms", "terms", true],
      ["uncheck", "switch", "Email alerts", "alerts", false],
    ],
    "/material-form": [
      ["check", "checkbox", "I accept the terms", "terms", true],
      ["uncheck", "switch", "Email alerts", "alerts", false],
    ],
  };
  for (const [path, steps] of Object.entries(cases)) {
    await t.step(path, async () => {
      let observation = await open(path);
      for (const [action, role, name, key, value] of steps) {
        const element = observation.elements.find((el) =>
          el.role === role && (name === "" || el.name === name)
        );
        assert(element, `no ${role} "${name}" in:\n${observation.text}`);
        // A refused action (`covered` by the component's own host) throws.
        const step = await env.step({ action, id: element.id });
        assertEquals((await state())[key], value, `${action} ${role} "${name}"`);
        observation = step.observation;
      }
      // One control, one id: the drawn parts of a control inside its label get none.
      assertEquals(
        observation.elements.filter((el) => el.role === "clickable"),
        [],
        observation.text,
      );
    });
  }
});

Deno.test("Env.step() settles after a select's menu has animated in, and says so", async () => {
  await using server = await serveApps();
  await using browser = await Browser.launch();
  await using env = await Env.create(browser, { startUrl: "about:blank" });
  const observation = await openReady(env, server.url("/material-form"));
  const plan = observation.elements.find((el) => el.role === "combobox" && el.name === "Plan");
  assert(plan, observation.text);
  // Material Web's menu opens with Web Animations (fade and grow, items staggered): mid-way,
  // only some options show.
  const step = await env.step({ action: "click", id: plan.id });
  const options = step.observation.elements.filter((el) => el.role === "option");
  assertEquals(options.map((el) => el.name), ["Free", "Pro", "Team"], step.observation.text);
  assert(step.result.settle?.waitedFor.includes("animations"), JSON.stringify(step.result.settle));
});

Deno.test("Observer.observe() names a library's input from the placeholder it draws, and gives bare widget parts no id", async () => {
  await using server = await serveApps();
  await using browser = await Browser.launch();
  await using context = await newContext(browser);
  const observer = Observer.attach(context);
  const page = await desktopPage(context);
  await page.session.send("Page.navigate", { url: server.url("/naive-form") });
  await ready(page);
  const form = await observer.observe(page);
  // Naive UI draws each placeholder in a div beside its input, inside a listened or
  // focusable wrapper: one id per field, on the input, named by the drawn words.
  assertEquals(
    form.elements.map((el) => `${el.role} ${el.name}`),
    ["textbox Destination city", "textbox Favourite fruit", "textbox Departure date"],
    form.text,
  );
  for (const words of ["Destination city", "Favourite fruit", "Departure date"]) {
    assertEquals(form.text.split(words).length, 2, `"${words}" is said once:\n${form.text}`);
  }
  // The data table's column resize handles and the pager's disabled arrow: no text, no name.
  await page.session.send("Page.navigate", { url: server.url("/naive-table") });
  await ready(page);
  const table = await observer.observe(page);
  // The next-page arrow, an unnamed icon with a pointer cursor, stays.
  const bare = table.elements.filter((el) =>
    el.role === "clickable" && !el.name && !el.cues.includes("pointer")
  );
  assertEquals(bare, [], table.text);
});

Deno.test("Observer.observe() gives a web component's field label no id beside its control", async () => {
  await using server = await serveApps();
  await using browser = await Browser.launch();
  await using context = await newContext(browser);
  const observer = Observer.attach(context);
  const page = await context.newPage();
  await page.session.send("Page.navigate", { url: server.url("/vaadin-form") });
  await ready(page);
  const { elements, text } = await observer.observe(page);
  // Vaadin listens on each field's label (to focus the field) and, for its select, on the
  // box around the slotted label: one control, one id.
  assertEquals(
    elements.map((el) => `${el.role} ${el.name}`),
    [
      "textbox Nickname",
      "button Plan",
      "combobox City",
      "combobox Start date",
      "checkbox I accept the terms",
    ],
    text,
  );
  for (const words of ["Nickname", "Plan", "City", "Start date"]) {
    assertEquals(text.split(words).length, 2, `"${words}" is said once:\n${text}`);
  }
});

Deno.test("Observer.observe() reaches a text field drawn transparent under its label until focused", async () => {
  await using server = await serveApps();
  await using browser = await Browser.launch();
  await using env = await Env.create(browser, { startUrl: "about:blank" });
  const observation = await openReady(env, server.url("/material-form"));
  const field = observation.elements.find((el) => el.role === "textbox" && el.name === "Nickname");
  assert(field, observation.text);
  await env.step({ action: "type", id: field.id, text: "ada" });
  assertEquals(
    await env.evaluate("document.getElementById('nick').value"),
    "ada",
  );
});

Deno.test("Env.step() works inside library modal dialogs: ids inside while open, none behind", async (t) => {
  await using server = await serveApps();
  await using browser = await Browser.launch();
  await using env = await Env.create(browser, { startUrl: "about:blank" });
  // Per page: the ids the open dialog shows (role and name), nothing else. React-Bootstrap's
  // Modal listens on its full-screen dialog box (a backdrop click closes it): a container.
  const cases: Record<string, string[]> = {
    "/naive-dialog": ["button close", "textbox Project name", "button Cancel", "button Save"],
    "/bootstrap-dialog": ["button Close", "textbox Project name", "button Cancel", "button Save"],
    "/material-dialog": ["textbox Project name", "button Cancel", "button Save"],
    "/quasar-dialog": ["textbox Project name", "button Cancel", "button Save"],
    "/carbon-dialog": ["button Close", "textbox Project name", "button Cancel", "button Save"],
    // PrimeReact listens on the title bar to drag the dialog: the title names the dialog.
    "/prime-form": ["button Close", "textbox Project name", "button Cancel", "button Save"],
  };
  for (const [path, inside] of Object.entries(cases)) {
    await t.step(path, async () => {
      let observation = await openReady(env, server.url(path));
      const opener = observation.elements.find((el) => el.name === "Rename project");
      assert(opener, observation.text);
      let step = await env.step({ action: "click", id: opener.id });
      observation = step.observation;
      assertEquals(
        observation.elements.map((el) => `${el.role} ${el.name}`),
        inside,
        observation.text,
      );
      const field = observation.elements.find((el) => el.role === "textbox")!;
      step = await env.step({ action: "type", id: field.id, text: "Orchard" });
      const save = step.observation.elements.find((el) => el.name === "Save");
      assert(save, step.observation.text);
      step = await env.step({ action: "click", id: save.id });
      assertEquals(await env.evaluate("window.__state.name"), "Orchard");
      // Closed: the page behind has its ids back, the dialog's are gone.
      const names = step.observation.elements.map((el) => el.name);
      assert(names.includes("Rename project"), step.observation.text);
      assert(!names.includes("Save"), step.observation.text);
    });
  }
});

Deno.test("the library dialog, date picker and web-component table tasks succeed through the observation and actions", async (t) => {
  await using server = await serveApps();
  await using browser = await Browser.launch();
  await using env = await Env.create(browser, { startUrl: "about:blank" });
  const agent: TaskAgent = {
    observe: () => env.observe(),
    act: async (action) => (await env.step(action)).observation,
  };
  for (
    const task of LIBRARY_TASKS.filter((task) =>
      /-(dialog|date)$|^(carbon|vaadin)-table-/.test(task.name)
    )
  ) {
    await t.step(task.name, async () => {
      for (const seed of [0, 1]) {
        await env.step({ action: "goto", url: server.url(task.page) });
        assertEquals(await env.evaluate(WAIT_READY), true, `${task.page} got ready`);
        await task.solve(agent, seed);
        assertEquals(
          await env.evaluate(task.check(seed)),
          true,
          `${task.instruction(seed)}: ${JSON.stringify(await env.evaluate("window.__state"))}`,
        );
      }
    });
  }
});

Deno.test("Env.step() opens Vaadin's date picker: the month's days get ids, the form behind none", async () => {
  await using server = await serveApps();
  await using browser = await Browser.launch();
  await using env = await Env.create(browser, { startUrl: "about:blank" });
  const form = await openReady(env, server.url("/vaadin-form"));
  const field = form.elements.find((el) => el.role === "combobox" && el.name === "Start date");
  assert(field, form.text);
  const { observation } = await env.step({ action: "click", id: field.id });
  // The calendar is a modal overlay: the other fields are behind it; the field stays typable.
  const names = observation.elements.map((el) => el.name);
  for (const behind of ["Nickname", "Plan", "City", "I accept the terms"]) {
    assert(
      !names.includes(behind),
      `${behind} has an id behind the calendar:\n${observation.text}`,
    );
  }
  const now = new Date();
  const days = new Date(now.getFullYear(), now.getMonth() + 1, 0).getDate();
  const month = now.toLocaleString("en-US", { month: "long" });
  assertEquals(
    observation.elements.filter((el) =>
      el.role === "gridcell" && new RegExp(`^\\d+ ${month} `).test(el.name)
    ).length,
    days,
    observation.text,
  );
});
