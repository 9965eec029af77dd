// What came and went during a step is what a person saw come and go: a toast
// or a visible status, not a screen reader's announcement in a clipped region
// (react-select says "4 results available…" there on every open).
import { assert, assertEquals } from "@std/assert";
import { Browser } from "../../../engine/browser/browser.ts";
import { Env } from "../../../engine/env.ts";
import { serveHtml } from "../../_util/html_server.ts";
import { pageValue } from "../act/_app_pages.ts";

const PAGE = `<!doctype html><meta charset="utf-8"><title>Flashes</title>
<style>.sr-only{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap}</style>
<button onclick="go()">Copy</button>
<span class="sr-only" aria-live="polite" id="said"></span>
<div role="status" id="seen"></div>
<script>
  function go() {
    document.getElementById("said").textContent = "4 results available.";
    document.getElementById("seen").textContent = "Copied!";
    setTimeout(() => {
      document.getElementById("said").textContent = "";
      document.getElementById("seen").textContent = "";
    }, 120);
  }
</script>`;

Deno.test("Env.step() lists a visible flash that came and went, not a screen-reader-only one", async () => {
  await using server = serveHtml({ "/": PAGE });
  const site = { origin: server.url("").replace(/\/$/, ""), reset: () => Promise.resolve() };
  await using browser = await Browser.launch();
  await using env = await Env.create(browser, { site });
  const copy = (await env.observe()).elements.find((el) => el.name === "Copy");
  assert(copy);
  const step = await env.step({ action: "click", id: copy.id });
  let flashed = step.observation.flashed;
  if (flashed === undefined) {
    // The step settled before the messages went (a slow machine): wait until they go
    // (bounded), then observe.
    await pageValue(
      env,
      `new Promise((resolve) => { const end = Date.now() + 5000; (function poll() {
        if (!document.getElementById("seen").textContent || Date.now() > end) resolve(true);
        else setTimeout(poll, 10); })(); })`,
    );
    flashed = (await env.observe()).flashed;
  }
  assertEquals(flashed, ["Copied!"]);
});
