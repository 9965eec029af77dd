// Settling waits for the animations that change what an agent can see or act
// on (a fade from nothing, a box that moves), not for cosmetic ones: a todo
// marked done fading its colour for 0.4 s is settled at once.
import { assert, assertEquals } from "@std/assert";
import { Browser, newContext } from "../../../engine/browser/browser.ts";
import type { Page } from "../../../engine/browser/page.ts";
import { Settler } from "../../../engine/settle/settler.ts";
import { serveHtml } from "../../_util/html_server.ts";

const PAGE = `<!doctype html><title>Todos</title>
<style>
  li { transition: color 0.6s, background-color 0.6s, box-shadow 0.6s; }
  li.done { color: #999; background-color: #eee; box-shadow: 0 0 4px #888; text-decoration: line-through; }
  .dim { transition: opacity 0.6s; }
  .dim.on { opacity: 0.5; }
  #toast { opacity: 0; transition: opacity 0.6s; }
  #toast.shown { opacity: 1; }
  #panel { height: 0; overflow: hidden; transition: height 0.6s; }
  #panel.open { height: 120px; }
</style>
<ul><li id="todo" class="dim">Buy milk</li></ul>
<div id="toast">Saved</div>
<div id="panel">Details</div>`;

async function run(page: Page, expression: string): Promise<void> {
  await page.session.send("Runtime.evaluate", { expression });
}

Deno.test("Settler.settle() does not wait for colour, shadow and dimming transitions, but waits for a fade from nothing and a box that grows", async () => {
  await using server = serveHtml({ "/": PAGE });
  await using browser = await Browser.launch();
  await using context = await newContext(browser);
  const settler = Settler.install(context);
  const page = await context.newPage(server.url("/"));
  await settler.settle(page);
  const cosmetic = async (expression: string) => {
    const since = performance.now();
    await run(page, expression);
    const result = await settler.settle(page, { since });
    assert(result.settled, result.pending.join());
    assertEquals(result.waitedFor.includes("animations"), false, JSON.stringify(result));
    assert(result.ms < 450, `settled in ${result.ms} ms`);
  };
  await cosmetic(`document.getElementById("todo").classList.add("done")`);
  await cosmetic(`document.getElementById("todo").classList.add("on")`);
  for (const [id, cls] of [["toast", "shown"], ["panel", "open"]]) {
    const since = performance.now();
    await run(page, `document.getElementById("${id}").classList.add("${cls}")`);
    const result = await settler.settle(page, { since });
    assert(result.waitedFor.includes("animations"), `${id}: ${JSON.stringify(result)}`);
    assert(result.ms >= 500, `${id} settled in ${result.ms} ms, before its 0.6 s transition ended`);
  }
});
