// The distiller's passes under linkedom, with a stand-in layout.
import { assert, assertEquals, assertStringIncludes } from "@std/assert";
import { parseHTML } from "linkedom";
import { createDistiller } from "../../../engine/page/distiller.ts";
import type { DistillRequest, WireElement, WireNode } from "../../../engine/observe/wire.ts";
import { formatNodes } from "../../../engine/observe/format_observation.ts";
import { fakeLayout, type FakeLayoutOptions } from "./_fake_layout.ts";

const REQUEST: DistillRequest = {
  nextId: 1,
  mode: "page",
  margin: 0,
  summariseAfter: 20,
  keepItems: 3,
  maxText: 60,
  tree: true,
};

function setup(html: string, options: FakeLayoutOptions = {}) {
  const { document } = parseHTML(
    `<!doctype html><html><head><title>T</title></head><body>${html}</body></html>`,
  );
  const distiller = createDistiller(document, fakeLayout(document, options));
  return { document, distiller };
}

function elements(nodes: WireNode[], out: WireElement[] = []): WireElement[] {
  for (const node of nodes) {
    if (node.k !== "e") continue;
    out.push(node);
    if (node.c) elements(node.c, out);
  }
  return out;
}

function withIds(nodes: WireNode[]): WireElement[] {
  return elements(nodes).filter((el) => el.id !== undefined);
}

Deno.test("createDistiller() gives ids to native controls and ARIA widgets", () => {
  const { distiller } = setup(`
    <a href="/a">Link</a><a>No href</a><button>Go</button><input placeholder="Search">
    <select><option>One</option></select><textarea></textarea>
    <div role="tab">Tab</div><div role="switch" aria-checked="true">Wifi</div>
    <details><summary>More</summary><p>hidden body</p></details>`);
  const result = distiller.observe(REQUEST);
  const named = withIds(result.nodes!).map((el) => `${el.role}:${el.name ?? ""}`);
  assertEquals(named, [
    "link:Link",
    "button:Go",
    "textbox:Search",
    "combobox:",
    "textbox:",
    "tab:Tab",
    "switch:Wifi",
    "button:More",
  ]);
  const text = formatNodes(result.nodes!).join("\n");
  assertStringIncludes(text, "No href");
  assert(!text.includes("hidden body"), "closed details content is not rendered");
  assertStringIncludes(text, "checked");
  assertStringIncludes(text, "collapsed");
});

Deno.test("createDistiller() vetoes hidden, disabled, aria-hidden, inert and zero-size elements", () => {
  const { distiller } = setup(`
    <button hidden>Hidden</button>
    <button style="display:none">None</button>
    <button style="visibility:hidden">Invisible</button>
    <div style="opacity:0"><button>Faded</button></div>
    <button style="width:0">Zero</button>
    <div aria-hidden="true"><button>AriaHidden</button></div>
    <div inert><button>Inert</button></div>
    <button style="pointer-events:none">NoPointer</button>
    <button disabled>Disabled</button>
    <fieldset disabled><input placeholder="InFieldset"></fieldset>
    <button>Visible</button>`);
  const result = distiller.observe(REQUEST);
  assertEquals(withIds(result.nodes!).map((el) => el.name), ["Visible"]);
  const disabled = elements(result.nodes!).find((el) => el.name === "Disabled");
  assertEquals(disabled?.states, ["disabled"]);
  assertEquals(disabled?.id, undefined);
});

Deno.test("createDistiller() detects script listeners, on* attributes, tabindex and pointer cursors", () => {
  const { document } = parseHTML(`<html><body>
    <div id="l">Listened</div><div onclick="x()">Attr</div><span tabindex="0">Tab stop</span>
    <span style="cursor:pointer">Pointer <b>inner</b></span><div>Plain</div>
    <div contenteditable="true">Edit <b>me</b></div></body></html>`);
  const listeners = new Set([document.getElementById("l")!]);
  const distiller = createDistiller(document, fakeLayout(document, { clickListeners: listeners }));
  const result = distiller.observe(REQUEST);
  const lines = withIds(result.nodes!).map((el) => `${el.role}:${el.name ?? el.value}:${el.cues}`);
  assertEquals(lines, [
    "clickable:Listened:listener",
    "clickable:Attr:listener",
    "clickable:Tab stop:focusable",
    "clickable:Pointer inner:pointer",
    "textbox:Edit me:editable",
  ]);
});

Deno.test("createDistiller() keeps ids stable across observations and never reuses them", () => {
  const { document, distiller } = setup(`<button id="a">A</button><button id="b">B</button>`);
  const first = distiller.observe(REQUEST);
  assertEquals(withIds(first.nodes!).map((el) => el.id), [1, 2]);
  assertEquals(first.nextId, 3);
  document.getElementById("a")!.remove();
  const c = document.createElement("button");
  c.textContent = "C";
  document.body.prepend(c);
  const second = distiller.observe({ ...REQUEST, nextId: first.nextId });
  const ids = withIds(second.nodes!).map((el) => [el.name, el.id, el.isNew === true]);
  assertEquals(ids, [["C", 3, true], ["B", 2, false]]);
  assertEquals(distiller.element(2), document.getElementById("b"));
  assertEquals(distiller.element(1), null);
});

Deno.test("createDistiller() names by precedence and masks passwords", () => {
  const { distiller } = setup(`
    <span id="lb">From labelledby</span>
    <button aria-labelledby="lb" aria-label="aria" title="t">content</button>
    <button aria-label="From aria" title="t">content</button>
    <label for="f">From label</label><input id="f" title="t" placeholder="p">
    <label>Wrapping <input id="w" placeholder="p"></label>
    <img alt="From alt" src="x.png" tabindex="0">
    <input title="From title" placeholder="p">
    <input placeholder="From placeholder">
    <button>  From   content </button>
    <input type="submit" value="From value">
    <input type="password" value="hunter2" aria-label="Pw">
    <button><svg><title>From svg</title></svg></button>`);
  const result = distiller.observe(REQUEST);
  const names = withIds(result.nodes!).map((el) => el.name);
  assertEquals(names, [
    "From labelledby",
    "From aria",
    "From label",
    "Wrapping",
    "From alt",
    "From title",
    "From placeholder",
    "From content",
    "From value",
    "Pw",
    "From svg",
  ]);
  const password = withIds(result.nodes!).find((el) => el.name === "Pw");
  assertEquals(password?.value, "•••••••");
  const text = formatNodes(result.nodes!).join("\n");
  assert(!text.includes("hunter2"));
  assertEquals(
    text.match(/From label(?!l)/g)?.length,
    1,
    "label text is not repeated beside its control",
  );
});

Deno.test("createDistiller() summarises long runs of similar siblings", () => {
  const rows = Array.from(
    { length: 200 },
    (_, i) => `<li class="item"><a href="/${i}">Item ${i}</a></li>`,
  );
  const { distiller } = setup(`<ul>${rows.join("")}</ul>`, { viewportHeight: 100 });
  const result = distiller.observe(REQUEST);
  const ids = withIds(result.nodes!);
  // The first three are kept, plus those the (fake) viewport shows.
  assert(ids.length < 20, `kept ${ids.length}`);
  assertEquals(ids[0]?.name, "Item 0");
  const text = formatNodes(result.nodes!).join("\n");
  assertStringIncludes(text, "more li.item");
  assertStringIncludes(text, "actionable");
});

Deno.test("createDistiller() in viewport mode counts what lies below", () => {
  const rows = Array.from({ length: 60 }, (_, i) => `<p><a href="/${i}">P${i}</a></p>`);
  const { distiller } = setup(rows.join(""), { viewportHeight: 200 });
  const result = distiller.observe({ ...REQUEST, mode: "viewport", summariseAfter: 0 });
  const more = result.nodes!.find((node) => node.k === "m" && node.why === "below");
  assert(more && more.k === "m" && more.n > 0 && more.a > 0, JSON.stringify(result.nodes!.at(-1)));
  assert(withIds(result.nodes!).length < 60);
});

Deno.test("createDistiller() writes nothing to the document", () => {
  const { document, distiller } = setup(
    `<button>A</button><input value="x"><div onclick="">B</div>`,
  );
  const before = document.documentElement.outerHTML;
  distiller.observe(REQUEST);
  distiller.observe(REQUEST);
  assertEquals(document.documentElement.outerHTML, before);
});

Deno.test("formatNodes() joins short groups, lays tables out by rows and nests by one space", () => {
  const { distiller } = setup(`
    <main><h1>Cart</h1><ul><li><a href="/1">Shirt</a> $19.99</li><li><a href="/2">Hat</a> $5</li></ul>
    <table><tr><th>Name</th><th>Price</th></tr><tr><td>Shirt</td><td>$19.99</td></tr></table></main>`);
  const lines = formatNodes(distiller.observe(REQUEST).nodes!, { showNew: false });
  assertEquals(lines, [
    "main",
    " heading Cart",
    // A link with text after it on its line keeps its name quoted; the arrow says link.
    ' [1] "Shirt" → /1 $19.99',
    ' [2] "Hat" → /2 $5',
    " table",
    "  Name | Price",
    "  Shirt | $19.99",
  ]);
});

Deno.test("createDistiller() walks open shadow roots and reads their labels", () => {
  const { document, distiller } = setup(`<div id="host"></div><button>Light</button>`);
  const host = document.getElementById("host")!;
  const root = host.attachShadow({ mode: "open" });
  root.innerHTML = `<span id="l">Shadow label</span><button aria-labelledby="l">x</button>` +
    `<div id="inner"></div>`;
  const inner = root.getElementById("inner")!.attachShadow({ mode: "open" });
  inner.innerHTML = `<a href="/deep">Deep link</a>`;
  const names = withIds(distiller.observe(REQUEST).nodes!).map((el) => `${el.role}:${el.name}`);
  assertEquals(names, ["button:Shadow label", "link:Deep link", "button:Light"]);
});

Deno.test("createDistiller() keeps a listened ancestor as structure and gives its targets ids", () => {
  const { document } = parseHTML(`<html><body>
    <div id="bar"><span style="cursor:pointer">Reply</span><span style="cursor:pointer">Forward</span></div>
    <div id="card" style="cursor:pointer"><h3>Card</h3><button>Buy</button></div>
    <div id="row"><span>Invoice 12</span> <button>Delete</button></div></body></html>`);
  const listeners = new Set(
    ["bar", "card", "row"].map((id) => document.getElementById(id)!),
  );
  const distiller = createDistiller(document, fakeLayout(document, { clickListeners: listeners }));
  const named = withIds(distiller.observe(REQUEST).nodes!).map((el) => `${el.role}:${el.name}`);
  // The toolbar is no target of its own; the card, with a pointer cursor of its own, is.
  // A listened row with text of its own stays a target beside its button.
  assertEquals(named, [
    "clickable:Reply",
    "clickable:Forward",
    "clickable:Card",
    "button:Buy",
    "clickable:Invoice 12",
    "button:Delete",
  ]);
});

Deno.test("createDistiller() finds delegated targets by probe and the items of a listened list", () => {
  const { document } = parseHTML(`<html><body>
    <div id="root"><div id="a">Open mail</div><p>Plain text</p></div>
    <ul id="list"><li>First</li><li>Second</li></ul></body></html>`);
  const distiller = createDistiller(
    document,
    fakeLayout(document, {
      clickListeners: new Set([document.getElementById("root")!, document.getElementById("list")!]),
      delegated: new Set([document.getElementById("a")!]),
    }),
  );
  const named = withIds(distiller.observe(REQUEST).nodes!).map((el) => `${el.role}:${el.name}`);
  assertEquals(named, ["clickable:Open mail", "listitem:First", "listitem:Second"]);
});

Deno.test("createDistiller() reaches a styled-away checkbox through one id on the input", () => {
  const { document, distiller } = setup(
    `<div><input type="checkbox" id="c" style="opacity:0"><label>Remember me</label></div>`,
  );
  const result = distiller.observe(REQUEST);
  const ids = withIds(result.nodes!);
  assertEquals(ids.map((el) => `${el.role}:${el.name}`), ["checkbox:Remember me"]);
  assertEquals(distiller.element(ids[0]!.id!), document.getElementById("c"));
  assertEquals(formatNodes(result.nodes!, { showNew: false }), ["[1] checkbox Remember me"]);
});

Deno.test("createDistiller() joins inline runs, keeps a title apart that says more than the name and shows link targets", () => {
  const { distiller } = setup(`
    <p>Type "<code>hello</code>" here</p><p>Read the <a href="/guide">docs</a> first.</p>
    <a href="/films?sort=year" title="Sort ascending">Year</a>
    <span id="l">Order 7</span><div aria-labelledby="l" onclick="go()">Shipped</div>
    <button title="Edit">Edit Copper Sky</button><button title="Sky">Copper Skyline</button>`);
  const lines = formatNodes(distiller.observe(REQUEST).nodes!, { showNew: false });
  assertEquals(lines, [
    'Type "hello" here',
    'Read the [1] "docs" → /guide first.',
    '[2] "Year" → /films?sort=year title="Sort ascending"',
    "Order 7",
    '[3] clickable "Order 7" listener · Shipped',
    // A title held whole-word in the name repeats it; one that is only part of a word does not.
    "[4] button Edit Copper Sky",
    '[5] button "Copper Skyline" title="Sky"',
  ]);
});

Deno.test("createDistiller() names the scroll container an element is in", () => {
  const { document, distiller } = setup(
    `<div id="box" style="overflow:auto"><button>One</button><button>Two</button></div>`,
  );
  // linkedom lays nothing out: give the box more content than room.
  const box = document.getElementById("box")!;
  Object.defineProperty(box, "scrollHeight", { value: 300 });
  Object.defineProperty(box, "clientHeight", { value: 100 });
  const ids = withIds(distiller.observe(REQUEST).nodes!);
  assertEquals(ids.map((el) => [el.name ?? el.role, el.container]), [
    ["scrollable", undefined],
    ["One", 1],
    ["Two", 1],
  ]);
});

Deno.test("createDistiller() leaves out a link target the name spells, in the text only", () => {
  const { distiller } = setup(`
    <a href="/projects">Projects</a> <a href="#/film/Copper-Sky">Copper Sky</a>
    <a href="#/p/Urban%20Lamp%2021">Urban Lamp 21</a> <a href="/about.html">About</a>
    <a href="#year">Year</a> <a href="/blog/7">Zephyr hazel</a>`);
  const nodes = distiller.observe(REQUEST).nodes!;
  const lines = formatNodes(nodes, { showNew: false }).join("\n");
  for (const name of ["Projects", "Copper Sky", "Urban Lamp 21", "About"]) {
    assertStringIncludes(lines, `link ${name}`);
    assert(!lines.includes(`${name} →`), lines);
  }
  assertStringIncludes(lines, "] Year → #year");
  assertStringIncludes(lines, "] Zephyr hazel → /blog/7");
  assertEquals(withIds(nodes).map((el) => el.href), [
    "/projects",
    "#/film/Copper-Sky",
    "#/p/Urban%20Lamp%2021",
    "/about.html",
    "#year",
    "/blog/7",
  ]);
});

Deno.test("createDistiller() keeps the words of a summarised run on its summary line", () => {
  const rows = Array.from(
    { length: 40 },
    (_, i) => `<li class="tag"><a href="/tags/${i}">word${i}</a></li>`,
  );
  const { distiller } = setup(`<footer><ul>${rows.join("")}</ul></footer>`, {
    viewportHeight: 100,
  });
  const text = formatNodes(distiller.observe(REQUEST).nodes!).join("\n");
  assertStringIncludes(text, "more li.tag");
  for (let i = 0; i < 40; i++) assertStringIncludes(text, `word${i}`);
});

Deno.test("createDistiller() never summarises a run in the main content", () => {
  const items = (n: number) =>
    Array.from({ length: n }, (_, i) => `<li class="product"><a href="/p/${i}">Lamp ${i}</a></li>`)
      .join("");
  const { distiller } = setup(
    `<main><ul>${items(36)}</ul><nav><ul>${items(30)}</ul></nav></main>`,
    { viewportHeight: 100 },
  );
  const nodes = distiller.observe(REQUEST).nodes!;
  const names = withIds(nodes).map((el) => el.name);
  assertEquals(names.slice(0, 36), Array.from({ length: 36 }, (_, i) => `Lamp ${i}`));
  assert(names.length < 36 + 30, "the nav inside main is chrome: summarised");
});

Deno.test("createDistiller() shows a name's words once: legends, echoed images, labelledby parts", () => {
  const { distiller } = setup(`
    <fieldset><legend>Text size</legend><label><input type="radio" name="s"> S</label></fieldset>
    <span id="pl">Plan</span><button aria-labelledby="pl pv"><span id="pv">Free</span></button>
    <ul><li><div role="img" aria-label="Urban Lamp"></div><a href="/x/1">Urban Lamp</a></li></ul>`);
  const text = formatNodes(distiller.observe(REQUEST).nodes!, { showNew: false }).join("\n");
  assertStringIncludes(text, "group Text size");
  assert(!/Text size\W+Text size/.test(text), text);
  assertStringIncludes(text, "button Plan Free");
  assert(!/Plan Free\W+Free/.test(text), text);
  assert(!/img "?Urban Lamp/.test(text), text);
});

Deno.test("createDistiller() names a column header by its content before its title and keeps long cells whole", () => {
  const long = "A description of the option that runs on well past the usual name limit. ".repeat(
    3,
  );
  const { distiller } = setup(`<main><table>
    <tr><th title="The option's key">Option</th><th>Description</th></tr>
    <tr><td>alpha</td><td>${long}The end.</td></tr></table></main>`);
  const text = formatNodes(distiller.observe(REQUEST).nodes!).join("\n");
  assertStringIncludes(text, "Option | Description");
  assert(!text.includes("The option's key Option"), text);
  assertStringIncludes(text, "The end.");
});
