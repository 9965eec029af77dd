// The env end to end on a real Chromium: observe, step, dialogs, tabs, reset.
import {
  assert,
  assertEquals,
  assertMatch,
  assertNotEquals,
  assertRejects,
  assertStringIncludes,
} from "@std/assert";
import { ActionError } from "../../engine/act/errors.ts";
import { Browser } from "../../engine/browser/browser.ts";
import { Env, envInternals } from "../../engine/env.ts";
import type { EnvObservation } from "../../engine/env_types.ts";
import type { EnvTask, Verdict } from "../../engine/task.ts";
import { serveHtml } from "../_util/html_server.ts";

function idOf(observation: EnvObservation, role: string, name: string): number {
  const element = observation.elements.find((el) => el.role === role && el.name === name);
  assert(element, `no ${role} "${name}" in:\n${observation.text}`);
  return element.id;
}

const HOME_PAGES = {
  "/": `<title>Home</title>
      <button onclick="document.cookie='seen=1; path=/'; this.textContent='Done'">Mark</button>
      <button onclick="if (confirm('Delete it?')) document.body.append('deleted')">Delete</button>
      <a href="/other" target="_blank">Other</a>`,
  "/other": "<title>Other</title><p>Elsewhere</p>",
};

/** What each of the tests below opens for itself: the pages, a browser and an env on them. */
interface HomeEnv extends AsyncDisposable {
  server: ReturnType<typeof serveHtml>;
  env: Env;
  /** How many times the site was reset. */
  resets(): number;
}

/** A fresh env on the home pages, so that each test runs alone (`--filter`) as in the file. */
async function openHome(): Promise<HomeEnv> {
  const server = serveHtml(HOME_PAGES);
  let resets = 0;
  const site = {
    origin: server.url("").replace(/\/$/, ""),
    reset: () => {
      resets++;
      return Promise.resolve();
    },
  };
  let browser: Browser | undefined;
  try {
    browser = await Browser.launch();
    const env = await Env.create(browser, { site });
    const launched = browser;
    return {
      server,
      env,
      resets: () => resets,
      async [Symbol.asyncDispose]() {
        await env.close();
        await launched.close();
        await server[Symbol.asyncDispose]();
      },
    };
  } catch (error) {
    await browser?.close();
    await server[Symbol.asyncDispose]();
    throw error;
  }
}

Deno.test("Env.observe() lists the start page's controls by id", async () => {
  await using home = await openHome();
  const observation = await home.env.observe();
  assertStringIncludes(observation.text, "Home");
  idOf(observation, "button", "Mark");
  assertEquals(observation.tabs.length, 1);
});

Deno.test("Env.step() acts and returns the observation after the action", async () => {
  await using home = await openHome();
  const { env } = home;
  const mark = idOf(await env.observe(), "button", "Mark");
  const { result, observation, done } = await env.step({ action: "click", id: mark });
  assertEquals(done, false);
  assert(result.settle?.settled);
  assert(observation);
  idOf(observation, "button", "Done");
});

Deno.test("Env shows a confirm dialog in the observation until the dialog action answers it", async () => {
  await using home = await openHome();
  const { env } = home;
  const remove = idOf(await env.observe(), "button", "Delete");
  const { observation } = await env.step({ action: "click", id: remove });
  assert(observation);
  assertEquals(observation.dialog?.type, "confirm");
  assertMatch(observation.text, /^dialog confirm "Delete it\?": answer it/m);
  await assertRejects(
    () => env.step({ action: "click", id: remove }),
    ActionError,
    "dialog is open",
  );
  const answered = await env.step({ action: "dialog", accept: true });
  assertEquals(answered.observation?.dialog, undefined);
  assertStringIncludes(answered.observation?.text ?? "", "deleted");
});

Deno.test("Env makes a tab opened by a link the active tab, listed in the text", async () => {
  await using home = await openHome();
  const { env } = home;
  const link = idOf(await env.observe(), "link", "Other");
  const { observation } = await env.step({ action: "click", id: link });
  assert(observation);
  assertEquals(observation.tabs.map((tab) => tab.active), [false, true]);
  assertMatch(observation.text, /^tabs: \[0\] "Home" · \[1\] "Other" \(active\)$/m);
  await env.step({ action: "close_tab", tab: 1 });
  assertEquals((await env.observe()).tabs.length, 1);
});

Deno.test("Env refuses goto off the site's origin and stays usable", async () => {
  await using home = await openHome();
  const { env } = home;
  const error = await assertRejects(
    () => env.step({ action: "goto", url: "http://localhost:9/" }),
    ActionError,
  );
  assertEquals(error.code, "not-allowed");
  const invalid = await assertRejects(
    () => env.step({ action: "jump" }),
    ActionError,
    '"action"',
  );
  assertEquals(invalid.code, "invalid-action");
  idOf(await env.observe(), "button", "Delete");
});

Deno.test("Env's pages reach the site's origin and no other", async () => {
  await using home = await openHome();
  const { env, server } = home;
  const status = (url: string) =>
    envInternals(env).actor.page!.session.send("Runtime.evaluate", {
      // no-cors: a cross-origin answer resolves (status 0); only a blocked request rejects.
      expression: `fetch(${
        JSON.stringify(url)
      }, { mode: "no-cors" }).then((r) => r.status, () => "failed")`,
      awaitPromise: true,
      returnByValue: true,
    }).then(({ result }) => result.value);
  assertEquals(await status(server.url("/other")), 200);
  assertEquals(await status(server.url("/other", "localhost")), "failed");
});

Deno.test("Env.reset() resets the site and starts a fresh episode", async () => {
  await using home = await openHome();
  const { env, server } = home;
  // An episode that changed things: a cookie set, the page changed, a second tab.
  const first = await env.observe();
  const mark = idOf(first, "button", "Mark");
  await env.step({ action: "click", id: mark });
  await env.step({ action: "click", id: idOf(first, "button", "Delete") });
  await env.step({ action: "dialog", accept: true });
  const opened = await env.step({ action: "click", id: idOf(first, "link", "Other") });
  assertEquals(opened.observation?.tabs.length, 2);
  const before = await env.observe();
  assertStringIncludes(before.text, "Elsewhere");
  await env.step({ action: "switch_tab", tab: 0 });
  const changed = await env.observe();
  assertStringIncludes(changed.text, "deleted");
  const done = idOf(changed, "button", "Done");

  await env.reset();
  assertEquals(home.resets(), 1);
  const observation = await env.observe();
  assertEquals(observation.tabs.length, 1);
  assertNotEquals(observation.text.includes("deleted"), true);
  // A new episode: the page is back as it started, ids counted afresh.
  assertEquals(idOf(observation, "button", "Mark"), done);
  const { result } = await env.step({ action: "goto", url: server.url("/") });
  assert(result.settle);
  const cookies = await envInternals(env).actor.page!.session.send("Runtime.evaluate", {
    expression: "document.cookie",
    returnByValue: true,
  });
  assertEquals(cookies.result.value, "", "the last episode's cookies are gone");
});

Deno.test("Env's stop action ends the episode with the agent's answer", async () => {
  await using home = await openHome();
  const { env } = home;
  const { done, truncated, observation } = await env.step({ action: "stop", answer: "42" });
  assertEquals(done, true);
  assertEquals(truncated, false);
  idOf(observation, "button", "Mark");
  assertEquals(env.answer, "42");
  await assertRejects(() => env.step({ action: "reload" }), ActionError, "ended");
});

Deno.test("Env.create() throws TypeError for a start path without a site", async () => {
  await using browser = await Browser.launch();
  await assertRejects(
    () => Env.create(browser, { startUrl: "/home" }),
    TypeError,
    'start URL "/home" is not a URL',
  );
});

Deno.test("Env runs a task: begin() before the start page, the instruction in observations, verify()", async () => {
  const events: string[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, (request) => {
    const path = new URL(request.url).pathname;
    if (path !== "/favicon.ico") events.push(`request ${path}`);
    return new Response(`<title>${path}</title><button>Go</button>`, {
      headers: { "content-type": "text/html" },
    });
  });
  await using _server = { [Symbol.asyncDispose]: () => server.shutdown() };
  const site = {
    origin: `http://127.0.0.1:${server.addr.port}`,
    reset: (options?: { seed?: number }) => {
      events.push(`site.reset ${options?.seed}`);
      return Promise.resolve();
    },
  };
  const task = (id: string, startUrl: string): EnvTask => ({
    id,
    instruction: `Say 42 (${id})`,
    startUrl,
    begin: () => {
      events.push(`begin ${id}`);
      return Promise.resolve();
    },
    verify: ({ answer, url }): Promise<Verdict> =>
      Promise.resolve({
        reward: answer === "42" ? 1 : 0,
        reason: `answer ${answer} at ${new URL(url).pathname}`,
      }),
  });
  await using browser = await Browser.launch();
  await using env = await Env.create(browser, { site, task: task("t/1", "/start") });
  assertEquals(events, ["begin t/1", "request /start"]);

  const observation = await env.observe();
  assert(observation.text.startsWith("task: Say 42 (t/1)\n# /start"), observation.text);
  assertEquals(observation.task, { id: "t/1", instruction: "Say 42 (t/1)" });
  await env.step({ action: "stop", answer: "42" });
  assertEquals(await env.verify(), { reward: 1, reason: "answer 42 at /start" });

  events.length = 0;
  const first = await env.reset({ seed: 7 });
  assertEquals(events, ["site.reset 7", "begin t/1", "request /start"]);
  assertEquals(first.task?.id, "t/1");
  assertEquals(await env.verify(), { reward: 0, reason: "answer undefined at /start" });

  events.length = 0;
  const switched = await env.reset({ task: task("t/2", "/other") });
  assertEquals(events, ["site.reset undefined", "begin t/2", "request /other"]);
  assertStringIncludes(switched.text, "task: Say 42 (t/2)");

  await using plain = await Env.create(browser, { site });
  await assertRejects(() => plain.verify(), TypeError, "no task");
  assertEquals((await plain.observe()).task, undefined);
});

Deno.test("Env.step() reports truncated when maxSteps is reached, and reset() starts over", async () => {
  await using server = serveHtml({ "/": "<title>Home</title><button>Go</button>" });
  const site = { origin: server.url("").replace(/\/$/, ""), reset: () => Promise.resolve() };
  await using browser = await Browser.launch();
  await using env = await Env.create(browser, { site, maxSteps: 2 });
  const go = idOf(await env.observe(), "button", "Go");
  assertEquals((await env.step({ action: "click", id: go })).truncated, false);
  const last = await env.step({ action: "click", id: go });
  assertEquals([last.done, last.truncated], [false, true]);
  const error = await assertRejects(() => env.step({ action: "click", id: go }), ActionError);
  assertEquals(error.code, "not-allowed");
  await env.reset();
  assertEquals((await env.step({ action: "click", id: go })).truncated, false);
});

Deno.test("Env.settle(), evaluate() and withPage() run on the active tab in turn", async () => {
  await using server = serveHtml({ "/": "<title>Home</title><button>Go</button>" });
  const site = { origin: server.url("").replace(/\/$/, ""), reset: () => Promise.resolve() };
  await using browser = await Browser.launch();
  await using env = await Env.create(browser, { site });
  assertEquals(await env.evaluate("document.title"), "Home");
  assertEquals(await env.evaluate("Promise.resolve({ a: [1, 'b'] })"), { a: [1, "b"] });
  await assertRejects(() => env.evaluate("throw new Error('boom')"), EvalError, "boom");

  await env.evaluate("setTimeout(() => document.body.append('late text'), 300); 1");
  const settled = await env.settle();
  assert(settled.settled);
  assertStringIncludes((await env.observe()).text, "late text");

  assertEquals(envInternals(env).page.targetId, envInternals(env).actor.page?.targetId);
  const title = await envInternals(env).withPage(async (page) => {
    const { result } = await page.session.send("Runtime.evaluate", {
      expression: "document.title",
    });
    return result.value;
  });
  assertEquals(title, "Home");
});

Deno.test("Env.step() uploads only from the env's upload directory", async () => {
  await using server = serveHtml({
    "/": `<input type="file" aria-label="File" onchange="document.title = this.files[0].name">`,
  });
  const site = { origin: server.url("").replace(/\/$/, ""), reset: () => Promise.resolve() };
  const dir = await Deno.makeTempDir({ prefix: "webserv-test-upload-" });
  try {
    await Deno.writeTextFile(`${dir}/cv.txt`, "cv");
    await using browser = await Browser.launch();
    await using closed = await Env.create(browser, { site });
    const file = idOf(await closed.observe(), "button", "File");
    const error = await assertRejects(
      () => closed.step({ action: "upload", id: file, files: ["/etc/passwd"] }),
      ActionError,
    );
    assertEquals(error.code, "not-allowed");
    await using open = await Env.create(browser, { site, uploadDir: dir });
    const input = idOf(await open.observe(), "button", "File");
    await open.step({ action: "upload", id: input, files: ["cv.txt"] });
    assertEquals(await open.evaluate("document.title"), "cv.txt");
    // The browser reads the file itself (one running as another user too).
    assertEquals(await open.evaluate("document.querySelector('input').files[0].text()"), "cv");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("Env gives every page, popups included, a 1280x720 viewport unless told otherwise", async () => {
  await using server = serveHtml({
    "/": `<title>Home</title><a href="/other" target="_blank">Other</a>`,
    "/other": "<title>Other</title><p>Elsewhere</p>",
  });
  const site = { origin: server.url("").replace(/\/$/, ""), reset: () => Promise.resolve() };
  const size = "JSON.stringify([innerWidth, innerHeight])";
  await using browser = await Browser.launch();
  await using env = await Env.create(browser, { site });
  // Without the option, headless Chromium gives a new window 780x493.
  assertEquals(await env.evaluate(size), "[1280,720]");
  const opened = await env.step({
    action: "click",
    id: idOf(await env.observe(), "link", "Other"),
  });
  assertEquals(opened.observation.tabs.length, 2);
  assertEquals(await env.evaluate(size), "[1280,720]");
  await using small = await Env.create(browser, { site, viewport: { width: 640, height: 480 } });
  assertEquals(await small.evaluate(size), "[640,480]");
  await assertRejects(
    () => Env.create(browser, { site, viewport: { width: 0, height: 480 } }),
    RangeError,
    'viewport width "0"',
  );
});
