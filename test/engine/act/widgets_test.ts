// Widgets real sites build with small npm libraries, driven through the
// observation and the actions: icon-only controls with click listeners, a
// select2 picker that chooses on mouseup and removes its list, drag and
// drop (SortableJS, a pointer slider, a kanban drop zone) and a Quill
// editor whose pending formats survive typing.
import { assert, assertEquals, assertStringIncludes } from "@std/assert";
import { ActionError } from "../../../engine/act/errors.ts";
import { Browser } from "../../../engine/browser/browser.ts";
import { Env } from "../../../engine/env.ts";
import type { EnvObservation } from "../../../engine/env_types.ts";
import { serveApps } from "../../../fixtures/apps/mod.ts";
import { TINYMCE_START } from "../../../fixtures/apps/pages_widgets.ts";
import { openAppPage, pageValue } from "./_app_pages.ts";

function idOf(observation: EnvObservation, role: string, name: string): number {
  const element = observation.elements.find((el) => el.role === role && el.name === name);
  assert(element, `no ${role} "${name}" in:\n${observation.text}`);
  return element.id;
}

Deno.test("Env.step() acts on icon-only controls named by their icon or tooltip; a bare grip gets no id", async () => {
  await using server = await serveApps();
  await using browser = await Browser.launch();
  await using env = await openAppPage(browser, server, "/icon-feed");
  const observation = await env.observe();
  const names = observation.elements.map((el) => `${el.role} ${el.name}`);
  assertEquals(
    names,
    [
      "button Copy link",
      // Three posts, the same five icons in each.
      ...[1, 2, 3].flatMap(() => [
        "clickable share",
        "clickable heart",
        "clickable Reply",
        "clickable More options",
        // A glyph drawn by `::before` (⚑), named by what it shows.
        "clickable flag",
      ]),
    ],
    observation.text,
  );
  const share = observation.elements.filter((el) => el.name === "share")[1]!.id;
  const step = await env.step({ action: "click", id: share });
  assertStringIncludes(step.observation.text, "share on post 2");
  assertEquals(await pageValue(env, "window.__acts"), ["share 1"]);
});

Deno.test("Env.step() shows a flash that came and went during the step", async () => {
  await using server = await serveApps();
  await using browser = await Browser.launch();
  await using env = await openAppPage(browser, server, "/icon-feed");
  const observation = await env.observe();
  const step = await env.step({ action: "click", id: idOf(observation, "button", "Copy link") });
  assertEquals(step.observation.flashed, ["Copied!"]);
  assertStringIncludes(step.observation.text, 'flashed: "Copied!"');
  // Said once: the next observation has nothing new.
  const next = await env.observe();
  assertEquals(next.flashed, undefined);
});

Deno.test("Env.step() chooses a select2 option by click and by select, judged by the value the page took", async () => {
  await using server = await serveApps();
  await using browser = await Browser.launch();
  await using env = await openAppPage(browser, server, "/select2");
  let observation = await env.observe();
  const picker = idOf(observation, "combobox", "Choose a country");
  // Opened by a click, the option clicked: select2 chooses on mouseup and removes its list.
  let step = await env.step({ action: "click", id: picker });
  observation = step.observation;
  const norway = idOf(observation, "option", "Norway");
  step = await env.step({ action: "click", id: norway });
  assertEquals(await pageValue(env, `document.getElementById("country").value`), "NO");
  assertStringIncludes(step.observation.text, "Ships to Norway");
  // `select` on the picker's combobox: opens it, clicks the option, reads the choice back.
  observation = step.observation;
  const again = idOf(observation, "combobox", "Norway");
  step = await env.step({ action: "select", id: again, option: "Japan" });
  assertEquals(await pageValue(env, `document.getElementById("country").value`), "JP");
  assertStringIncludes(step.observation.text, "Ships to Japan");
  // A picker that lists options only as one types: its search field is typed into.
  step = await env.step({
    action: "select",
    id: idOf(step.observation, "combobox", "Search a city"),
    option: "Lisbon",
  });
  assertEquals(await pageValue(env, `document.getElementById("city").value`), "Lisbon");
  assertStringIncludes(step.observation.text, "City: Lisbon");
});

Deno.test("Env.step() drags: a SortableJS item onto another, a slider's handle by an offset, a card into a lane", async () => {
  await using server = await serveApps();
  await using browser = await Browser.launch();
  await using env = await openAppPage(browser, server, "/drag");
  let observation = await env.observe();
  // SortableJS (HTML5 drag and drop): the first item dropped on the third.
  let step = await env.step({
    action: "drag",
    id: idOf(observation, "listitem", "Write the brief"),
    to: idOf(observation, "listitem", "Call the printer"),
  });
  assertStringIncludes(step.observation.text, "Order: b c a d");
  assertStringIncludes(step.result.detail ?? "", "HTML5");
  // A pointer-driven slider: its handle dragged 150 px right of its start.
  observation = step.observation;
  step = await env.step({ action: "drag", id: idOf(observation, "slider", "Volume"), dx: 150 });
  const volume = Number(/Volume (\d+)/.exec(step.observation.text)?.[1]);
  assert(volume >= 45 && volume <= 55, step.observation.text);
  // A draggable card dropped on another lane.
  observation = step.observation;
  const card = idOf(observation, "clickable", "Fix the login bug");
  const lanes = await pageValue(env, `document.getElementById("done").getBoundingClientRect().x`);
  assert(typeof lanes === "number");
  step = await env.step({ action: "drag", id: card, dx: 190, dy: 0 });
  assertStringIncludes(step.observation.text, "Fix the login bug is in Done");
  // A drag the page shows nothing of is an error, not a success.
  observation = step.observation;
  const heading = await env.step({
    action: "drag",
    id: idOf(observation, "listitem", "Book the venue"),
    dx: 400,
    dy: 0,
  }).then(() => "ok", (error) => error instanceof ActionError ? error.code : String(error));
  assertStringIncludes(heading, "value-not-set");
});

Deno.test("Env.step() on Shoelace's web components: a range's drag is seen in its shadow root, the dialog's fade-out there is waited for, a label's slotted text is said once", async () => {
  await using server = await serveApps();
  await using browser = await Browser.launch();
  await using env = await openAppPage(browser, server, "/shoelace");
  let observation = await env.observe();
  // The label's text sits in a <slot> inside the <label>: the field's name, not a line of its own.
  assertEquals(
    observation.text.split("\n").filter((line) => line.includes("Display name")),
    [`[${idOf(observation, "textbox", "Display name")}] textbox "Display name" value="Ada"`],
  );
  // The range moves its input's value and the tooltip in its root: a drag that worked.
  let step = await env.step({ action: "drag", id: idOf(observation, "slider", "Volume"), dx: 180 });
  assertEquals(step.result.detail, "dragged");
  assert(Number(await pageValue(env, `document.getElementById("volume").value`)) > 60);
  step = await env.step({ action: "click", id: idOf(step.observation, "button", "Save") });
  step = await env.step({ action: "click", id: idOf(step.observation, "button", "OK") });
  // The step waited out the dialog's exit animation: the form has its ids again.
  assert(step.result.settle?.waitedFor.includes("animations"), step.observation.text);
  observation = step.observation;
  assertEquals(await pageValue(env, `document.getElementById("done").open`), false);
  idOf(observation, "checkbox", "Send me news");
  assert(!observation.text.includes("Your account was saved"), observation.text);
});

Deno.test("Env.step() types on in a focused rich-text editor, keeping a pending Bold (Quill, TipTap) and a list toggled before", async (t) => {
  await using server = await serveApps();
  await using browser = await Browser.launch();
  await t.step("Quill", async () => {
    await using env = await openAppPage(browser, server, "/quill");
    let observation = await env.observe();
    const editor = idOf(observation, "textbox", "");
    observation = (await env.step({ action: "type", id: editor, text: "Plain " })).observation;
    // Bold toggled with nothing selected: Quill keeps it at the caret for what is typed next.
    await env.step({ action: "click", id: idOf(observation, "button", "bold") });
    await env.step({ action: "type", id: editor, text: "strong", mode: "append" });
    assertEquals(
      await pageValue(env, `document.querySelector(".ql-editor").innerHTML`),
      "<p>Plain <strong>strong</strong></p>",
    );
    // A new line, a bulleted list toggled from the toolbar, and typing on: the text is its item.
    observation = (await env.step({ action: "press", keys: "Enter" })).observation;
    await env.step({ action: "click", id: idOf(observation, "button", "list: bullet") });
    await env.step({ action: "type", id: editor, text: "first item", mode: "append" });
    const html = String(await pageValue(env, `document.querySelector(".ql-editor").innerHTML`));
    assert(/<li data-list="bullet">.*first item<\/(strong|li)>/.test(html), html);
  });
  await t.step("TipTap", async () => {
    await using env = await openAppPage(browser, server, "/tiptap");
    let observation = await env.observe();
    const editor = idOf(observation, "textbox", "Note");
    observation = (await env.step({ action: "type", id: editor, text: "Plain " })).observation;
    // ProseMirror keeps a toggled Bold as stored marks, which any selection change drops.
    await env.step({ action: "click", id: idOf(observation, "button", "Bold") });
    await env.step({ action: "type", id: editor, text: "strong", mode: "append" });
    assertEquals(
      await pageValue(env, "window.__editor.getHTML()"),
      "<p>Plain <strong>strong</strong></p>",
    );
    await env.step({ action: "press", keys: "Enter" });
    await env.step({ action: "click", id: idOf(observation, "button", "Bullet list") });
    await env.step({ action: "type", id: editor, text: "item", mode: "append" });
    // (The starter kit keeps an empty paragraph after a list, where a click can land.)
    assertEquals(
      String(await pageValue(env, "window.__editor.getHTML()")).replace(/<p><\/p>$/, ""),
      "<p>Plain <strong>strong</strong></p><ul><li><p>item</p></li></ul>",
    );
  });
});

Deno.test("Env.step() observes and fills a form inside a closed shadow root as in an open one", async () => {
  await using server = await serveApps();
  await using browser = await Browser.launch();
  await using env = await openAppPage(browser, server, "/closed-shadow");
  let observation = await env.observe();
  assertStringIncludes(observation.text, "One email a week, no more.");
  const email = idOf(observation, "textbox", "Email");
  await env.step({ action: "type", id: email, text: "ada@example.com" });
  await env.step({ action: "check", id: idOf(observation, "checkbox", "I agree to the terms") });
  observation = (await env.step({ action: "click", id: idOf(observation, "button", "Subscribe") }))
    .observation;
  assertStringIncludes(observation.text, "Subscribed ada@example.com");
  assertEquals(await pageValue(env, "window.__subscribed"), "ada@example.com");
});

Deno.test("Env.step() uploads wherever a person picks or drops a file: a hidden input's label, Dropzone, a drop-only zone", async () => {
  await using server = await serveApps();
  await using browser = await Browser.launch();
  const dir = await Deno.makeTempDir({ prefix: "webserv-uploads-" });
  try {
    for (const name of ["me.png", "report.pdf", "receipt.txt"]) {
      await Deno.writeTextFile(`${dir}/${name}`, name);
    }
    await using env = await Env.create(browser, {
      startUrl: server.url("/uploads"),
      uploadDir: dir,
    });
    let observation = await env.observe();
    // The label of a display:none input is the control: one id, named by the label.
    const avatar = idOf(observation, "button", "Choose an avatar");
    observation = (await env.step({ action: "upload", id: avatar, files: ["me.png"] })).observation;
    assertStringIncludes(observation.text, "Avatar: me.png");
    // Dropzone: its input lives elsewhere; the click on the zone opens the chooser.
    const zone = observation.elements.find((el) => el.name.includes("Drop files here"));
    assert(zone, observation.text);
    let step = await env.step({ action: "upload", id: zone.id, files: ["report.pdf"] });
    assertStringIncludes(step.result.detail ?? "", "file chooser");
    assertStringIncludes(step.observation.text, "Documents: report.pdf");
    // A zone that only takes drops: the files are dropped on it.
    observation = step.observation;
    const dropOnly = idOf(observation, "clickable", "Drop a receipt here");
    step = await env.step({ action: "upload", id: dropOnly, files: ["receipt.txt"] });
    assertStringIncludes(step.result.detail ?? "", "dropped");
    assertStringIncludes(step.observation.text, "Receipt: receipt.txt");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("Env.step() types into TinyMCE, whose field is the body of its frame: appended, bold kept, replaced", async () => {
  await using server = await serveApps();
  await using browser = await Browser.launch();
  await using env = await openAppPage(browser, server, "/tinymce");
  const content = () => pageValue(env, `tinymce.get("post").getContent()`);
  let observation = await env.observe();
  // Before: the body had no id, and nothing could be typed into the post.
  const editor = idOf(observation, "textbox", "Rich Text Area");
  // Not clicked into yet: the frame's body is the active element of a document without focus.
  assert(!observation.text.includes("focused"), observation.text);
  observation = (await env.step({
    action: "type",
    id: editor,
    text: " Bring a friend.",
    mode: "append",
  })).observation;
  assertEquals(await content(), `<p>${TINYMCE_START} Bring a friend.</p>`);
  // One value, not the paragraph again below the line.
  assertStringIncludes(
    observation.text,
    `textbox "Rich Text Area" value="${TINYMCE_START} Bring a friend." focused`,
  );
  // Bold pressed with the caret at the end: typing on keeps it.
  await env.step({ action: "click", id: idOf(observation, "button", "Bold") });
  await env.step({ action: "type", id: editor, text: " Free entry.", mode: "append" });
  assertEquals(
    await content(),
    `<p>${TINYMCE_START} Bring a friend.<strong> Free entry.</strong></p>`,
  );
  await env.step({ action: "type", id: editor, text: "Fair moved to Sunday." });
  assertEquals(await content(), "<p>Fair moved to Sunday.</p>");
});

Deno.test("Env.step() checks and unchecks an Element Plus switch, whose hidden checkbox only aria-checked tells", async () => {
  await using server = await serveApps();
  await using browser = await Browser.launch();
  await using env = await openAppPage(browser, server, "/element-plus");
  const booking = () => pageValue(env, "window.__booking");
  let observation = await env.observe();
  // One id per switch: the track drawn beside the hidden checkbox is that switch too.
  assertEquals(
    observation.elements.filter((el) => el.role === "switch").map((el) => el.name),
    ["Reminders", "Breakfast"],
    observation.text,
  );
  assert(!/clickable listener\n|clickable pointer\n/.test(observation.text), observation.text);
  // Breakfast is on from the start: shown checked, though its checkbox's `checked` is false.
  assertStringIncludes(observation.text, 'switch "Breakfast" checked');
  // Before: "still unchecked after a click", the page having turned it on.
  let step = await env.step({ action: "check", id: idOf(observation, "switch", "Reminders") });
  assertEquals(step.result.detail, "changed");
  assertStringIncludes(step.observation.text, 'switch "Reminders" checked');
  observation = step.observation;
  step = await env.step({ action: "uncheck", id: idOf(observation, "switch", "Breakfast") });
  assertEquals(step.result.detail, "changed");
  assertEquals(await booking(), { room: "", guests: 2, reminders: true, breakfast: false });
  // Checked already: nothing clicked.
  step = await env.step({ action: "check", id: idOf(observation, "switch", "Reminders") });
  assertEquals(step.result.detail, "unchanged");
  step = await env.step({
    action: "select",
    id: idOf(observation, "clickable", "Select a room"),
    option: "Suite",
  });
  assertEquals(step.result.detail, "Suite");
  assertEquals(await booking(), { room: "Suite", guests: 2, reminders: true, breakfast: false });
});
