// A story's prose is the page's content however it is set: paragraphs, or
// one block of text broken by <br>s. It is kept whole, far down the page
// too, and never clipped; only repeated chrome is summarised.
import { assert, assertEquals } from "@std/assert";
import { Browser, newContext } from "../../../engine/browser/browser.ts";
import { Observer } from "../../../engine/observe/observer.ts";
import { prose } from "../../../fixtures/apps/_html.ts";
import { serveHtml } from "../../_util/html_server.ts";

const PARAGRAPHS = Array.from({ length: 120 }, (_, i) => prose(i, 3));

const TAGS = Array.from({ length: 40 }, (_, i) => `<a href="/tag/${i}">Tag ${i}</a>`).join(" ");

Deno.test("Observer.observe() keeps a long story set with <br>s whole, in lines of at most 4000 characters", async () => {
  await using server = serveHtml({
    "/": `<!doctype html><title>Story</title><nav>${TAGS}</nav><h1>The long story</h1>` +
      `<div class="storytext">${PARAGRAPHS.join("<br><br>")}</div>`,
  });
  await using browser = await Browser.launch();
  await using context = await newContext(browser);
  const observer = Observer.attach(context);
  const page = await context.newPage(server.url("/"));
  const { text } = await observer.observe(page);
  // A paragraph may run on from one line to the next.
  const joined = text.replace(/\n/g, " ");
  const missing = PARAGRAPHS.filter((paragraph) => !joined.includes(paragraph));
  assertEquals(missing.length, 0, `${missing.length} of ${PARAGRAPHS.length} paragraphs missing`);
  assert(!text.includes("more characters"), "no prose is clipped");
  const longest = Math.max(...text.split("\n").map((line) => line.length));
  assert(longest <= 4000, `a line of ${longest} characters`);
});
