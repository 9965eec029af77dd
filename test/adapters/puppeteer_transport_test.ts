// The transport contract on a puppeteer-core browser-level CDPSession.
import { assert, assertEquals, assertExists } from "@std/assert";
import puppeteer from "puppeteer-core";
import { Browser, BrowserProcess } from "../../engine/mod.ts";
import { PuppeteerTransport } from "../../adapters/puppeteer_transport.ts";
import { transportContract } from "../engine/cdp/_transport_contract.ts";
import { newContext } from "../../engine/browser/browser.ts";

transportContract({
  name: "PuppeteerTransport",
  async open(wsEndpoint) {
    const browser = await puppeteer.connect({
      browserWSEndpoint: wsEndpoint,
      defaultViewport: null,
    });
    try {
      return {
        transport: await PuppeteerTransport.create(browser),
        dispose: async () => {
          if (browser.connected) await browser.disconnect();
        },
      };
    } catch (error) {
      await browser.disconnect();
      throw error;
    }
  },
});

Deno.test("PuppeteerTransport.close() leaves puppeteer connected and usable when the engine closes", async () => {
  await using process = await launch();
  const pptr = await puppeteer.connect({
    browserWSEndpoint: process.wsEndpoint,
    defaultViewport: null,
  });
  try {
    const [pptrPage] = await pptr.pages();
    assertExists(pptrPage);
    const browser = await Browser.connect(await PuppeteerTransport.create(pptrPage));
    const context = await newContext(browser);
    const page = await context.newPage("data:text/html,<title>Engine</title>");
    const { result } = await page.session.send("Runtime.evaluate", {
      expression: "document.title",
    });
    assertEquals(result.value, "Engine");
    await browser.close();
    assert(pptr.connected, "puppeteer was disconnected");
    assertEquals(await pptrPage.evaluate(() => 6 * 7), 42);
  } finally {
    await pptr.disconnect();
  }
});

Deno.test("PuppeteerTransport.send() answers -32001 when the session is unknown", async () => {
  await using process = await launch();
  const pptr = await puppeteer.connect({ browserWSEndpoint: process.wsEndpoint });
  try {
    const transport = await PuppeteerTransport.create(pptr);
    const answers: unknown[] = [];
    transport.onmessage = (message) => answers.push(message);
    transport.send({ id: 7, method: "Runtime.evaluate", sessionId: "NO-SUCH-SESSION" });
    await new Promise((resolve) => setTimeout(resolve, 0));
    assertEquals(answers, [{
      id: 7,
      error: { code: -32001, message: "Session with given id not found." },
    }]);
    transport.close();
  } finally {
    await pptr.disconnect();
  }
});

async function launch(): Promise<BrowserProcess & AsyncDisposable> {
  const process = await BrowserProcess.launch({ handleSignals: false });
  return Object.assign(process, { [Symbol.asyncDispose]: async () => void await process.kill() });
}
