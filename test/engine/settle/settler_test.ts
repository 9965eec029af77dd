import { assert, assertEquals, assertFalse, assertRejects, assertThrows } from "@std/assert";
import { Browser, newContext } from "../../../engine/browser/browser.ts";
import type { Page } from "../../../engine/browser/page.ts";
import { Settler } from "../../../engine/settle/settler.ts";
import { serveSpa } from "../../../fixtures/spa/mod.ts";
import { evaluate as evaluateIn } from "../../_util/page_eval.ts";

function evaluate(page: Page, expression: string): Promise<unknown> {
  return evaluateIn(page, expression, { awaitPromise: true });
}

Deno.test("Settler", async (t) => {
  await using server = serveSpa();
  await using browser = await Browser.launch();

  await t.step("Settler.install() throws when an option is negative", async () => {
    await using context = await newContext(browser);
    assertThrows(() => Settler.install(context, { quietMs: -1 }), RangeError, '"quietMs"');
  });

  await t.step("Settler.settle() hides its hook when page scripts look for it", async () => {
    await using context = await newContext(browser);
    Settler.install(context);
    const page = await context.newPage(`${server.origin}/spa/spinner-timer`);
    const seen = await evaluate(
      page,
      `[
        setTimeout.toString(),
        clearTimeout.toString(),
        requestAnimationFrame.toString(),
        cancelAnimationFrame.toString(),
        Function.prototype.toString.toString(),
        Function.prototype.toString.call(setTimeout),
        setTimeout.name,
        setTimeout.length,
        "prototype" in setTimeout,
        Object.getOwnPropertyNames(window).filter((name) => name.includes("webserv")).length,
        Element.prototype.attachShadow.toString(),
        Element.prototype.attachShadow.name,
        Element.prototype.attachShadow.length,
        "prototype" in Element.prototype.attachShadow,
      ]`,
    );
    assertEquals(seen, [
      "function setTimeout() { [native code] }",
      "function clearTimeout() { [native code] }",
      "function requestAnimationFrame() { [native code] }",
      "function cancelAnimationFrame() { [native code] }",
      "function toString() { [native code] }",
      "function setTimeout() { [native code] }",
      "setTimeout",
      1,
      false,
      0,
      "function attachShadow() { [native code] }",
      "attachShadow",
      1,
      false,
    ]);
  });

  await t.step("Settler.settle() reports what is pending when the cap is reached", async () => {
    await using context = await newContext(browser);
    const settler = Settler.install(context);
    const page = await context.newPage(`${server.origin}/spa/slow-endpoint`);
    await settler.settle(page);
    await evaluate(page, `document.querySelector("#go").click()`);
    const result = await settler.settle(page, { capMs: 300 });
    assertFalse(result.settled);
    assert(
      result.pending.some((item) => item.startsWith("network: GET") && item.includes("/api/step")),
    );
    assert(result.waitedFor.includes("network"));
  });

  await t.step(
    "Settler.settle() gives up with the DOM pending when the DOM never stops changing",
    async () => {
      await using context = await newContext(browser);
      const settler = Settler.install(context, { quietMs: 100 });
      const page = await context.newPage(`${server.origin}/spa/fetch-chain`);
      await evaluate(
        page,
        `setInterval(() => { document.body.dataset.tick = String(Math.random()); }, 20); 0`,
      );
      const result = await settler.settle(page, { capMs: 400 });
      assertFalse(result.settled);
      assert(result.pending[0]?.startsWith("dom: activity"), result.pending.join());
    },
  );

  await t.step(
    "Settler.settle() stops waiting for a polling timer chain when it grows old",
    async () => {
      await using context = await newContext(browser);
      const settler = Settler.install(context, { chainMs: 200 });
      const page = await context.newPage(`${server.origin}/spa/fetch-chain`);
      await evaluate(page, `(function poll() { setTimeout(poll, 150); })(); 0`);
      const result = await settler.settle(page, { capMs: 5_000 });
      assert(result.settled, result.pending.join());
    },
  );

  await t.step(
    "Settler.settle() stops waiting for a frame loop that changes nothing, young as its chain is",
    async () => {
      await using context = await newContext(browser);
      // The age rule cannot apply: the chain stays younger than a minute.
      const settler = Settler.install(context, { chainMs: 60_000 });
      const page = await context.newPage(`${server.origin}/spa/fetch-chain`);
      await settler.settle(page);
      // A popup library tracking its anchor every frame (Headless UI's listbox).
      await evaluate(page, `(function track() { requestAnimationFrame(track); })(); 0`);
      const result = await settler.settle(page, { capMs: 5_000 });
      assert(result.settled, result.pending.join());
    },
  );

  await t.step(
    "Settler.settle() waits for a frame loop that changes the page every few frames",
    async () => {
      await using context = await newContext(browser);
      const settler = Settler.install(context, { chainMs: 60_000 });
      const page = await context.newPage(`${server.origin}/spa/fetch-chain`);
      await settler.settle(page);
      await evaluate(
        page,
        `let n = 0; (function tick() {
          if (++n % 3 === 0) document.body.dataset.tick = String(n);
          requestAnimationFrame(tick);
        })(); 0`,
      );
      const result = await settler.settle(page, { capMs: 600 });
      assertFalse(result.settled);
      assert(
        result.pending.some((what) => what.startsWith("animation-frames")),
        result.pending.join(),
      );
    },
  );

  await t.step(
    "Settler.settle() drops the requests of a document the page left when a body was never read",
    async () => {
      await using context = await newContext(browser);
      // The long-poll rule would drop the request at 3 s: the cap sits below it.
      const settler = Settler.install(context, { capMs: 2_000 });
      const page = await context.newPage(`${server.origin}/spa/unread-then-leave`);
      await settler.settle(page);
      await evaluate(page, `document.querySelector("#vote").click()`);
      const result = await settler.settle(page);
      assert(result.settled, `pending: ${result.pending.join(", ")}`);
      assertEquals(
        await evaluate(page, `document.querySelector("#out").textContent`),
        "login page",
      );
    },
  );

  await t.step(
    "Settler.settle() waits for a slow save and for another route of a path a slow read went to",
    async () => {
      await using context = await newContext(browser);
      // The page's first read (600 ms) outlives the long-poll grace: it stops counting.
      const settler = Settler.install(context, { longPollMs: 300 });
      const page = await context.newPage(`${server.origin}/spa/one-path-api`);
      await settler.settle(page);
      // A write (700 ms, past the grace) is awaited: never a long-poll.
      await evaluate(page, `document.querySelector("#save").click()`);
      const saved = await settler.settle(page);
      assert(saved.settled, saved.pending.join());
      assertEquals(
        await evaluate(page, `document.querySelector("#status").textContent`),
        "Published",
      );
      // Another route through the same path is another endpoint.
      await evaluate(page, `document.querySelector("#terms").click()`);
      const listed = await settler.settle(page);
      assert(listed.settled, listed.pending.join());
      assertEquals(
        await evaluate(page, `document.querySelector("#list").textContent`),
        "terms of /wp/v2/categories",
      );
    },
  );

  await t.step(
    "Settler.settle() returns after a closing dialog is gone: its exit animation, or the save it waits for",
    async () => {
      for (const button of ["#close", "#got"]) {
        await using context = await newContext(browser);
        const settler = Settler.install(context, { longPollMs: 300 });
        const page = await context.newPage(`${server.origin}/spa/closing-modal`);
        await settler.settle(page);
        await evaluate(page, `document.querySelector("${button}").click()`);
        const closed = await settler.settle(page);
        assert(closed.settled, closed.pending.join());
        assertEquals(await evaluate(page, `document.querySelector(".guide")`), null, button);
      }
    },
  );

  await t.step(
    "Settler.settle() waits for a Web Animation inside an open shadow root: a web component's dialog fading out",
    async () => {
      await using context = await newContext(browser);
      const settler = Settler.install(context);
      const page = await context.newPage(`${server.origin}/spa/shadow-closing-modal`);
      await settler.settle(page);
      await evaluate(
        page,
        `document.querySelector("guide-box").shadowRoot.querySelector("#close").click()`,
      );
      const closed = await settler.settle(page);
      assert(closed.settled, closed.pending.join());
      assert(closed.waitedFor.includes("animations"), closed.waitedFor.join());
      assertEquals(await evaluate(page, `document.querySelector("guide-box")`), null);
    },
  );

  await t.step("Settler.settle() throws when the page is not from its context", async () => {
    await using context = await newContext(browser);
    const settler = Settler.install(context);
    await using other = await newContext(browser);
    const page = await other.newPage("about:blank");
    await assertRejects(() => settler.settle(page), TypeError, "not opened");
  });
});
