import { assert, assertEquals } from "@std/assert";
import { Actor } from "../../../engine/act/actor.ts";
import { Browser, newContext } from "../../../engine/browser/browser.ts";
import type { Page } from "../../../engine/browser/page.ts";
import { Settler } from "../../../engine/settle/settler.ts";
import { serveSpa } from "../../../fixtures/spa/mod.ts";
import { SelectorResolver } from "./_selector_resolver.ts";
import { evaluate, rejectsWith } from "../../_util/page_eval.ts";
import { actorOn } from "./_actor_on.ts";

const IDS: Record<number, string> = {
  1: "#btn",
  2: "#dbl",
  3: "#hover",
  4: "#disabled",
  5: "#hidden",
  6: "#covered",
  7: "#far",
  8: "#name",
  9: "#readonly",
  10: "#notes",
  11: "#editable",
  12: "#keys",
  13: "#color",
  14: "#combo",
  15: "#sizes",
  16: "#agree",
  17: "#fancy",
  18: "#switch",
  19: "#small",
  20: "#large",
  21: "#file",
  22: "#box",
  23: "#host >>> #shadow-btn",
  24: "#same >> #inner",
  25: "cross >> #cross-btn",
  26: "#newtab",
  27: "#alert",
  28: "#confirm",
  29: "#prompt",
  30: "#remove",
  31: "#fancy-label",
  32: "#busy",
  33: "#guard",
};

// deno-lint-ignore no-explicit-any
async function log(page: Page): Promise<any[]> {
  return await evaluate(page, "window.__log") as unknown[];
}

Deno.test("Actor", async (t) => {
  await using server = serveSpa();
  await using browser = await Browser.launch();

  const open = () => actorOn(browser, `${server.origin}/act/controls`, IDS);

  await t.step(
    "Actor.act() clicks with trusted events and settles when the target is a button",
    async () => {
      const { context, page, actor } = await open();
      await using _ = context;
      const result = await actor.act({ action: "click", id: 1 });
      assert(result.settle?.settled);
      await actor.act({ action: "click", id: 1, modifiers: ["Control"] });
      await actor.act({ action: "click", id: 1, button: "right" });
      await actor.act({ action: "dblclick", id: 2 });
      await actor.act({ action: "hover", id: 3 });
      assertEquals(await log(page), [
        { click: "btn", trusted: true, ctrl: false, detail: 1, button: 0 },
        { click: "btn", trusted: true, ctrl: true, detail: 1, button: 0 },
        { contextmenu: "btn" },
        { dblclick: "dbl", trusted: true },
        { hover: "hover", trusted: true },
      ]);
    },
  );

  await t.step(
    "Actor.act() scrolls into view and reaches shadow roots and iframes when targets are there",
    async () => {
      const { context, page, actor } = await open();
      await using _ = context;
      await actor.act({ action: "click", id: 7 });
      await actor.act({ action: "click", id: 23 });
      await actor.act({ action: "click", id: 24 });
      await actor.act({ action: "click", id: 25 });
      assertEquals(await log(page), [
        { click: "far", trusted: true },
        { click: "shadow", trusted: true },
        "same-frame click",
        { message: "cross-frame click true" },
      ]);
    },
  );

  await t.step("Actor.act() names the parent's cover when an iframe is covered", async () => {
    const context = await newContext(browser);
    await using _ = context;
    const page = await context.newPage(`${server.origin}/act/covered-frames`);
    const resolver = new SelectorResolver(page, { 1: "#same >> #inner", 2: "cross >> #cross-btn" });
    const actor = new Actor(context, { resolver });
    const same = await rejectsWith(actor.act({ action: "click", id: 1 }), "covered");
    assertEquals(same.cover, 'div#same-cover "Loading"');
    const cross = await rejectsWith(actor.act({ action: "click", id: 2 }), "covered");
    assertEquals(cross.cover, 'div#cross-cover "Please wait"');
  });

  await t.step(
    "Actor.act() names a cover by its rendered text, never its scripts' source",
    async () => {
      const context = await newContext(browser);
      await using _ = context;
      // An inert iframe takes no input: the parent's hit test goes through to its body.
      const page = await context.newPage(`${server.origin}/act/inert-frame`);
      const actor = new Actor(context, {
        resolver: new SelectorResolver(page, { 1: "cross >> #cross-btn" }),
      });
      const error = await rejectsWith(actor.act({ action: "click", id: 1 }), "covered");
      assertEquals(error.cover, "body");
      assertEquals(await log(page), []);
    },
  );

  await t.step(
    "Actor.act() throws typed errors and stays usable when targets are bad",
    async () => {
      const { context, page, actor } = await open();
      await using _ = context;
      const covered = await rejectsWith(actor.act({ action: "click", id: 6 }), "covered");
      assertEquals(covered.cover, 'div#overlay "We use cookies"');
      await rejectsWith(
        actor.act({ action: "click", id: 4 }),
        "disabled",
        "Element 4 (button#disabled",
      );
      await rejectsWith(actor.act({ action: "click", id: 5 }), "not-visible");
      await rejectsWith(
        actor.act({ action: "click", id: 999 }),
        "unknown-id",
        "No element has id 999",
      );
      await evaluate(page, `document.querySelector("#remove").remove()`);
      await rejectsWith(actor.act({ action: "click", id: 30 }), "stale-id", "Element 30 is gone");
      await rejectsWith(
        actor.act({ action: "type", id: 9, text: "x" }),
        "not-editable",
        "read-only",
      );
      await rejectsWith(
        actor.act({ action: "type", id: 1, text: "x" }),
        "not-editable",
        "does not take text",
      );
      await rejectsWith(actor.act({ action: "check", id: 1 }), "not-editable");
      await rejectsWith(actor.act({ action: "click", id: "1" }), "invalid-action");
      await actor.act({ action: "click", id: 1 });
      assertEquals((await log(page)).length, 1);
    },
  );

  await t.step("Actor.act() types through real keys when the field is controlled", async () => {
    const { context, page, actor } = await open();
    await using _ = context;
    await actor.act({ action: "type", id: 8, text: "Ada" });
    assertEquals(await evaluate(page, "window.__name"), "Ada");
    await actor.act({ action: "type", id: 8, text: " Lovelace", mode: "append", enter: true });
    assertEquals(await evaluate(page, "window.__name"), "Ada Lovelace");
    assertEquals(await log(page), [{ enter: "Ada Lovelace" }]);
    await actor.act({ action: "type", id: 10, text: "line one\nline two" });
    assertEquals(
      await evaluate(page, `document.querySelector("#notes").value`),
      "line one\nline two",
    );
    await actor.act({ action: "type", id: 11, text: "édité ✓" });
    assertEquals(
      await evaluate(page, `document.querySelector("#editable").textContent`),
      "édité ✓",
    );
  });

  await t.step("Actor.act() presses chords when keys are given", async () => {
    const { context, page, actor } = await open();
    await using _ = context;
    await actor.act({ action: "press", keys: "Control+a", id: 12 });
    await actor.act({ action: "press", keys: "Shift+ArrowLeft" });
    const keys = (await log(page)).map(({ key, ctrl, shift }) => ({ key, ctrl, shift }));
    assertEquals(keys, [
      { key: "Control", ctrl: true, shift: false },
      { key: "a", ctrl: true, shift: false },
      { key: "Shift", ctrl: false, shift: true },
      { key: "ArrowLeft", ctrl: false, shift: true },
    ]);
    await rejectsWith(
      actor.act({ action: "press", keys: "Hyper+x" }),
      "invalid-action",
      "not a modifier",
    );
  });

  await t.step("Actor.act() selects options when the control is native or ARIA", async () => {
    const { context, page, actor } = await open();
    await using _ = context;
    assertEquals((await actor.act({ action: "select", id: 13, option: "Green" })).detail, "Green");
    await actor.act({ action: "select", id: 13, option: "b", by: "value" });
    await rejectsWith(
      actor.act({ action: "select", id: 13, option: "Purple" }),
      "option-not-found",
      'options: "Red", "Green", "Blue"',
    );
    await actor.act({ action: "select", id: 14, option: "Banana" });
    await actor.act({ action: "select", id: 15, option: "Large" });
    assertEquals(await log(page), [
      { change: "color", value: "g" },
      { change: "color", value: "b" },
      { fruit: "Banana", trusted: true },
      { size: "Large", trusted: true },
    ]);
  });

  await t.step(
    "Actor.act() checks idempotently when the control is a checkbox, switch or radio",
    async () => {
      const { context, page, actor } = await open();
      await using _ = context;
      assertEquals((await actor.act({ action: "check", id: 16 })).detail, "changed");
      assertEquals((await actor.act({ action: "check", id: 16 })).detail, "unchanged");
      await actor.act({ action: "uncheck", id: 16 });
      await actor.act({ action: "check", id: 17 });
      await actor.act({ action: "uncheck", id: 31 });
      await actor.act({ action: "check", id: 18 });
      await rejectsWith(actor.act({ action: "uncheck", id: 19 }), "not-editable", "radio");
      await actor.act({ action: "check", id: 20 });
      assertEquals(await evaluate(page, `document.querySelector("#large").checked`), true);
      assertEquals(await log(page), [
        { agree: true },
        { agree: false },
        { fancy: true },
        { fancy: false },
        { switch: true },
      ]);
    },
  );

  await t.step(
    "Actor.act() scrolls the page, a container or to an element when asked",
    async () => {
      const { context, page, actor } = await open();
      await using _ = context;
      await actor.act({ action: "scroll", direction: "down", amount: 300 });
      assert((await evaluate(page, "scrollY")) as number > 0);
      await actor.act({ action: "scroll", id: 22, direction: "down", amount: 200 });
      assert((await evaluate(page, "window.__boxScroll")) as number > 0);
      await actor.act({ action: "scroll", id: 7 });
      const top = await evaluate(
        page,
        `document.querySelector("#far").getBoundingClientRect().top`,
      );
      assert((top as number) >= 0 && (top as number) < 600);
    },
  );

  await t.step("Actor.act() uploads files when the target is a file input", async () => {
    const { context, page } = await open();
    await using _ = context;
    const dir = await Deno.makeTempDir({ prefix: "webserv-test-upload-" });
    try {
      await Deno.writeTextFile(`${dir}/a.txt`, "a");
      const actor = new Actor(context, {
        resolver: new SelectorResolver(page, IDS),
        uploadDir: dir,
      });
      await actor.act({ action: "upload", id: 21, files: ["a.txt"] });
      assertEquals(await log(page), [{ files: ["a.txt"] }]);
      await rejectsWith(actor.act({ action: "upload", id: 1, files: ["a.txt"] }), "not-editable");
      await rejectsWith(
        actor.act({ action: "upload", id: 21, files: ["nope.txt"] }),
        "invalid-action",
        "not a readable file",
      );
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  });

  await t.step(
    "Actor.act() refuses uploads from outside the upload directory, or without one",
    async () => {
      const { context, page, actor } = await open();
      await using _ = context;
      const root = await Deno.makeTempDir({ prefix: "webserv-test-upload-" });
      try {
        await Deno.mkdir(`${root}/up`);
        await Deno.writeTextFile(`${root}/secret.txt`, "secret");
        await Deno.writeTextFile(`${root}/up/ok.txt`, "ok");
        await Deno.symlink(`${root}/secret.txt`, `${root}/up/link.txt`);
        await rejectsWith(
          actor.act({ action: "upload", id: 21, files: ["ok.txt"] }),
          "not-allowed",
          "no upload directory",
        );
        const scoped = new Actor(context, {
          resolver: new SelectorResolver(page, IDS),
          uploadDir: `${root}/up`,
        });
        for (
          const file of [`${root}/secret.txt`, "/etc/passwd", "../secret.txt", "x/../../secret.txt"]
        ) {
          await rejectsWith(
            scoped.act({ action: "upload", id: 21, files: [file] }),
            "not-allowed",
            "outside",
          );
        }
        await rejectsWith(
          scoped.act({ action: "upload", id: 21, files: ["link.txt"] }),
          "not-allowed",
          "links outside",
        );
        assertEquals(await log(page), []);
        await scoped.act({ action: "upload", id: 21, files: ["./ok.txt"] });
        assertEquals(await log(page), [{ files: ["ok.txt"] }]);
      } finally {
        await Deno.remove(root, { recursive: true });
      }
    },
  );

  await t.step(
    "Actor.act() navigates and reports failures when history or URLs are bad",
    async () => {
      const { context, page, actor } = await open();
      await using _ = context;
      await rejectsWith(actor.act({ action: "forward" }), "navigation-failed", "no next page");
      await actor.act({ action: "goto", url: "/act/second" });
      assertEquals(await evaluate(page, "document.title"), "Second");
      await actor.act({ action: "back" });
      assertEquals(await evaluate(page, "document.title"), "Controls");
      await actor.act({ action: "forward" });
      assertEquals(await evaluate(page, "document.title"), "Second");
      const reload = await actor.act({ action: "reload" });
      assert(reload.settle?.waitedFor.includes("navigation"));
      await rejectsWith(actor.act({ action: "goto", url: "file:///etc/passwd" }), "not-allowed");
      await rejectsWith(
        actor.act({ action: "goto", url: "http://127.0.0.1:1/" }),
        "navigation-failed",
      );
    },
  );

  await t.step("Actor.act() switches and closes tabs when a link opens one", async () => {
    const { context, actor } = await open();
    await using _ = context;
    const opened = await actor.act({ action: "click", id: 26 });
    assertEquals(opened.opened, 1);
    assertEquals(opened.tabs, 2);
    assertEquals(await evaluate(actor.page!, "document.title"), "Second");
    await actor.act({ action: "switch_tab", tab: 0 });
    assertEquals(actor.tab, 0);
    await rejectsWith(actor.act({ action: "switch_tab", tab: 5 }), "not-allowed", "No tab 5");
    await actor.act({ action: "close_tab", tab: 1 });
    assertEquals(actor.tabs.length, 1);
    await rejectsWith(actor.act({ action: "close_tab" }), "not-allowed", "last tab");
  });

  await t.step("Actor.act() answers dialogs by policy or by the agent when one opens", async () => {
    const { context, page, actor } = await open();
    await using _ = context;
    const alerted = await actor.act({ action: "click", id: 27 });
    assertEquals(alerted.answeredDialogs, [{
      type: "alert",
      message: "Saved",
      answered: "accepted",
    }]);
    await rejectsWith(actor.act({ action: "dialog", accept: true }), "no-dialog");
    const asked = await actor.act({ action: "click", id: 28 });
    assertEquals(asked.dialog, { type: "confirm", message: "Delete it?" });
    await rejectsWith(actor.act({ action: "click", id: 1 }), "dialog-open", "Delete it?");
    await actor.act({ action: "dialog", accept: true });
    const prompted = await actor.act({ action: "click", id: 29 });
    assertEquals(prompted.dialog?.defaultPrompt, "Bob");
    const answered = await actor.act({ action: "dialog", accept: true, text: "Ada" });
    assertEquals(answered.dialog, undefined);
    assertEquals(await log(page), [{ alerted: true }, { confirmed: true }, { prompted: "Ada" }]);
    await actor.act({ action: "click", id: 33 });
    const left = await actor.act({ action: "goto", url: "/act/second" });
    assertEquals(left.answeredDialogs.map((dialog) => [dialog.type, dialog.answered]), [
      ["beforeunload", "accepted"],
    ]);
    assertEquals(await evaluate(page, "document.title"), "Second");
  });

  await t.step(
    "Actor.act() throws a timeout and stays usable when the page is busy too long",
    async () => {
      const context = await newContext(browser);
      await using _ = context;
      const settler = Settler.install(context);
      const page = await context.newPage(`${server.origin}/act/controls`);
      const actor = new Actor(context, {
        resolver: new SelectorResolver(page, IDS),
        settler,
        timeoutMs: 300,
      });
      await rejectsWith(actor.act({ action: "click", id: 32 }), "timeout", "did not answer");
      const fast = new Actor(context, { resolver: new SelectorResolver(page, IDS), settler });
      await fast.act({ action: "click", id: 1 });
      // Under load the 300 ms can run out before the busy click lands, so
      // only the click after the timeout is certain.
      assertEquals((await log(page)).map((entry) => Object.keys(entry)[0]).at(-1), "click");
    },
  );

  await t.step("Actor.act() ends the episode when the agent stops", async () => {
    const { context, actor } = await open();
    await using _ = context;
    assertEquals((await actor.act({ action: "stop", answer: "42" })).answer, "42");
    assertEquals(actor.answer, "42");
    await rejectsWith(actor.act({ action: "click", id: 1 }), "not-allowed");
  });
});
