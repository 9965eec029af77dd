// Browser.relaunch(): a killed browser started again in place, against a real Chromium.
import { assert, assertEquals, assertNotEquals, assertRejects } from "@std/assert";
import { Browser, browserInternals, newContext } from "../../../engine/browser/browser.ts";
import { serveHtml } from "../../_util/html_server.ts";

Deno.test("Browser.relaunch() starts a killed browser again in the same object", async () => {
  await using server = serveHtml({ "/": "<title>Back</title>" });
  await using browser = await Browser.launch();
  const context = await newContext(browser);
  const page = await context.newPage(server.url("/"));
  const first = browserInternals(browser).process!;
  const disconnected = new Promise<string>((resolve) =>
    browser.on("disconnected", ({ reason }) => resolve(reason))
  );

  Deno.kill(-first.pid, "SIGKILL");
  await disconnected;
  assertEquals(browser.connected, false);

  await browser.relaunch();
  assert(browser.connected);
  assertNotEquals(browserInternals(browser).process!.pid, first.pid);
  assert(page.closed, "pages of the old process are closed");
  assertEquals(browserInternals(browser).contexts.length, 0);
  // The old process's profile is gone with it.
  await assertRejects(() => Deno.stat(first.userDataDir), Deno.errors.NotFound);
  // Closing a context of the old process is a no-op, not an error.
  await context.close();

  const again = await (await newContext(browser)).newPage(server.url("/"));
  const { result } = await again.session.send("Runtime.evaluate", { expression: "document.title" });
  assertEquals(result.value, "Back");
});

Deno.test("Browser.relaunch() replaces a live browser, and concurrent calls share one relaunch", async () => {
  await using browser = await Browser.launch();
  const first = browserInternals(browser).process!.pid;
  await Promise.all([browser.relaunch(), browser.relaunch()]);
  assertNotEquals(browserInternals(browser).process!.pid, first);
  assertEquals((await browserInternals(browser).version()).protocolVersion.length > 0, true);
});

Deno.test("Browser.relaunch() throws TypeError when the browser was connected to", async () => {
  await using launched = await Browser.launch();
  await using connected = await Browser.connect(browserInternals(launched).process!.wsEndpoint);
  await assertRejects(() => connected.relaunch(), TypeError, "connected to, not launched");
  await launched.close();
  await assertRejects(() => launched.relaunch(), Error, "closed");
});
