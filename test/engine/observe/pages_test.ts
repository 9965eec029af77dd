// The fixture page suite in real Chromium: every must-see element gets an
// id, nothing marked must-not-see does. Each test opens its own browser and
// page, so any one runs alone (`--filter`) as it does in the file.
import {
  assert,
  assertEquals,
  assertGreater,
  assertMatch,
  assertStringIncludes,
} from "@std/assert";
import { Browser, newContext } from "../../../engine/browser/browser.ts";
import type { Page } from "../../../engine/browser/page.ts";
import { Observer } from "../../../engine/observe/observer.ts";
import type { Observation } from "../../../engine/observe/observation.ts";
import { decodePng } from "../../../engine/observe/_png.ts";
import { FIXTURE_PAGES, type FixturePage, servePages } from "../../../fixtures/pages/mod.ts";
import { waitFor } from "../../_util/wait.ts";

/** Names of the must-see elements of a page, from its markup. */
function expectedNames(page: FixturePage): string[] {
  const sources = [page.html, ...Object.values(page.extra ?? {})].join("\n");
  const names: string[] = [];
  for (const match of sources.matchAll(/data-expect="see" data-name="([^"]+)"/g)) {
    names.push(match[1]!);
  }
  for (const match of sources.matchAll(/dataset\.name = "([^"]+)"/g)) names.push(match[1]!);
  for (const match of sources.matchAll(/see\("([^"]+)"/g)) names.push(match[1]!);
  return names;
}

/** What each id's element says about itself: its data-name and whether it sits under a must-not-see mark. */
async function marks(observer: Observer, observation: Observation) {
  const out: { id: number; name: string | null; hidden: boolean }[] = [];
  for (const el of observation.elements) {
    const handle = await observer.resolve(el.id);
    assert(handle, `id ${el.id} does not resolve`);
    const { result } = await handle.session.send("Runtime.callFunctionOn", {
      objectId: handle.objectId,
      functionDeclaration: `function() {
        // A must-not-see mark covers the subtree; "noid" only the element itself.
        let hidden = !!this.dataset && this.dataset.expect === "noid";
        for (let n = this; n; n = n.parentElement || (n.getRootNode() && n.getRootNode().host) || null) {
          if (n.dataset && n.dataset.expect === "hide") hidden = true;
        }
        return { name: this.dataset ? this.dataset.name || null : null, hidden };
      }`,
      returnByValue: true,
    });
    const value = result.value as { name: string | null; hidden: boolean };
    out.push({ id: el.id, ...value });
  }
  return out;
}

/** Opens `url` in `page` and lets the page's zero-delay timers run. */
async function open(page: Page, url: string): Promise<void> {
  const loaded = page.session.waitForEvent("Page.loadEventFired");
  await page.session.send("Page.navigate", { url });
  await loaded;
  // Zero-delay timers the page set while loading (late listeners, custom
  // elements) fire before a zero-delay timer set now: timers fire in order.
  await page.session.send("Runtime.evaluate", {
    expression: "new Promise((resolve) => setTimeout(resolve, 0))",
    awaitPromise: true,
  });
}

/** Whether `expression` holds in one of the page's out-of-process frames. */
async function inFrame(page: Page, expression: string): Promise<boolean> {
  for (const session of page.frameSessions) {
    const { result } = await session.send("Runtime.evaluate", { expression, returnByValue: true })
      .catch(() => ({ result: { value: false } }));
    if (result.value === true) return true;
  }
  return false;
}

/** What one test needs: the pages' server, a browser, a context with an observer and a page. */
interface Setup extends AsyncDisposable {
  server: ReturnType<typeof servePages>;
  browser: Browser;
  observer: Observer;
  page: Page;
}

/** A fresh setup for one test, so that each runs alone (`--filter`) as well as in the file. */
async function openSetup(): Promise<Setup> {
  const server = servePages();
  const browser = await Browser.launch().catch(async (error) => {
    await server[Symbol.asyncDispose]();
    throw error;
  });
  const context = await newContext(browser);
  const observer = Observer.attach(context);
  const page = await context.newPage();
  return {
    server,
    browser,
    observer,
    page,
    async [Symbol.asyncDispose]() {
      await browser.close();
      await server[Symbol.asyncDispose]();
    },
  };
}

Deno.test("Observer sees every must-see element and no must-not-see one on the fixture pages", async (t) => {
  await using server = servePages();
  await using browser = await Browser.launch();
  for (const fixture of FIXTURE_PAGES) {
    await t.step(fixture.path, async () => {
      // A context and page of its own: no step sees what another left behind.
      await using tab = await newContext(browser);
      const observer = Observer.attach(tab);
      const page = await tab.newPage();
      await open(page, server.url(fixture.path));
      const observation = await observer.observe(page);
      const found = await marks(observer, observation);
      const expected = expectedNames(fixture);
      const seen = new Set(found.map((m) => m.name).filter((n): n is string => n !== null));
      const missing = expected.filter((name) => !seen.has(name));
      const falseIds = found.filter((m) => m.hidden).map((m) => m.id);
      const context = `\n--- observation of ${fixture.path} ---\n${observation.text}\n`;
      assertEquals(missing, [], `must-see elements without an id${context}`);
      const names = new Set(observation.elements.map((el) => el.name));
      const unnamed = (fixture.mustSee ?? []).filter((name) => !names.has(name));
      assertEquals(unnamed, [], `must-see elements built by the page's libraries${context}`);
      for (const text of fixture.text?.has ?? []) assertStringIncludes(observation.text, text);
      for (const text of fixture.text?.lacks ?? []) {
        assert(!observation.text.includes(text), `the text shows "${text}"${context}`);
      }
      assertEquals(falseIds, [], `ids on must-not-see elements${context}`);
      for (const name of expected) {
        const el = observation.elements.find((e) =>
          found.find((m) => m.id === e.id)?.name === name
        );
        assert(el, name);
      }
    });
  }
});

Deno.test("elements scrolled out of a scroll box are not in view and name their box", async () => {
  await using setup = await openSetup();
  const { server, observer, page } = setup;

  await open(page, server.url("/scroll-clipped"));
  const observation = await observer.observe(page);
  const box = observation.elements.find((el) => el.name === "Messages");
  const first = observation.elements.find((el) => el.name === "Message 0");
  const last = observation.elements.find((el) => el.name === "Message 9");
  assert(box && first && last, observation.text);
  assertEquals([first.inViewport, last.inViewport], [true, false]);
  assertEquals([first.container, last.container], [box.id, box.id]);
  assertEquals(box.container, undefined);
});

Deno.test("a styled-away checkbox beside a sibling label is reached through the input", async () => {
  await using setup = await openSetup();
  const { server, observer, page } = setup;

  await open(page, server.url("/custom-inputs"));
  const observation = await observer.observe(page);
  const remember = observation.elements.filter((el) => el.name === "Remember me");
  assertEquals(remember.map((el) => el.role), ["checkbox"], observation.text);
  const handle = await observer.resolve(remember[0]!.id);
  const { result } = await handle!.session.send("Runtime.callFunctionOn", {
    objectId: handle!.objectId,
    functionDeclaration: "function() { return this.localName + ':' + this.type; }",
    returnByValue: true,
  });
  assertEquals(result.value, "input:checkbox");
  const said = observation.text.split("\n").filter((line) => line.includes("Remember me"));
  assertEquals(said.length, 1, `the label text is not repeated:\n${observation.text}`);
});

Deno.test("links show where they go, compactly", async () => {
  await using setup = await openSetup();
  const { server, observer, page } = setup;

  await open(page, server.url("/delegated-lists"));
  const observation = await observer.observe(page);
  const help = observation.elements.find((el) => el.name === "Help");
  assertEquals(help?.href, "/help");
  await open(page, server.url("/text-runs"));
  const texts = await observer.observe(page);
  const year = texts.elements.find((el) => el.name === "Year");
  assertEquals([year?.href, year?.description], ["#year", "Sort ascending"]);
  // The name spells the target: the text leaves it out, the JSON keeps it.
  assertStringIncludes(observation.text, "link Help");
  assert(!observation.text.includes("Help →"), observation.text);
  assertStringIncludes(texts.text, "] Docs → example.org/docs/intro?x=1");
});

Deno.test("a frame the origin rule blocks shows as blocked, not as an error page", async () => {
  await using setup = await openSetup();
  const { server, browser } = setup;

  const closed = await newContext(browser, { onlyOrigins: [server.origin] });
  const watcher = Observer.attach(closed);
  const tab = await closed.newPage();
  await open(tab, server.url("/iframe-cross-origin"));
  const observation = await watcher.observe(tab);
  assertStringIncludes(observation.text, "(blocked frame");
  assert(!/ERR_|proxy|Reload/i.test(observation.text), observation.text);
  assertEquals(observation.elements.map((el) => el.name), ["Parent"]);
  await closed.close();
});

Deno.test("the page's DOM is identical before and after observing", async () => {
  await using setup = await openSetup();
  const { server, observer, page } = setup;

  for (
    const path of ["/native-controls", "/shadow-dom", "/hostile-globals", "/click-listeners"]
  ) {
    await open(page, server.url(path));
    const html = async () => {
      const { result } = await page.session.send("Runtime.evaluate", {
        expression: "document.documentElement.outerHTML",
        returnByValue: true,
      });
      return result.value as string;
    };
    const before = await html();
    await observer.observe(page);
    await observer.observe(page, { mode: "viewport" });
    assertEquals(await html(), before, path);
  }
});

Deno.test("page scripts see native-looking functions", async () => {
  await using setup = await openSetup();
  const { server, page } = setup;

  await open(page, server.url("/click-listeners"));
  const { result } = await page.session.send("Runtime.evaluate", {
    expression: `[EventTarget.prototype.addEventListener.toString(),
        Function.prototype.toString.toString(), EventTarget.prototype.addEventListener.length,
        EventTarget.prototype.addEventListener.name, typeof globalThis.__webserv,
        Object.getOwnPropertyDescriptor(HTMLElement.prototype, "onclick").set.toString()].join("|")`,
    returnByValue: true,
  });
  assertEquals(
    result.value,
    "function addEventListener() { [native code] }|function toString() { [native code] }|2|addEventListener|undefined|function set onclick() { [native code] }",
  );
});

Deno.test("ids are stable across observations and never reused after navigation", async () => {
  await using setup = await openSetup();
  const { server, observer, page } = setup;

  await open(page, server.url("/native-controls"));
  const first = await observer.observe(page);
  const second = await observer.observe(page);
  assertEquals(second.elements.map((e) => e.id), first.elements.map((e) => e.id));
  assert(second.elements.every((e) => !e.isNew));
  await open(page, server.url("/native-controls"));
  const third = await observer.observe(page);
  const old = new Set(first.elements.map((e) => e.id));
  assert(third.elements.every((e) => !old.has(e.id)), "ids after navigation are fresh");
});

Deno.test("diff mode lists added, changed and removed elements", async () => {
  await using setup = await openSetup();
  const { server, observer, page } = setup;

  await open(page, server.url("/vetoes"));
  const before = await observer.observe(page);
  await page.session.send("Runtime.evaluate", {
    expression: `document.querySelector("button[disabled]").disabled = false;
        const b = document.createElement("button"); b.textContent = "Fresh"; document.body.append(b);
        const p = document.createElement("p"); p.textContent = "Saved at noon"; document.body.append(p);
        document.querySelector("button").remove();`,
  });
  const after = await observer.observe(page, { mode: "diff" });
  assertEquals(after.diff.removed, [before.elements[0]!.id]);
  assertEquals(after.diff.added.length, 2);
  assertStringIncludes(after.text, "+ [");
  assertStringIncludes(after.text, "button Fresh");
  assertStringIncludes(after.text, "- [");
  assertStringIncludes(after.text, "+ Saved at noon");
});

Deno.test("viewport mode lists what is in view and counts the rest", async () => {
  await using setup = await openSetup();
  const { server, observer, page } = setup;

  await open(page, server.url("/offscreen"));
  const whole = await observer.observe(page);
  const view = await observer.observe(page, { mode: "viewport", margin: 0 });
  assertEquals(whole.elements.length, 2);
  assertEquals(view.elements.map((e) => e.role + e.name), ["buttonTop"]);
  assertStringIncludes(view.text, "below the viewport (1 actionable)");
  assert(view.elements[0]!.inViewport);
});

Deno.test("the big table is summarised and rows in view stay listed", async () => {
  await using setup = await openSetup();
  const { server, observer, page } = setup;

  await open(page, server.url("/table-2000"));
  const observation = await observer.observe(page);
  assertStringIncludes(observation.text, "more tr");
  assertGreater(observation.elements.length, 5);
  assert(observation.text.length < 4000, `${observation.text.length} characters`);
  await page.session.send("Runtime.evaluate", { expression: "window.scrollTo(0, 20000)" });
  const scrolled = await observer.observe(page);
  const names = scrolled.elements.map((e) => e.name);
  assert(names.some((name) => Number(name.slice(5)) > 400), names.join(","));
});

Deno.test("setOfMarks() draws a numbered box per id in view and leaves the page alone", async () => {
  await using setup = await openSetup();
  const { server, observer, page } = setup;

  await open(page, server.url("/native-controls"));
  const { result: before } = await page.session.send("Runtime.evaluate", {
    expression: "document.documentElement.outerHTML",
    returnByValue: true,
  });
  const shot = await observer.setOfMarks(page);
  assertGreater(shot.marks.length, 5);
  const image = await decodePng(shot.png);
  assertEquals([image.width, image.height], [shot.width, shot.height]);
  // The top-left corner of the first box now carries a mark colour, not white.
  const [x, y] = shot.marks[0]!.box;
  const scale = image.width / 800;
  const at = (Math.round((y + 1) * scale) * image.width + Math.round((x + 1) * scale)) * 4;
  assert(image.data.slice(at, at + 3).some((v) => v < 200), "the box is drawn");
  const { result: after } = await page.session.send("Runtime.evaluate", {
    expression: "document.documentElement.outerHTML",
    returnByValue: true,
  });
  assertEquals(after.value, before.value);
});

Deno.test("frames added after an observation are observed next time", async () => {
  await using setup = await openSetup();
  const { server, observer, page } = setup;

  await open(page, server.url("/anchors"));
  const before = await observer.observe(page);
  assert(!before.text.includes("Cross link"));
  await page.session.send("Runtime.evaluate", {
    expression: `new Promise((resolve) => {
        const frame = document.createElement("iframe");
        frame.src = ${JSON.stringify(server.otherOrigin + "/frames/cross")};
        frame.onload = resolve;
        document.body.append(frame);
      })`,
    awaitPromise: true,
  });
  // The frame runs out of process: its session attaches on its own time.
  await waitFor(() => inFrame(page, "location.pathname === '/frames/cross'"), {
    message: "the cross-site frame's session is attached with its document",
  });
  const after = await observer.observe(page);
  assertMatch(after.text, /\] "?Cross link"? → |link "?Cross link/);
  const cross = after.elements.find((el) => el.name === "Cross link");
  assert(cross && cross.frame !== page.targetId, "the element reports its own frame");
  assert(await observer.resolve(cross.id), "ids in an out-of-process frame resolve");
});

Deno.test("popups opened by the page are observed with fresh ids", async () => {
  await using setup = await openSetup();
  const { server, observer, page } = setup;

  await open(page, server.url("/anchors"));
  const first = await observer.observe(page);
  const popup = new Promise<Page>((resolve) => page.on("popup", resolve));
  await page.session.send("Runtime.evaluate", {
    expression: `window.open(${JSON.stringify(server.url("/native-controls"))})`,
    userGesture: true,
  });
  const tab = await popup;
  await waitFor(
    async () => {
      const { result } = await tab.session.send("Runtime.evaluate", {
        expression: "location.pathname + ' ' + document.readyState",
        returnByValue: true,
      }).catch(() => ({ result: { value: "" } }));
      return result.value === "/native-controls complete";
    },
    { message: "the popup loads /native-controls" },
  );
  const observed = await observer.observe(tab);
  assertGreater(observed.elements.length, 10);
  const seen = new Set(first.elements.map((el) => el.id));
  assert(observed.elements.every((el) => !seen.has(el.id)), "ids are unique across tabs");
  await tab.close();
});

Deno.test("resolve() returns undefined for a removed element", async () => {
  await using setup = await openSetup();
  const { server, observer, page } = setup;

  await open(page, server.url("/anchors"));
  const observation = await observer.observe(page);
  const id = observation.elements[0]!.id;
  assert(await observer.resolve(id));
  await page.session.send("Runtime.evaluate", { expression: "document.body.innerHTML = ''" });
  assertEquals(await observer.resolve(id), undefined);
});

Deno.test("the header names the page and its URL, and says scroll only where the page scrolls", async () => {
  await using setup = await openSetup();
  const { server, observer, page } = setup;
  await page.session.send("Emulation.setDeviceMetricsOverride", {
    width: 1280,
    height: 800,
    deviceScaleFactor: 1,
    mobile: false,
  });
  await open(page, server.url("/native-controls"));
  let observation = await observer.observe(page);
  const [header] = observation.text.split("\n");
  assertEquals(header, `# ${observation.title}   ${server.url("/native-controls")}`);
  await open(page, server.url("/offscreen"));
  observation = await observer.observe(page);
  assert(/^# .* {3}scroll 0\/\d+$/.test(observation.text.split("\n")[0]!), observation.text);
});
