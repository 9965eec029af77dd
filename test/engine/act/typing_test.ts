// `type` succeeds only when the field holds the text: date-like, number and
// range inputs, masks, fields replaced or disabled on focus, the length cap,
// long text inserted rather than typed key by key, and tag inputs that turn
// the text into chips.
import { assert, assertEquals, assertStringIncludes } from "@std/assert";
import { Actor } from "../../../engine/act/actor.ts";
import {
  consumed,
  type FieldState,
  holds,
  TYPE_MAX_LENGTH,
  typingPlan,
} from "../../../engine/act/_typing.ts";
import { Browser, newContext } from "../../../engine/browser/browser.ts";
import { Observer } from "../../../engine/observe/observer.ts";
import type { Page } from "../../../engine/browser/page.ts";
import { Settler } from "../../../engine/settle/settler.ts";
import { serveSpa } from "../../../fixtures/spa/mod.ts";
import { SelectorResolver } from "./_selector_resolver.ts";
// React 18's UMD builds, read from the npm packages Deno installed.
import "react";
import "react-dom";
import { evaluate, rejectsWith } from "../../_util/page_eval.ts";
import { actorOn } from "./_actor_on.ts";

const IDS: Record<number, string> = {
  1: "#date",
  2: "#time",
  3: "#dtl",
  4: "#month",
  5: "#week",
  6: "#qty",
  7: "#volume",
  8: "#phone",
  9: "#swap",
  10: "#lost",
  11: "#freeze",
  12: "#limited",
  13: "#essay",
  14: "#comment",
};

function value(page: Page, selector: string): Promise<unknown> {
  return evaluate(page, `document.querySelector(${JSON.stringify(selector)}).value`);
}

Deno.test("typingPlan() types short text by keys and inserts long text in runs", () => {
  assertEquals(typingPlan("ab"), [{ key: "a" }, { key: "b" }]);
  const long = "x".repeat(60) + "\n" + "y".repeat(10);
  assertEquals(typingPlan(long), [
    { insert: "x".repeat(60) },
    { key: "\n" },
    { insert: "y".repeat(9) },
    { key: "y" },
  ]);
});

Deno.test("Actor.act() type", async (t) => {
  await using server = serveSpa();
  await using browser = await Browser.launch();

  const open = () => actorOn(browser, `${server.origin}/act/fields`, IDS);

  await t.step(
    "Observer.observe() shows the type and format when a field takes a date",
    async () => {
      await using context = await newContext(browser);
      const observer = Observer.attach(context);
      const page = await context.newPage(`${server.origin}/act/fields`);
      const { text } = await observer.observe(page);
      assertStringIncludes(text, 'textbox "Start date" type=date format=YYYY-MM-DD');
      assertStringIncludes(text, 'textbox "Meeting" type=datetime-local format=YYYY-MM-DDTHH:MM');
      assertStringIncludes(text, 'textbox "Week" type=week format=YYYY-Www');
    },
  );

  await t.step("Actor.act() sets date-like inputs when typing cannot fill them", async () => {
    const { context, page, actor } = await open();
    await using _ = context;
    await actor.act({ action: "type", id: 1, text: "2024-05-17" });
    await actor.act({ action: "type", id: 2, text: "13:45" });
    await actor.act({ action: "type", id: 3, text: "2024-05-17T13:45" });
    await actor.act({ action: "type", id: 4, text: "2024-05" });
    await actor.act({ action: "type", id: 5, text: "2024-W20" });
    assertEquals(await value(page, "#date"), "2024-05-17");
    assertEquals(await value(page, "#dtl"), "2024-05-17T13:45");
    assertEquals(await evaluate(page, "window.__log"), [
      { change: "date", value: "2024-05-17" },
      { change: "time", value: "13:45" },
      { change: "dtl", value: "2024-05-17T13:45" },
      { change: "month", value: "2024-05" },
      { change: "week", value: "2024-W20" },
    ]);
  });

  await t.step(
    "Actor.act() throws value-not-set with the format when a date cannot be read",
    async () => {
      const { context, page, actor } = await open();
      await using _ = context;
      await actor.act({ action: "type", id: 1, text: "May 17, 2024" });
      assertEquals(await value(page, "#date"), "2024-05-17");
      const error = await rejectsWith(
        actor.act({ action: "type", id: 1, text: "the 17th" }),
        "value-not-set",
        'cannot read "the 17th" as a date: type it as "YYYY-MM-DD"',
      );
      assertEquals(error.id, 1);
    },
  );

  await t.step("Actor.act() types numbers and sets ranges when the input takes them", async () => {
    const { context, page, actor } = await open();
    await using _ = context;
    await actor.act({ action: "type", id: 6, text: "42" });
    assertEquals(await value(page, "#qty"), "42");
    await rejectsWith(
      actor.act({ action: "type", id: 6, text: "lots" }),
      "value-not-set",
      "a number field takes a number",
    );
    await actor.act({ action: "type", id: 7, text: "30" });
    assertEquals(await value(page, "#volume"), "30");
  });

  await t.step(
    "Actor.act() accepts what an input mask shows when the digits are typed",
    async () => {
      const { context, page, actor } = await open();
      await using _ = context;
      await actor.act({ action: "type", id: 8, text: "5551234567" });
      assertEquals(await value(page, "#phone"), "(555) 123-4567");
    },
  );

  await t.step(
    "Actor.act() types into the replacement when a field or its stand-in is replaced on focus",
    async () => {
      const { context, page, actor } = await open();
      await using _ = context;
      await actor.act({ action: "type", id: 9, text: "hello" });
      assertEquals(await value(page, "#swapped"), "hello");
      await actor.act({ action: "type", id: 14, text: "Looks good" });
      assertEquals(await value(page, "#comment-editor"), "Looks good");
      await rejectsWith(
        actor.act({ action: "type", id: 10, text: "hello" }),
        "value-not-set",
        "was replaced when it took focus",
      );
      await rejectsWith(
        actor.act({ action: "type", id: 11, text: "hello" }),
        "value-not-set",
        "became disabled",
      );
      await rejectsWith(
        actor.act({ action: "type", id: 12, text: "abcdefgh" }),
        "value-not-set",
        'takes at most 5 characters and holds "abcde"',
      );
    },
  );

  await t.step("Actor.act() refuses text over the cap and inserts long text", async () => {
    const { context, page, actor } = await open();
    await using _ = context;
    await rejectsWith(
      actor.act({ action: "type", id: 13, text: "x".repeat(TYPE_MAX_LENGTH + 1) }),
      "too-long",
      `the most one "type" takes is ${TYPE_MAX_LENGTH}`,
    );
    assertEquals(await value(page, "#essay"), "");
    const text = "lorem ipsum ".repeat(400).trim() + "\nend";
    const result = await actor.act({ action: "type", id: 13, text });
    assert(result.settle?.settled);
    assertEquals(await value(page, "#essay"), text);
    // One key for the newline and one for the last character; the rest inserted.
    assertEquals(await evaluate(page, "window.__keys"), 2);
  });
});

const REACT = await Deno.readTextFile(
  new URL("./umd/react.production.min.js", import.meta.resolve("react")),
);
const REACT_DOM = await Deno.readTextFile(
  new URL("./umd/react-dom.production.min.js", import.meta.resolve("react-dom")),
);

const DATE_APP = `
const { createElement: h, useState } = React;
function App() {
  const [day, setDay] = useState("");
  const [count, setCount] = useState("1");
  return h("div", null,
    h("input", { id: "day", type: "date", value: day, onChange: (e) => setDay(e.target.value) }),
    h("input", { id: "count", type: "range", min: 1, max: 9, value: count, onChange: (e) => setCount(e.target.value) }),
    h("output", { id: "state" }, JSON.stringify({ day, count })));
}
ReactDOM.createRoot(document.getElementById("root")).render(h(App));
`;

Deno.test("Actor.act() type into tag inputs", async (t) => {
  await using server = serveSpa();
  await using browser = await Browser.launch();

  const ids = { 1: "#keys", 2: "#split", 3: "#commit", 4: "#digits" };
  const open = () => actorOn(browser, `${server.origin}/act/tags`, ids);
  const chips = (page: Page, box: string) =>
    evaluate(page, `[...document.querySelectorAll("${box} .chip")].map((c) => c.textContent)`);

  await t.step(
    "Actor.act() succeeds and names the tags when a tag input turns the text into chips",
    async () => {
      const { context, page, actor } = await open();
      await using _ = context;
      const keys = await actor.act({ action: "type", id: 1, text: "red,green,blu" });
      assertEquals(await chips(page, "#keys-box"), ["red ×", "green ×"]);
      assertEquals(await value(page, "#keys"), "blu");
      assertEquals(
        keys.detail,
        'the field turned the text into "red ×", "green ×" and holds "blu"',
      );
      const split = await actor.act({ action: "type", id: 2, text: "cats, dogs," });
      assertEquals(await chips(page, "#split-box"), ["cats ×", "dogs ×"]);
      assertEquals(await value(page, "#split"), "");
      assertStringIncludes(split.detail ?? "", '"cats ×", "dogs ×"');
    },
  );

  await t.step(
    "Actor.act() succeeds when the field commits the text with change and clears itself",
    async () => {
      const { context, page, actor } = await open();
      await using _ = context;
      const result = await actor.act({ action: "type", id: 3, text: "ada@example.com;" });
      assertEquals(result.detail, 'the field took the text, fired change and holds ""');
      assertEquals(await evaluate(page, "$('#far').textContent"), "ada@example.com");
    },
  );

  await t.step("Actor.act() still throws value-not-set when a field drops the text", async () => {
    const { context, page, actor } = await open();
    await using _ = context;
    await rejectsWith(actor.act({ action: "type", id: 4, text: "abc" }), "value-not-set");
    assertEquals(await value(page, "#digits"), "");
  });
});

Deno.test("consumed() tells a field that turned the text into tags from one that lost it", () => {
  const watch = (added: string[], changed = false) => ({ added, changed });
  assertEquals(consumed("red,green,bl", "bl", watch(["red ×", "green ×"])), ["red ×", "green ×"]);
  assertEquals(consumed("new york, paris", "", watch(["New York", "Paris"])), [
    "New York",
    "Paris",
  ]);
  assertEquals(consumed("ada;", "", watch([], true)), []);
  assertEquals(consumed("red", "", watch([])), null);
  assertEquals(consumed("red,green", "", watch(["red ×"])), null);
  assertEquals(consumed("red,green", "green", watch(["blue ×"])), null);
  assertEquals(consumed("red", "red", watch(["red ×"])), null);
});

Deno.test("Actor.act() sets React-controlled date and range inputs through React's events", async () => {
  const html = `<title>React</title><div id="root"></div>` +
    `<script>${REACT}</script><script>${REACT_DOM}</script><script>${DATE_APP}</script>`;
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    () => new Response(html, { headers: { "content-type": "text/html" } }),
  );
  try {
    await using browser = await Browser.launch();
    await using context = await newContext(browser);
    const settler = Settler.install(context);
    const page = await context.newPage(`http://127.0.0.1:${server.addr.port}/`);
    await settler.settle(page);
    const resolver = new SelectorResolver(page, { 1: "#day", 2: "#count" });
    const actor = new Actor(context, { resolver, settler });
    await actor.act({ action: "type", id: 1, text: "2025-01-31" });
    await actor.act({ action: "type", id: 2, text: "7" });
    assertEquals(
      await evaluate(page, `document.querySelector("#state").textContent`),
      JSON.stringify({ day: "2025-01-31", count: "7" }),
    );
  } finally {
    await server.shutdown();
  }
});

Deno.test("holds() accepts masks, case and completions when the letters typed are kept", () => {
  const field = (value: string, type = "text"): FieldState => ({
    connected: true,
    disabled: false,
    tag: "input",
    type,
    value,
    text: null,
    maxLength: -1,
  });
  assert(holds(field("(555) 123-4567"), "5551234567"));
  // A mask's fixed country code before what was typed (IMask's `+{1} (000) 000-0000`).
  assert(holds(field("+1 (555) 123-4567"), "5551234567"));
  assert(!holds(field("+1 (555) 123-45"), "5551234567"));
  assert(holds(field("ADA"), "ada"));
  assert(holds(field("apple"), "ap"));
  assert(!holds(field("abcde"), "abcdefgh"));
  assert(!holds(field(""), "hello"));
  assert(holds(field("12.50", "number"), "12.5"));
  assert(!holds(field("", "date"), "May 17"));
  assert(!holds(field("2024-05-17", "date"), "2024-05-1"));
});
