// A closed shadow root is found on the walk and the frame distilled again,
// once: that second call is the same observation, so it must not hand out an
// id the first call gave, mark the page's first observation `*new`, or drop
// a flash the first call drained.
import { assert, assertEquals, assertStringIncludes } from "@std/assert";
import { Browser } from "../../../engine/browser/browser.ts";
import { Env } from "../../../engine/env.ts";
import { serveHtml } from "../../_util/html_server.ts";

const PAGE = `<!doctype html><title>Letters</title>
<button onclick="go()">Save</button><div id="slot"></div><div role="status" id="status"></div>
<script>
  customElements.define("x-letter", class extends HTMLElement {
    constructor() {
      super();
      this.attachShadow({ mode: "closed" }).innerHTML =
        '<button>Inside</button><input aria-label="Mail">';
    }
  });
  function go() {
    const status = document.getElementById("status");
    status.textContent = "Saved!";
    // The flash goes before the new parts come: the step sees it come and go.
    setTimeout(() => { status.textContent = ""; }, 100);
    setTimeout(() => {
      document.getElementById("slot").append(document.createElement("x-letter"));
      const after = document.createElement("button");
      after.textContent = "After";
      document.body.append(after);
    }, 250);
  }
</script>`;

Deno.test("Observer.observe() distills a page with a new closed root once: ids unique, *new and flashes kept", async () => {
  await using server = serveHtml({ "/": PAGE });
  const site = { origin: server.url("").replace(/\/$/, ""), reset: () => Promise.resolve() };
  await using browser = await Browser.launch();
  await using env = await Env.create(browser, { site });
  const first = await env.observe();
  const save = first.elements.find((el) => el.name === "Save");
  assert(save, first.text);
  const step = await env.step({ action: "click", id: save.id });
  const { elements, text, flashed } = step.observation;
  const names = elements.map((el) => el.name).sort();
  assertEquals(names, ["After", "Inside", "Mail", "Save"], text);
  const ids = elements.map((el) => el.id);
  assertEquals(new Set(ids).size, ids.length, `an id handed out twice:\n${text}`);
  for (const name of ["After", "Inside", "Mail"]) {
    assert(elements.find((el) => el.name === name)?.isNew, `${name} not new:\n${text}`);
  }
  assertEquals(flashed, ["Saved!"], text);
  // Each id acts on its own element.
  const after = elements.find((el) => el.name === "After")!;
  await env.step({ action: "click", id: after.id });
  const inside = elements.find((el) => el.name === "Inside")!;
  const focused = await env.step({ action: "click", id: inside.id });
  assertStringIncludes(focused.observation.text, 'button "Inside" focused');
});

Deno.test("Observer.observe() marks nothing new on a document's first observation, closed roots included", async () => {
  await using server = serveHtml({
    "/": PAGE.replace('<div id="slot"></div>', "<x-letter></x-letter>"),
  });
  const site = { origin: server.url("").replace(/\/$/, ""), reset: () => Promise.resolve() };
  await using browser = await Browser.launch();
  await using env = await Env.create(browser, { site });
  const { text, elements } = await env.observe();
  assertEquals(elements.map((el) => el.name), ["Save", "Inside", "Mail"], text);
  assert(!text.includes("*new"), text);
});
