// Env under real faults: a site that never answers, a failing site reset, a
// crashed renderer, a killed browser, deadlines and aborts, parallel steps.
// Runs under Deno's default unhandled-rejection behaviour: one escaping
// promise fails the test that made it.
import { assert, assertEquals, assertRejects, assertStringIncludes } from "@std/assert";
import { ActionError } from "../../engine/act/errors.ts";
import { Browser, browserInternals } from "../../engine/browser/browser.ts";
import type { BrowserContext } from "../../engine/browser/browser_context.ts";
import { Env, envInternals } from "../../engine/env.ts";
import type { EnvObservation, EnvSite } from "../../engine/env_types.ts";
import { EnvError, type EnvErrorCode } from "../../engine/env_error.ts";
import { findElement } from "../../engine/observe/find_element.ts";
import { waitFor } from "../_util/wait.ts";

/** A loopback site whose `/hang…` paths (and every path while `hangAll`) never answer. */
interface HangingSite extends EnvSite, AsyncDisposable {
  hangAll: boolean;
  /** Requests that reached the server, by path. */
  seen: string[];
}

function serveHanging(pages: Record<string, string>): HangingSite {
  const held = new Set<() => void>();
  const site = {
    hangAll: false,
    seen: [] as string[],
    origin: "",
    reset: () => Promise.resolve(),
    [Symbol.asyncDispose]: async () => {
      for (const release of held) release();
      await server.shutdown();
    },
  };
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, (request) => {
    const path = new URL(request.url).pathname;
    site.seen.push(path);
    if (site.hangAll || path.startsWith("/hang")) {
      return new Promise<Response>((resolve) => {
        const release = () => resolve(new Response("released", { status: 503 }));
        held.add(release);
      });
    }
    const html = pages[path];
    return html === undefined
      ? new Response("not found", { status: 404 })
      : new Response(html, { headers: { "content-type": "text/html; charset=utf-8" } });
  });
  site.origin = `http://127.0.0.1:${server.addr.port}`;
  return site;
}

async function rejectsEnv(promise: Promise<unknown>, code: EnvErrorCode): Promise<EnvError> {
  const error = await assertRejects(() => promise, EnvError);
  assertEquals(error.code, code, error.message);
  return error;
}

function idOf(observation: EnvObservation, role: string, name: string): number {
  const element = findElement(observation, { role, name, exact: true });
  assert(element, `no ${role} "${name}" in:\n${observation.text}`);
  return element.id;
}

/** Settling that waits for every request in flight, however long: only the deadline ends it. */
const HOLD = { longPollMs: 60_000, capMs: 60_000 };

/** Resolves once the site saw a request for `path`; fails after 10 s. */
async function requested(site: HangingSite, path: string): Promise<void> {
  await waitFor(() => site.seen.includes(path), { message: `the site gets a request for ${path}` });
}

/**
 * Starts a click on "Load", whose request the site never answers, and returns once the site
 * has it in flight: the step, pending, and the id of textbox "A" for a later step.
 */
async function loadHanging(
  env: Env,
  site: HangingSite,
): Promise<{ a: number; loading: Promise<unknown> }> {
  const observation = await env.observe();
  const a = idOf(observation, "textbox", "A");
  const loading = env.step({ action: "click", id: idOf(observation, "button", "Load") });
  await requested(site, "/hang-api");
  return { a, loading };
}

/** Lets timers that a leaked promise would reject on run out (ordered after them, not a guess). */
function pause(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Every context `browser` opens from now on, as it is made (a spy on the real method). */
function spyContexts(browser: Browser): BrowserContext[] {
  const opened: BrowserContext[] = [];
  const internals = browserInternals(browser);
  const open = internals.newContext.bind(internals);
  internals.newContext = async (options) => {
    const context = await open(options);
    opened.push(context);
    return context;
  };
  return opened;
}

const FORM = `<title>Form</title>
  <input aria-label="A" id="a"><input aria-label="B" id="b">
  <input aria-label="C" id="c" oninput="fetch('/hang-api')">
  <button onclick="fetch('/hang-api')">Load</button>
  <button onclick="const end = Date.now() + 1500; while (Date.now() < end) {}">Busy</button>
  <a href="/hang-page">Slow page</a>`;

Deno.test("Env.create() rejects with EnvError timeout and nothing rejects unhandled when the site never answers", async () => {
  await using site = serveHanging({ "/": FORM });
  await using launched = await Browser.launch();
  // A short CDP timeout: a leaked waiter would reject within the pause below.
  await using browser = await Browser.connect(browserInternals(launched).process!.wsEndpoint, {
    timeoutMs: 1_500,
  });
  const opened = spyContexts(browser);
  const unhandled: unknown[] = [];
  const record = (event: PromiseRejectionEvent) => {
    unhandled.push(event.reason);
    event.preventDefault();
  };
  globalThis.addEventListener("unhandledrejection", record);
  try {
    site.hangAll = true;
    await rejectsEnv(Env.create(browser, { site, timeoutMs: 1_500 }), "timeout");
    await rejectsEnv(Env.create(browser, { site, startUrl: "/hang", timeoutMs: 300 }), "timeout");
    // Each create opens one context and closes it as the last thing it does.
    await waitFor(() => opened.length === 2 && opened.every((context) => context.closed), {
      message: "each failed create opens its context and closes it",
    });
    assertEquals(
      browserInternals(browser).contexts.length,
      0,
      "a failed create leaves no context behind",
    );
    // Every CDP waiter the creates started has the 1,500 ms timeout and began
    // before now: a timer of that length started now fires after all of
    // them, however late (timers fire in deadline order), and by then a
    // leaked waiter's rejection is recorded.
    await pause(browserInternals(browser).connection.timeoutMs);
    assertEquals(unhandled.map(String), [], "a rejection nobody handled");
  } finally {
    globalThis.removeEventListener("unhandledrejection", record);
  }
});

Deno.test("Env.reset() fails with EnvError timeout when the site hangs, then recovers", async () => {
  await using site = serveHanging({ "/": FORM });
  await using browser = await Browser.launch();
  await using env = await Env.create(browser, { site });
  site.hangAll = true;
  await rejectsEnv(env.reset({ timeoutMs: 1_000 }), "timeout");
  // Not stuck "resetting": the failure is reported, and a reset brings the env back.
  const error = await rejectsEnv(env.observe(), "timeout");
  assertStringIncludes(error.message, "last reset failed");
  site.hangAll = false;
  const observation = await env.reset();
  idOf(observation, "button", "Load");
});

Deno.test("Env.reset() maps site failures to EnvError and can be retried when the cause is gone", async () => {
  await using site = serveHanging({ "/": FORM });
  let fault: (() => Promise<never>) | undefined;
  const flaky: EnvSite = { origin: site.origin, reset: () => fault ? fault() : Promise.resolve() };
  await using browser = await Browser.launch();
  await using env = await Env.create(browser, { site: flaky });

  // A sandbox error, matched by name (the engine imports no sandbox).
  fault = () => {
    const gone = new Error('Instance "env-3" is gone');
    gone.name = "InstanceGoneError";
    return Promise.reject(gone);
  };
  const lost = await rejectsEnv(env.reset(), "sandbox-lost");
  assertEquals((lost.cause as Error).name, "InstanceGoneError");
  await rejectsEnv(env.step({ action: "reload" }), "sandbox-lost");

  // A site whose server refuses the connection, for real.
  fault = async () => {
    await fetch("http://127.0.0.1:9/reset", { method: "POST" });
    throw new Error("unreachable");
  };
  await rejectsEnv(env.reset(), "site-unreachable");

  fault = undefined;
  idOf(await env.reset(), "button", "Load");
  idOf(await env.observe(), "button", "Load");
});

Deno.test("Env reports a crashed renderer at once as EnvError renderer-crashed, and reset() recovers", async () => {
  await using site = serveHanging({ "/": FORM });
  await using browser = await Browser.launch();
  // A long deadline: the crash must be reported, not waited out.
  await using env = await Env.create(browser, { site, settle: HOLD, timeoutMs: 20_000 });
  // The step waits for a request that never ends: crash it meanwhile.
  const { a, loading } = await loadHanging(env, site);
  const page = envInternals(env).page;
  page.session.send("Page.crash", undefined, { timeoutMs: 2_000 }).catch(() => {});
  await rejectsEnv(loading, "renderer-crashed");
  await rejectsEnv(env.observe(), "renderer-crashed");
  await rejectsEnv(env.step({ action: "click", id: a }), "renderer-crashed");
  idOf(await env.reset(), "textbox", "A");
});

Deno.test("Env reports a killed browser as EnvError browser-gone, and works again after Browser.relaunch()", async () => {
  await using site = serveHanging({ "/": FORM });
  await using browser = await Browser.launch();
  await using env = await Env.create(browser, { site, settle: HOLD, timeoutMs: 20_000 });
  const { a, loading } = await loadHanging(env, site);
  Deno.kill(-browserInternals(browser).process!.pid, "SIGKILL");
  await rejectsEnv(loading, "browser-gone");
  await rejectsEnv(env.observe(), "browser-gone");
  await rejectsEnv(env.step({ action: "click", id: a }), "browser-gone");
  await rejectsEnv(env.reset(), "browser-gone");
  await rejectsEnv(Env.create(browser, { site }), "browser-gone");

  await browser.relaunch();
  idOf(await env.reset(), "textbox", "A");
  await using other = await Env.create(browser, { site });
  idOf(await other.observe(), "button", "Load");
});

Deno.test("Env operations honour their deadline and signal, and leave the page usable", async (t) => {
  await using site = serveHanging({ "/": FORM });
  await using browser = await Browser.launch();
  // Requests in flight count until settling's cap: only the deadline ends the wait.
  const settle = { longPollMs: 60_000, capMs: 60_000 };
  await using env = await Env.create(browser, { site, settle, timeoutMs: 10_000 });
  const first = await env.observe();

  await t.step("a step whose request hangs times out by the env's default", async () => {
    await rejectsEnv(env.step({ action: "click", id: idOf(first, "button", "Load") }), "timeout");
    idOf(await env.observe(), "button", "Load");
  });

  await t.step("a step to a page that never answers times out; the old page stays", async () => {
    const slow = idOf(first, "link", "Slow page");
    await rejectsEnv(env.step({ action: "click", id: slow }, { timeoutMs: 600 }), "timeout");
    await rejectsEnv(
      env.step({ action: "goto", url: "/hang-page" }, { timeoutMs: 600 }),
      "timeout",
    );
    const observation = await env.observe();
    assertEquals(new URL(observation.url).pathname, "/");
    await env.step({ action: "type", id: idOf(observation, "textbox", "A"), text: "ok" });
    assertEquals(await env.evaluate("document.querySelector('#a').value"), "ok");
  });

  await t.step("a step on a busy page times out; the next call works once it is free", async () => {
    const busy = idOf(first, "button", "Busy");
    await rejectsEnv(env.step({ action: "click", id: busy }, { timeoutMs: 300 }), "timeout");
    idOf(await env.observe({ timeoutMs: 10_000 }), "button", "Busy");
  });

  await t.step("an aborted signal rejects every operation with EnvError timeout", async () => {
    const signal = AbortSignal.abort();
    await rejectsEnv(env.observe({ signal }), "timeout");
    await rejectsEnv(env.step({ action: "reload" }, { signal }), "timeout");
    await rejectsEnv(env.settle({ signal }), "timeout");
    await rejectsEnv(env.evaluate("1", { signal }), "timeout");
    await rejectsEnv(env.reset({ signal }), "timeout");
    idOf(await env.reset(), "button", "Load");
  });
});

Deno.test("Env serializes operations and stops a step it abandoned", async () => {
  await using site = serveHanging({ "/": FORM });
  await using browser = await Browser.launch();
  await using env = await Env.create(browser, { site, settle: HOLD });
  const observation = await env.observe();
  const a = idOf(observation, "textbox", "A");
  const b = idOf(observation, "textbox", "B");
  const value = (id: string) => env.evaluate(`document.querySelector('#${id}').value`);

  await Promise.all([
    env.step({ action: "type", id: a, text: "a".repeat(30) }),
    env.step({ action: "type", id: b, text: "b".repeat(30) }),
  ]);
  assertEquals(await value("a"), "a".repeat(30));
  assertEquals(await value("b"), "b".repeat(30));

  const controller = new AbortController();
  // Field C fetches forever on input: the step is still in flight, typing or settling.
  const c = idOf(observation, "textbox", "C");
  const typing = env.step({ action: "type", id: c, text: "z".repeat(300) }, {
    signal: controller.signal,
  });
  await requested(site, "/hang-api");
  controller.abort();
  await rejectsEnv(typing, "timeout");
  const stopped = await value("c");
  // A step after it, through the same input path (typing replaces A's
  // value): keys of the abandoned step still coming would land in C before
  // it, or in A once it has the focus.
  await env.step({ action: "type", id: a, text: "!" });
  assertEquals(await value("c"), stopped, "the abandoned step kept typing");
  assertEquals(await value("a"), "!", "the abandoned step kept typing");
  await assertRejects(() => env.step({ action: "click", id: 999 }), ActionError);
});

Deno.test("Env.close() rejects the operation in flight with EnvError closed, and every later one", async () => {
  await using site = serveHanging({ "/": FORM });
  await using browser = await Browser.launch();
  const env = await Env.create(browser, { site, settle: HOLD });
  const load = idOf(await env.observe(), "button", "Load");
  const loading = rejectsEnv(env.step({ action: "click", id: load }), "closed");
  await requested(site, "/hang-api");
  const queued = rejectsEnv(env.observe(), "closed");
  await env.close();
  await loading;
  await queued;
  await rejectsEnv(env.observe(), "closed");
  await rejectsEnv(env.reset(), "closed");
  assertEquals(browserInternals(browser).contexts.length, 0);
});

Deno.test("an internal TypeError during a step is EnvError internal, never the agent's; bad input is invalid-action", async () => {
  await using site = serveHanging({ "/": FORM });
  await using browser = await Browser.launch();
  await using env = await Env.create(browser, { site });
  // The agent's: an action that does not parse.
  const invalid = await assertRejects(() => env.step({ action: "jump" }), ActionError);
  assertEquals(invalid.code, "invalid-action");
  // Ours: an internal check throwing a TypeError mid-step (as settle/_session_tracker.ts,
  // settler.ts and browser/page.ts do) is injected at the step's reload command.
  const session = envInternals(env).page.session;
  const send = session.send.bind(session);
  session.send = ((method: string, ...rest: unknown[]) => {
    if (method === "Page.reload") throw new TypeError("Cannot reload: an injected internal check");
    return (send as (method: string, ...rest: unknown[]) => Promise<unknown>)(method, ...rest);
  }) as typeof session.send;
  const error = await rejectsEnv(env.step({ action: "reload" }), "internal");
  assertStringIncludes(error.message, "an injected internal check");
  assert(!(error instanceof ActionError));
  session.send = send;
  idOf(await env.reset(), "button", "Load");
});

Deno.test("Env.step() and verify() are EnvError sandbox-lost when the site's check fails, whatever the page or action did", async () => {
  // A site whose pages still answer while its database is gone: a real
  // application's error page, and a liveness check that fails.
  const pages = {
    "/": `<title>Home</title><a href="/post">A post</a>`,
    "/post": `<title>Database Error</title><h1>Error establishing a database connection</h1>`,
  };
  await using served = serveHanging(pages);
  let down = false;
  const site: EnvSite = {
    origin: served.origin,
    reset: () => Promise.resolve(),
    check: () => {
      if (!down) return Promise.resolve();
      const gone = new Error('Instance "env-7" does not answer: HTTP 500');
      gone.name = "InstanceGoneError";
      return Promise.reject(gone);
    },
  };
  let verified = 0;
  const task = {
    id: "demo/read/1",
    instruction: "Read the post",
    startUrl: "/",
    verify: () => {
      verified++;
      return Promise.resolve({ reward: 1 as const, reason: "read" });
    },
  };
  await using browser = await Browser.launch();
  await using env = await Env.create(browser, { site, task });
  const link = idOf(await env.observe(), "link", "A post");
  down = true;
  // The click loads the error page: ours, not a step the agent took.
  const lost = await rejectsEnv(env.step({ action: "click", id: link }), "sandbox-lost");
  assertEquals((lost.cause as Error).name, "InstanceGoneError");
  // The id went with the page: still ours, never the agent's stale-id.
  await rejectsEnv(env.step({ action: "click", id: link }), "sandbox-lost");
  await rejectsEnv(env.step({ action: "stop", answer: "read" }), "sandbox-lost");
  // No verdict on a site that is gone.
  await rejectsEnv(env.verify(), "sandbox-lost");
  assertEquals(verified, 0);

  down = false;
  await env.reset();
  const step = await env.step({ action: "click", id: idOf(await env.observe(), "link", "A post") });
  assertStringIncludes(step.observation.text, "Error establishing");
  assertEquals((await env.verify()).reward, 1);
  assertEquals(verified, 1);
});
