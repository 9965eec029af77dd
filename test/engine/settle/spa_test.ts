import { assert, assertEquals, assertStringIncludes } from "@std/assert";
import { Browser, newContext } from "../../../engine/browser/browser.ts";
import { Settler } from "../../../engine/settle/settler.ts";
import {
  performSpaAction,
  readSpaDone,
  readSpaText,
  serveSpa,
  SPA_SCENARIOS,
  spaClock,
} from "../../../fixtures/spa/mod.ts";

/** Signals that must have held each scenario, where one clearly must. */
const MUST_WAIT_FOR: Record<string, string[]> = {
  "slow-endpoint": ["network"],
  "spinner-timer": ["timers"],
  "raf-animation": ["animation-frames"],
  "websocket": ["websocket"],
  "websocket-heartbeat": ["websocket"],
  "self-navigate": ["navigation"],
  "form-redirect": ["navigation"],
  "shadow-chunks": ["dom"],
};

Deno.test("Settler.settle() never returns before the page is done when the page is a SPA", async (t) => {
  await using server = serveSpa();
  await using browser = await Browser.launch();
  for (const scenario of SPA_SCENARIOS) {
    await t.step(
      `Settler.settle() waits for completion when the page is "${scenario.name}"`,
      async () => {
        await using context = await newContext(browser);
        const settler = Settler.install(context);
        const page = await context.newPage(
          scenario.path ? server.origin + scenario.path : "about:blank",
        );
        assert((await settler.settle(page)).settled, "the page settles after loading");
        const since = performance.now();
        await performSpaAction(page, scenario.action, server.origin);
        const result = await settler.settle(page, { since });
        const returnedAt = spaClock();
        const doneAt = await readSpaDone(page);
        const text = await readSpaText(page, scenario.expect.selector);
        assert(result.settled, `settled; pending: ${result.pending.join(", ")}`);
        assertEquals(result.pending, []);
        assert(doneAt !== undefined, `the page was not done when settle() returned: ${text}`);
        assert(doneAt <= returnedAt, "the page finished after settle() returned");
        assertStringIncludes(text ?? "", scenario.expect.text);
        for (const signal of MUST_WAIT_FOR[scenario.name] ?? []) {
          assert(
            (result.waitedFor as string[]).includes(signal),
            `waited for ${signal}: ${result.waitedFor.join(", ")}`,
          );
        }
      },
    );
  }
});
