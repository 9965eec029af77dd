// Material UI (its real UMD build): a drawn checkbox or switch is one id, on
// its label; an Autocomplete's wrapper, named only by its floating label, is
// no target; neither an empty Select's zero-width placeholder nor the
// transparent copy of a floating label in an outlined field shows as text.
import { assert, assertEquals } from "@std/assert";
import { Browser, newContext } from "../../../engine/browser/browser.ts";
import { Observer } from "../../../engine/observe/observer.ts";
import { serveApps } from "../../../fixtures/apps/mod.ts";

Deno.test("Observer.observe() reads a Material UI form as a person sees it", async () => {
  await using server = await serveApps();
  await using browser = await Browser.launch();
  await using context = await newContext(browser);
  const observer = Observer.attach(context);
  const page = await context.newPage(server.url("/mui-settings"));
  const { result } = await page.session.send("Runtime.evaluate", {
    expression:
      `new Promise((resolve) => { const poll = () => window.__appReady ? resolve(true) : setTimeout(poll, 10); poll(); })`,
    awaitPromise: true,
    returnByValue: true,
  });
  assertEquals(result.value, true);
  const { text, elements } = await observer.observe(page);
  const roles = (name: string) => elements.filter((el) => el.name === name).map((el) => el.role);
  assertEquals(roles("I accept the terms"), ["checkbox"], text);
  assertEquals(roles("Email alerts"), ["checkbox"], text);
  assertEquals(roles("Favourite fruit"), ["combobox"], text);
  assertEquals(elements.filter((el) => el.role === "clickable"), [], text);
  assert(!/[\u200B-\u200D\uFEFF]/.test(text), `no zero-width text:\n${text}`);
  for (const line of text.split("\n")) {
    const name = /\] \w+ "([^"]+)"/.exec(line)?.[1];
    assert(!name || !line.includes(`" · ${name}`), `the name is not repeated as text: ${line}`);
  }
});
