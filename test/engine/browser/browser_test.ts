// Browser lifecycle, contexts, popups and frames against a real Chromium.
import {
  assert,
  assertEquals,
  assertFalse,
  assertGreater,
  assertRejects,
  assertStringIncludes,
} from "@std/assert";
import { Browser, browserInternals, newContext } from "../../../engine/browser/browser.ts";
import { BrowserLaunchError, BrowserProcess } from "../../../engine/browser/browser_process.ts";
import { BrowserNotFoundError, findChrome } from "../../../engine/browser/find_chrome.ts";
import type { Page, PageCrash } from "../../../engine/browser/page.ts";
import type { CdpSession } from "../../../engine/cdp/connection.ts";
import {
  CdpTimeoutError,
  ConnectionClosedError,
  TargetClosedError,
} from "../../../engine/cdp/errors.ts";
import { serveHtml } from "../../_util/html_server.ts";
import { waitFor, within } from "../../_util/wait.ts";

async function evaluate(session: CdpSession, expression: string): Promise<unknown> {
  const { result, exceptionDetails } = await session.send("Runtime.evaluate", {
    expression,
    returnByValue: true,
    awaitPromise: true,
    userGesture: true, // like a click: popups are not blocked
  });
  if (exceptionDetails) throw new Error(`"${expression}" threw: ${exceptionDetails.text}`);
  return result.value;
}

/** The next value `subscribe` hands its listener; fails the test after 10 s, never hangs. */
function nextEvent<T>(subscribe: (listener: (value: T) => void) => void): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error("Event did not arrive within 10 s")), 10_000);
    subscribe((value) => {
      clearTimeout(timer);
      resolve(value);
    });
  });
}

/** Live, non-zombie processes whose command line mentions `needle`. */
function processesMentioning(needle: string): number[] {
  const pids: number[] = [];
  for (const entry of Deno.readDirSync("/proc")) {
    if (!/^\d+$/.test(entry.name)) continue;
    try {
      const stat = Deno.readTextFileSync(`/proc/${entry.name}/stat`);
      if (stat.slice(stat.lastIndexOf(")") + 2).startsWith("Z")) continue;
      const cmdline = Deno.readTextFileSync(`/proc/${entry.name}/cmdline`);
      if (cmdline.includes(needle)) pids.push(Number(entry.name));
    } catch {
      // exited while we looked
    }
  }
  return pids;
}

function exists(path: string): boolean {
  try {
    Deno.statSync(path);
    return true;
  } catch {
    return false;
  }
}

Deno.test("Browser isolates contexts, attaches popups and frames, reports crashes", async (t) => {
  await using server = serveHtml({
    "/": "<title>home</title><h1>home</h1>",
    "/opener": "<title>opener</title><button onclick=\"window.open('/popup')\">open</button>",
    "/popup": "<title>popup</title><p>I am a popup</p>",
    "/frames": `<title>frames</title><iframe src="FRAME"></iframe>`,
    "/frame": "<title>frame</title><p>inner</p>",
  });
  await using browser = await Browser.launch();

  await t.step("newContext() gives contexts that share no cookies", async () => {
    const first = await newContext(browser);
    const second = await newContext(browser);
    const a = await first.newPage(server.url("/"));
    await evaluate(a.session, "document.cookie = 'who=first; path=/'");
    assertEquals(await evaluate(a.session, "document.cookie"), "who=first");
    const b = await second.newPage(server.url("/"));
    assertEquals(await evaluate(b.session, "document.cookie"), "");
    const again = await first.newPage(server.url("/"));
    assertEquals(await evaluate(again.session, "document.cookie"), "who=first");
    await first.close();
    await second.close();
  });

  await t.step(
    "newContext({ onlyOrigins }) lets pages reach those origins and nothing else",
    async () => {
      const own = server.url("").replace(/\/$/, "");
      const other = server.url("/", "localhost"); // same server, another origin
      const fetchStatus = (page: Page, url: string) =>
        evaluate(
          page.session,
          // no-cors: a cross-origin answer resolves (status 0); only a blocked request rejects.
          `fetch(${
            JSON.stringify(url)
          }, { mode: "no-cors" }).then((r) => r.status, () => "failed")`,
        );
      const restricted = await newContext(browser, { onlyOrigins: [own] });
      const page = await restricted.newPage(server.url("/"));
      assertEquals(await evaluate(page.session, "document.title"), "home");
      assertEquals(await fetchStatus(page, server.url("/popup")), 200);
      assertEquals(await fetchStatus(page, other), "failed");
      const open = await newContext(browser);
      const control = await open.newPage(server.url("/"));
      assertEquals(await fetchStatus(control, other), 0, "an unrestricted context reaches it");
      await restricted.close();
      await open.close();
      await assertRejects(
        () => newContext(browser, { onlyOrigins: ["file:///etc"] }),
        TypeError,
        "not an http or https origin",
      );
    },
  );

  await t.step("a popup opened by window.open is attached and usable", async () => {
    const context = await newContext(browser);
    const opener = await context.newPage(server.url("/opener"));
    const popupSeen = nextEvent<Page>((listener) => opener.on("popup", listener));
    await evaluate(opener.session, "window.open('/popup'); true");
    const popup = await popupSeen;
    assertEquals(popup.openerId, opener.targetId);
    assert(context.pages.includes(popup));
    // The popup may still be loading; wait for its document, then read it.
    const title = await waitFor(
      () => evaluate(popup.session, "document.readyState === 'complete' && document.title"),
      { message: "the popup's document finishes loading" },
    );
    assertEquals(title, "popup");
    await context.close();
  });

  await t.step("closing a context closes its pages", async () => {
    const context = await newContext(browser);
    const pages = [await context.newPage(), await context.newPage()];
    await context.close();
    for (const page of pages) {
      assert(page.closed);
      await assertRejects(() => evaluate(page.session, "1"), TargetClosedError);
    }
    await assertRejects(() => context.newPage(), Error, "is closed");
  });

  await t.step("page.close() closes the target and fires close", async () => {
    const context = await newContext(browser);
    const page = await context.newPage();
    const closed = nextEvent<{ reason: string }>((listener) => page.on("close", listener));
    await page.close();
    await closed;
    assertEquals(context.pages, []);
    await context.close();
  });

  await t.step("an out-of-process iframe is attached with its own session", async () => {
    const context = await newContext(browser);
    // localhost and 127.0.0.1 are different sites, so the frame runs out of process.
    const page = await context.newPage(server.url("/", "localhost"));
    const frameSeen = nextEvent<CdpSession>((listener) => page.on("frameattached", listener));
    const html = `<iframe src="${server.url("/frame", "127.0.0.1")}"></iframe>`;
    await evaluate(page.session, `document.body.innerHTML = ${JSON.stringify(html)}; true`);
    const frame = await frameSeen;
    assertEquals(frame.targetInfo?.type, "iframe");
    const host = await waitFor(
      () => evaluate(frame, "document.readyState === 'complete' && location.host"),
      { message: "the out-of-process frame's document finishes loading" },
    );
    assertEquals(host, `127.0.0.1:${server.port}`);
    assert(page.frameSessions.includes(frame));
    await context.close();
  });

  await t.step("a renderer crash is reported as a crash event", async () => {
    const context = await newContext(browser);
    const page = await context.newPage(server.url("/"));
    const crashed = nextEvent<PageCrash>((listener) => page.on("crash", listener));
    page.session.send("Page.crash").catch(() => {}); // never answered: the renderer dies
    const crash = await crashed;
    assertStringIncludes(crash.status, "crash");
    // The browser and other pages stay usable.
    const other = await context.newPage(server.url("/"));
    assertEquals(await evaluate(other.session, "document.title"), "home");
    await context.close();
  });

  await t.step(
    "every page of a context answers input and screenshots, not just the front one",
    async () => {
      const context = await newContext(browser);
      const pages: Page[] = [];
      for (let i = 0; i < 4; i++) pages.push(await context.newPage(server.url("/")));
      for (const page of pages) {
        await page.session.send("Input.dispatchMouseEvent", { type: "mouseMoved", x: 5, y: 5 }, {
          timeoutMs: 5000,
        });
        const { data } = await page.session.send("Page.captureScreenshot", {}, { timeoutMs: 5000 });
        assertGreater(data.length, 100);
      }
      await context.close();
    },
  );

  await t.step("initializers run before the page's first script", async () => {
    const context = await newContext(browser);
    context.addInitializer(async ({ session }) => {
      await session.send("Page.addScriptToEvaluateOnNewDocument", {
        source: "window.__early = performance.now();",
      });
    });
    const page = await context.newPage(server.url("/"));
    assertEquals(await evaluate(page.session, "typeof window.__early"), "number");
    const popupSeen = nextEvent<Page>((listener) => page.on("popup", listener));
    await evaluate(page.session, "window.__popup = window.open('about:blank'); true");
    const popup = await popupSeen;
    assertEquals(await evaluate(popup.session, "typeof window.__early"), "number");
    await context.close();
  });
});

// How fast they fail is a benchmark figure (bench/cdp.ts), not a test's.
Deno.test("Browser rejects every pending command when Chromium is killed", async () => {
  const browser = await Browser.launch();
  const context = await newContext(browser);
  const page = await context.newPage();
  const exited = nextEvent((listener) => browser.on("exit", listener));
  const pending = [
    page.session.send("Runtime.evaluate", {
      expression: "new Promise(() => {})",
      awaitPromise: true,
    }),
    browserInternals(browser).connection.send("Runtime.evaluate", {
      expression: "new Promise(() => {})",
      awaitPromise: true,
    }),
  ];
  Deno.kill(-browserInternals(browser).process!.pid, "SIGKILL"); // the browser's whole process group
  // Bounded well below the commands' own 30 s timeout: they fail because the
  // connection closed, not because they timed out.
  for (const call of pending) {
    await assertRejects(
      () => within(call, { message: "a pending command fails after the kill", timeoutMs: 10_000 }),
      ConnectionClosedError,
    );
  }
  await exited;
  assert(!browser.connected);
  await browser.close();
});

Deno.test("Browser.launch() keeps the launch wait apart from the default command timeout", async () => {
  await using browser = await Browser.launch({ launchTimeoutMs: 20_000, commandTimeoutMs: 1234 });
  assertEquals(browserInternals(browser).connection.timeoutMs, 1234);
  await using defaults = await Browser.launch({ launchTimeoutMs: 20_000 });
  assertEquals(browserInternals(defaults).connection.timeoutMs, 30_000);
  const dir = await Deno.makeTempDir({ prefix: "webserv-stub-" });
  try {
    const silent = `${dir}/silent-browser`;
    await Deno.writeTextFile(silent, "#!/bin/sh\nexec sleep 60\n", { mode: 0o755 });
    await assertRejects(
      () =>
        Browser.launch({ executablePath: silent, launchTimeoutMs: 300, commandTimeoutMs: 60_000 }),
      BrowserLaunchError,
      "within 300 ms",
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("BrowserContext.newPage() rejects and leaves no rejection behind when the site never answers", async () => {
  // A server that accepts and never answers: `Page.navigate` times out, and
  // the load wait beside it times out later with no one awaiting it.
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const unhandled: unknown[] = [];
  const record = (event: PromiseRejectionEvent) => {
    unhandled.push(event.reason);
    event.preventDefault();
  };
  globalThis.addEventListener("unhandledrejection", record);
  const held: Deno.Conn[] = [];
  const accepting = (async () => {
    for await (const conn of listener) held.push(conn);
  })();
  try {
    await using browser = await Browser.launch({ commandTimeoutMs: 600 });
    await using context = await newContext(browser);
    const url = `http://127.0.0.1:${listener.addr.port}/`;
    await assertRejects(() => context.newPage(url), CdpTimeoutError);
    // The load wait began before the navigation, with the same timeout: a
    // timer of that length started now fires after the load wait's own,
    // however late both are (timers fire in deadline order). By then its
    // rejection, had nobody handled it, is recorded.
    const timeoutMs = browserInternals(browser).connection.timeoutMs;
    await new Promise((resolve) => setTimeout(resolve, timeoutMs));
    assertEquals(unhandled.map(String), [], "a rejection nobody handled");
    const page = await context.newPage("about:blank");
    assertFalse(page.closed);
  } finally {
    globalThis.removeEventListener("unhandledrejection", record);
    listener.close();
    for (const conn of held) conn.close();
    await accepting.catch(() => {});
  }
});

Deno.test("Browser.close() leaves no process and no profile after 20 launch/close cycles", async () => {
  const profiles: string[] = [];
  for (let cycle = 0; cycle < 20; cycle++) {
    const browser = await Browser.launch();
    profiles.push(browserInternals(browser).process!.userDataDir);
    if (cycle % 5 === 0) await (await newContext(browser)).newPage("data:text/html,hi");
    await browser.close();
  }
  for (const profile of profiles) {
    assert(!exists(profile), `profile "${profile}" was left behind`);
    assertEquals(processesMentioning(profile), [], `processes of "${profile}" were left behind`);
  }
});

/** Starts a Deno process that launches a browser; resolves with it and the profile dir. */
async function launchInChild(
  executablePath?: string,
): Promise<{ child: Deno.ChildProcess; profile: string }> {
  const script = `
    import { BrowserProcess } from "${new URL(
    "../../../engine/browser/browser_process.ts",
    import.meta.url,
  )}";
    const browser = await BrowserProcess.launch(${
    JSON.stringify(executablePath === undefined ? {} : { executablePath })
  });
    console.log(browser.userDataDir);
    await new Promise(() => {});
  `;
  const child = new Deno.Command(Deno.execPath(), {
    args: ["eval", script],
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let out = "";
  while (!out.includes("\n")) {
    const { value, done } = await reader.read();
    if (done) break;
    out += value;
  }
  reader.releaseLock();
  const profile = out.trim();
  assertStringIncludes(profile, "webserv-profile-");
  assertGreater(processesMentioning(profile).length, 0);
  return { child, profile };
}

async function assertCleanedUp(profile: string): Promise<void> {
  await waitFor(() => processesMentioning(profile).length === 0 && !exists(profile), {
    message: `the processes and profile of "${profile}" are cleaned up`,
    timeoutMs: 15_000,
    intervalMs: 20,
  });
}

for (const signal of ["SIGINT", "SIGKILL"] as const) {
  Deno.test(`BrowserProcess cleans up when the Deno process gets ${signal}`, async () => {
    const { child, profile } = await launchInChild();
    child.kill(signal);
    const status = await child.status;
    await child.stdout.cancel().catch(() => {});
    // SIGINT runs the exit hook; SIGKILL runs nothing, so the watchdog does it.
    if (signal === "SIGINT") assertEquals(status.code, 130);
    await assertCleanedUp(profile);
  });
}

/**
 * A stand-in browser whose child outlives it and keeps writing into the
 * profile, as Chromium's renderers and zygotes do for a moment after the main
 * process dies: cleanup that removes the profile before the whole group is
 * gone leaves it behind. The writer is bounded, so a cleanup that misses it
 * costs some files, never the disk.
 */
const STUBBORN_BROWSER = `#!/bin/sh
for arg; do case "$arg" in --user-data-dir=*) profile="\${arg#--user-data-dir=}";; esac; done
mkdir -p "$profile/Default"
i=0; while [ $i -lt 3000 ]; do i=$((i + 1)); : > "$profile/Default/seed-$i"; done
# Bounded: should cleanup ever miss this child, it stops by itself after
# 20,000 files or 30 s instead of filling the disk's inodes.
(i=0; end=$(($(date +%s) + 30)); while [ $i -lt 20000 ]; do
  i=$((i + 1))
  [ -d "$profile/Default" ] || mkdir -p "$profile/Default" 2>/dev/null
  : > "$profile/Default/cache-$i" 2>/dev/null
  [ $((i % 500)) -ne 0 ] || [ "$(date +%s)" -lt $end ] || break
done) &
echo "DevTools listening on ws://127.0.0.1:9/devtools/browser/stub" >&2
wait
`;

Deno.test("BrowserProcess cleans up when the Deno process gets SIGKILL and children outlive the browser", async () => {
  const dir = await Deno.makeTempDir({ prefix: "webserv-stub-" });
  try {
    const executable = `${dir}/stubborn-browser`;
    await Deno.writeTextFile(executable, STUBBORN_BROWSER, { mode: 0o755 });
    for (let round = 0; round < 3; round++) {
      const { child, profile } = await launchInChild(executable);
      child.kill("SIGKILL");
      await child.status;
      await child.stdout.cancel().catch(() => {});
      await assertCleanedUp(profile);
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("findChrome() throws BrowserNotFoundError saying how to install when none is found", () => {
  const saved = Deno.env.get("WEBSERV_CHROME");
  try {
    Deno.env.set("WEBSERV_CHROME", "/nonexistent/chrome");
    let error: unknown;
    try {
      findChrome();
    } catch (e) {
      error = e;
    }
    assert(error instanceof BrowserNotFoundError);
    assertStringIncludes(error.message, '"/nonexistent/chrome"');
    assertStringIncludes(error.message, "apt-get install chromium");
  } finally {
    if (saved === undefined) Deno.env.delete("WEBSERV_CHROME");
    else Deno.env.set("WEBSERV_CHROME", saved);
  }
  assert(exists(findChrome()));
});

Deno.test("findChrome() picks the headless shell first when the run is headless", () => {
  const dir = Deno.makeTempDirSync({ prefix: "webserv-test-find-" });
  const saved = { chrome: Deno.env.get("WEBSERV_CHROME"), path: Deno.env.get("PATH") };
  try {
    for (const name of ["chromium", "chromium-headless-shell"]) {
      Deno.writeTextFileSync(`${dir}/${name}`, "#!/bin/sh\n", { mode: 0o755 });
    }
    Deno.env.delete("WEBSERV_CHROME");
    Deno.env.set("PATH", dir);
    assertEquals(findChrome(), `${dir}/chromium-headless-shell`);
    assertEquals(findChrome({ headless: true }), `${dir}/chromium-headless-shell`);
    assertEquals(
      findChrome({ headless: false }),
      `${dir}/chromium`,
      "a headed run needs the full browser",
    );
  } finally {
    if (saved.chrome !== undefined) Deno.env.set("WEBSERV_CHROME", saved.chrome);
    if (saved.path !== undefined) Deno.env.set("PATH", saved.path);
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test("BrowserProcess.launch() rejects with BrowserLaunchError when the executable exits early", async () => {
  const error = await assertRejects(
    () => BrowserProcess.launch({ executablePath: "/bin/false", timeoutMs: 5000 }),
    BrowserLaunchError,
  );
  assertStringIncludes(error.message, "exited with code 1");
  await assertRejects(
    () => BrowserProcess.launch({ executablePath: "/nonexistent/chrome" }),
    BrowserLaunchError,
    "Cannot start",
  );
});
