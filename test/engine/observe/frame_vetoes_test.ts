// A frame nobody can act in (an inert, aria-hidden or pointer-events: none
// iframe, or one outside an open modal dialog) shows its text and no ids,
// whichever process it runs in; a frame inside the dialog keeps its ids.
import { assert, assertEquals, assertStringIncludes } from "@std/assert";
import { Browser, newContext } from "../../../engine/browser/browser.ts";
import type { Page } from "../../../engine/browser/page.ts";
import { Observer } from "../../../engine/observe/observer.ts";
import type { Observation } from "../../../engine/observe/observation.ts";
import { serveHtml } from "../../_util/html_server.ts";

function widget(n: number): string {
  return `<!doctype html><body><h3>Widget ${n}</h3><button>Buy ${n}</button>` +
    `<a href="/w/${n}">More ${n}</a></body>`;
}

/** Observes until every widget's heading is in the text (frames load on their own time). */
async function observeLoaded(observer: Observer, page: Page, widgets: number[]) {
  let observation: Observation = await observer.observe(page);
  for (let i = 0; i < 100; i++) {
    if (widgets.every((n) => observation.text.includes(`Widget ${n}`))) return observation;
    await new Promise((resolve) => setTimeout(resolve, 50));
    observation = await observer.observe(page);
  }
  throw new Error(`The widgets did not load:\n${observation.text}`);
}

function hasId(observation: Observation, name: string): boolean {
  return observation.elements.some((el) => el.name === name);
}

Deno.test("Observer.observe() gives no ids in a frame nobody can act in, and keeps its text", async () => {
  const pages: Record<string, string> = {};
  for (let i = 0; i < 6; i++) pages[`/w/${i}`] = widget(i);
  await using server = serveHtml(pages);
  const cross = (i: number) => server.url(`/w/${i}`, "localhost");
  pages["/"] = `<!doctype html><title>Vetoed frames</title><body><h1>Checkout</h1>
<iframe id="inert" inert src="${cross(1)}"></iframe>
<iframe id="ghost" style="pointer-events: none" src="${cross(2)}"></iframe>
<div aria-hidden="true"><iframe id="hidden" src="/w/3"></iframe></div>
<iframe id="open" src="${cross(4)}"></iframe>
<iframe id="near" src="/w/0"></iframe>
<dialog id="dialog"><p>Pay now</p><iframe src="${cross(5)}"></iframe><button>Close</button></dialog>
</body>`;
  await using browser = await Browser.launch();
  await using context = await newContext(browser);
  const observer = Observer.attach(context);
  const page = await context.newPage(server.url("/"));

  let observation = await observeLoaded(observer, page, [0, 1, 2, 3, 4]);
  for (const n of [1, 2, 3]) {
    assert(!hasId(observation, `Buy ${n}`), `frame ${n} gives no ids:\n${observation.text}`);
    assertStringIncludes(observation.text, `button Buy ${n}`, "its controls show, without ids");
  }
  assertStringIncludes(observation.text, "(inert)");
  assertStringIncludes(observation.text, "(aria-hidden)");
  assertStringIncludes(observation.text, "(takes no pointer)");
  for (const n of [0, 4]) assert(hasId(observation, `Buy ${n}`), `frame ${n} keeps its ids`);

  await page.session.send("Runtime.evaluate", {
    expression: `document.querySelector("#dialog").showModal()`,
  });
  observation = await observeLoaded(observer, page, [5]);
  for (const n of [0, 4]) {
    assert(
      !hasId(observation, `Buy ${n}`),
      `frame ${n} is outside the dialog:\n${observation.text}`,
    );
  }
  assertStringIncludes(observation.text, "(outside the open dialog)");
  assert(hasId(observation, "Buy 5"), `the dialog's frame keeps its ids:\n${observation.text}`);
  assert(hasId(observation, "Close"));
  assertEquals(observation.elements.filter((el) => el.name.startsWith("Buy ")).length, 1);
});

Deno.test("Observer.observe() gives no ids where a box of the parent lies over a frame", async () => {
  const frame = `<!doctype html><body style="margin:0">` +
    `<button style="position:absolute;top:10px;left:10px">Top</button>` +
    `<button style="position:absolute;top:150px;left:10px">Bottom</button></body>`;
  const pages: Record<string, string> = { "/frame": frame };
  await using server = serveHtml(pages);
  // A banner over the frame's lower part, and a frame wholly under an overlay without aria-modal.
  pages["/"] = `<!doctype html><title>Covered frames</title><body style="margin:0">
<iframe title="Banner" src="${server.url("/frame", "localhost")}"
  style="position:absolute;left:0;top:100px;width:300px;height:200px;border:0"></iframe>
<div style="position:fixed;left:0;top:230px;width:400px;height:100px;background:#ccc">We use cookies</div>
<iframe title="Overlaid" src="/frame"
  style="position:absolute;left:400px;top:100px;width:300px;height:200px;border:0"></iframe>
<div style="position:fixed;left:380px;top:80px;width:360px;height:260px;background:rgba(0,0,0,.5)">Loading</div>
</body>`;
  await using browser = await Browser.launch();
  await using context = await newContext(browser);
  const observer = Observer.attach(context);
  const page = await context.newPage(server.url("/"));
  let observation: Observation = await observer.observe(page);
  for (let i = 0; i < 100 && !observation.elements.some((el) => el.name === "Top"); i++) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    observation = await observer.observe(page);
  }
  const named = (name: string) => observation.elements.filter((el) => el.name === name);
  assertEquals(named("Top").length, 1, `only the banner frame's top button:\n${observation.text}`);
  assertEquals(named("Top")[0]!.box[1] < 200, true);
  assertEquals(named("Bottom").length, 0, `nothing under a cover:\n${observation.text}`);
  assertEquals(observation.text.split("button Bottom").length - 1, 2, "both show, without ids");
  assert(page.frameSessions.length >= 1, "the banner frame is out of process");
});
