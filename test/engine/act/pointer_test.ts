// Pointer actions reach targets clipped by nested scroll boxes and in frames
// below the fold, links broken over two lines, scroll the container they are given, aim at the stand-in
// of a styled-away checkbox, and never press where a hover effect moved the
// target away.
import { assertEquals } from "@std/assert";
import { Browser } from "../../../engine/browser/browser.ts";
import type { Page } from "../../../engine/browser/page.ts";
import type { CdpSession } from "../../../engine/cdp/connection.ts";
import { ElementCalls, type Ref } from "../../../engine/act/_calls.ts";
import type { ActArgs, ActName, ActResult, CheckResult } from "../../../engine/act/_in_page.ts";
import { Pointer } from "../../../engine/act/_pointer.ts";
import { serveSpa } from "../../../fixtures/spa/mod.ts";
import { SelectorResolver } from "./_selector_resolver.ts";
import { waitFor } from "../../_util/wait.ts";
import { evaluate as evaluateIn, rejectsWith } from "../../_util/page_eval.ts";
import { actorOn } from "./_actor_on.ts";

function evaluate(page: Page, expression: string): Promise<unknown> {
  return evaluateIn(page, expression, { awaitPromise: true });
}

/** The session of the page's out-of-process frame at `path`, once attached. */
async function frameAt(page: Page, path: string): Promise<CdpSession | undefined> {
  for (const session of page.frameSessions) {
    const { result } = await session.send("Runtime.evaluate", {
      expression: "location.pathname",
      returnByValue: true,
    }).catch(() => ({ result: { value: undefined } }));
    if (result.value === path) return session;
  }
  return undefined;
}

Deno.test("Actor.act() pointer", async (t) => {
  await using server = serveSpa();
  await using browser = await Browser.launch();

  const open = (path: string, ids: Record<number, string>) =>
    actorOn(browser, `${server.origin}${path}`, ids);

  await t.step(
    "Actor.act() clicks a target clipped by nested scroll boxes when it is in the viewport",
    async () => {
      const { context, page, actor } = await open("/act/scrollers", { 1: "#deep", 2: "#bottom" });
      await using _ = context;
      await actor.act({ action: "click", id: 1 });
      await actor.act({ action: "click", id: 2 });
      assertEquals(await evaluate(page, "window.__log"), [
        { click: "deep", trusted: true },
        { click: "bottom", trusted: true },
      ]);
    },
  );

  await t.step(
    "Actor.act() clicks a link broken over two lines on one of its fragments",
    async () => {
      const { context, page, actor } = await open("/act/wrapped-link", { 1: "#wrap" });
      await using _ = context;
      await actor.act({ action: "click", id: 1 });
      assertEquals(await evaluate(page, "window.__log"), [{
        click: "wrap",
        trusted: true,
        lines: 2,
      }]);
    },
  );

  await t.step(
    "Actor.act() scrolls the container given when a nested box lies at its centre",
    async () => {
      const { context, page, actor } = await open("/act/scrollers", { 1: "#list", 2: "#nested" });
      await using _ = context;
      const result = await actor.act({ action: "scroll", id: 1, direction: "down", amount: 120 });
      assertEquals(await evaluate(page, `[$("#list").scrollTop, $("#nested").scrollTop]`), [
        120,
        0,
      ]);
      assertEquals(result.detail, "div#list scrolled to 0,120");
      await actor.act({ action: "scroll", id: 2, direction: "down" });
      assertEquals(await evaluate(page, `$("#nested").scrollTop`), 80);
      await actor.act({ action: "scroll", id: 1, direction: "up", amount: 500 });
      const end = await actor.act({ action: "scroll", id: 1, direction: "up" });
      assertEquals(end.detail, "div#list is already at its up end");
    },
  );

  await t.step("Actor.act() aims again when a hover effect moves the target", async () => {
    const { context, page, actor } = await open("/act/hover", { 1: "#shift" });
    await using _ = context;
    await actor.act({ action: "click", id: 1 });
    assertEquals(await evaluate(page, "window.__log"), [{ click: "shift" }]);
  });

  await t.step(
    "Actor.act() throws and presses nothing when hovering hides or covers the target",
    async () => {
      const { context, page, actor } = await open("/act/hover", {
        1: "#trash",
        2: "#tipped",
        3: "#runaway",
      });
      await using _ = context;
      await rejectsWith(actor.act({ action: "click", id: 1 }), "not-visible");
      await rejectsWith(
        actor.act({ action: "click", id: 2 }),
        "covered",
        'covered by div#tip "Sharing is off for this file"',
      );
      await rejectsWith(actor.act({ action: "click", id: 3 }), "target-moved", "kept moving");
      assertEquals(await evaluate(page, "window.__log"), []);
    },
  );

  await t.step(
    "Actor.act() ticks a styled-away input through its stand-in when the stand-in covers it",
    async () => {
      const { context, page, actor } = await open("/act/standins", {
        1: "#monthly",
        2: "#yearly",
        3: "#dark",
      });
      await using _ = context;
      assertEquals((await actor.act({ action: "check", id: 1 })).detail, "changed");
      await actor.act({ action: "click", id: 2 });
      assertEquals((await actor.act({ action: "check", id: 3 })).detail, "changed");
      assertEquals((await actor.act({ action: "uncheck", id: 3 })).detail, "changed");
      assertEquals(await evaluate(page, "[$('#monthly').checked, $('#yearly').checked]"), [
        false,
        true,
      ]);
      assertEquals(await evaluate(page, "window.__log"), [
        { change: "monthly", checked: true },
        { change: "yearly", checked: true },
        { change: "dark", checked: true },
        { change: "dark", checked: false },
      ]);
    },
  );

  await t.step(
    "Actor.act() throws value-not-set when a check leaves the input as it was, unless no state is shown",
    async () => {
      const { context, page, actor } = await open("/act/standins", {
        1: "#dead",
        2: "#veto",
        3: "#bare",
      });
      await using _ = context;
      const bare = await actor.act({ action: "check", id: 3 });
      assertEquals(bare.detail, "clicked; its state is not shown");
      assertEquals(await evaluate(page, "$('#bare').className"), "on");
      await rejectsWith(
        actor.act({ action: "check", id: 1 }),
        "value-not-set",
        "is still unchecked after a click on it",
      );
      await rejectsWith(actor.act({ action: "check", id: 2 }), "value-not-set");
      assertEquals(await evaluate(page, "[$('#dead').checked, $('#veto').checked]"), [
        false,
        false,
      ]);
    },
  );

  await t.step(
    "Actor.act() clicks into frames below the fold when they sit in the page or a scroll box",
    async () => {
      const { context, page, actor } = await open("/act/low-frames", {
        1: "#low-same >> #inner",
        2: "#boxed >> #inner",
        3: "cross >> #cross-btn",
      });
      await using _ = context;
      await actor.act({ action: "click", id: 1 });
      await actor.act({ action: "click", id: 2 });
      await evaluate(page, "scrollTo(0, 0)");
      await actor.act({ action: "click", id: 3 });
      // The cross-site frame reports its click by postMessage, from another
      // process: the click is done before the message arrives.
      await evaluate(
        page,
        `new Promise((resolve) => { const poll = () => window.__log.length >= 3 ? resolve() : setTimeout(poll, 10); poll(); })`,
      );
      await actor.act({ action: "click", id: 1 });
      assertEquals(await evaluate(page, "window.__log"), [
        { click: "low-same", trusted: true },
        { click: "boxed", trusted: true },
        { message: "cross-frame click true" },
        { click: "low-same", trusted: true },
      ]);
    },
  );

  await t.step(
    "Pointer presses nothing when the move never reaches the target's out-of-process frame",
    async () => {
      const { context, page, actor } = await open("/act/low-frames", { 3: "cross >> #cross-btn" });
      await using _ = context;
      // Stands in for the browser routing input at the point to another frame
      // (its hit-test data behind a scroll), which no page can cause at will:
      // the in-page checks say the move never arrived.
      class Unrouted extends ElementCalls {
        override async call<K extends ActName>(
          ref: Ref,
          name: K,
          ...args: ActArgs<K>
        ): Promise<ActResult<K>> {
          if (name === "HOVERED") return "no" as ActResult<K>;
          const answer = await super.call(ref, name, ...args);
          const check = answer as CheckResult;
          return name === "CHECK_POINT" && check.ok
            ? { ...check, reached: false } as ActResult<K>
            : answer;
        }
      }
      const calls = new Unrouted(new SelectorResolver(page, { 3: "cross >> #cross-btn" }), 5_000);
      const pointer = new Pointer(calls, 5_000, () => page);
      // The cross-site frame loads on its own time.
      const ref = await waitFor(() => calls.element(3).catch(() => undefined), {
        message: "the cross-site frame's button appears",
      });
      const aim = await pointer.aim(ref, 3);
      await rejectsWith(pointer.mouse(aim, "click", "left", []), "target-moved", "within 1 s");
      await rejectsWith(pointer.mouse(aim, "hover", "left", []), "target-moved", "within 1 s");
      // A real click after it, then a marker the frame itself posts: messages
      // from one frame arrive in order, so once the marker is in the log every
      // click message is too, and a press of the first attempt would show.
      await actor.act({ action: "click", id: 3 });
      const frame = await waitFor(() => frameAt(page, "/act/frame"), {
        message: "the cross-site frame's session is attached",
      });
      await frame.send("Runtime.evaluate", { expression: `parent.postMessage("marker", "*")` });
      await waitFor(() => evaluate(page, `window.__log.some((e) => e.message === "marker")`), {
        message: "the cross-site frame's marker reaches the page",
      });
      assertEquals(await evaluate(page, "window.__log"), [
        { message: "cross-frame click true" },
        { message: "marker" },
      ]);
    },
  );
});
