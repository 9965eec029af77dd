// A <br> parts the words around it: a table cell "Kristy Turner<br><span>kristy@…</span>"
// must not read as one word "Turnerkristy@…".
import { assertEquals, assertStringIncludes } from "@std/assert";
import { Browser } from "../../../engine/browser/browser.ts";
import { Env } from "../../../engine/env.ts";
import { serveHtml } from "../../_util/html_server.ts";

Deno.test("Observer.observe() keeps the words apart that a line break parts", async () => {
  await using server = serveHtml({
    "/": `<!doctype html><title>Orders</title><table><tr><th>Customer</th></tr>
      <tr><td>Kristy Turner<br><span class="muted">kristy.turner661@example.com</span></td></tr></table>
      <p>First line<br>second line</p>`,
  });
  const site = { origin: server.url("").replace(/\/$/, ""), reset: () => Promise.resolve() };
  await using browser = await Browser.launch();
  await using env = await Env.create(browser, { site });
  const { text } = await env.observe();
  assertStringIncludes(text, "Kristy Turner kristy.turner661@example.com");
  assertStringIncludes(text, "First line second line");
});

Deno.test("Observer.observe() keeps a sentence whole around words only a screen reader gets", async () => {
  await using server = serveHtml({
    "/": `<!doctype html><meta charset="utf-8"><title>Byline</title>
      <style>.sr-only{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap}</style>
      <p>By <a href="#/mira">Mira</a> · 1 December 2026 · <span class="sr-only">Reading time:</span> 9 min read</p>
      <p>Updated 2 December <span class="sr-only">at</span> 14:00</p>`,
  });
  const site = { origin: server.url("").replace(/\/$/, ""), reset: () => Promise.resolve() };
  await using browser = await Browser.launch();
  await using env = await Env.create(browser, { site });
  const { text } = await env.observe();
  assertStringIncludes(text, `"Mira" · 1 December 2026 · 9 min read`);
  assertStringIncludes(text, "Updated 2 December 14:00");
});

Deno.test("Observer.observe() reads an editor's paragraphs apart, as its value, once", async () => {
  await using server = serveHtml({
    "/": `<!doctype html><meta charset="utf-8"><title>Editor</title>
      <div contenteditable="true" aria-label="Note"><p>Hello there</p><p>Second <b>bold</b> line</p></div>
      <div contenteditable="true" aria-label="Long">${
      "<p>A longer paragraph of the draft.</p>".repeat(6)
    }</div>`,
  });
  const site = { origin: server.url("").replace(/\/$/, ""), reset: () => Promise.resolve() };
  await using browser = await Browser.launch();
  await using env = await Env.create(browser, { site });
  const { text } = await env.observe();
  // Before: value="Hello thereSecond bold line", and the paragraphs again after it.
  assertStringIncludes(text, `textbox "Note" value="Hello there Second bold line" editable\n`);
  // Too long for a value: its start as the value, the whole text below.
  assertEquals(text.split("\n A longer paragraph of the draft.").length - 1, 6, text);
});
