// The __NAME__ site made by `deno task site:new`: its tasks are valid and deterministic, and it
// passes the site checker (solvers win, controls and adversaries earn 0, equivalents 1) on one seed.
import { assertEquals } from "@std/assert";
import { Browser } from "../../../../engine/browser/browser.ts";
import { checkSite } from "../../../../fixtures/sites/kit/check.ts";
import { generateTask } from "../../../../fixtures/sites/kit/generate.ts";
import site from "../../../../fixtures/sites/__NAME__/mod.ts";
import { FixtureSandbox } from "../../../../sandboxes/fixture/fixture_sandbox.ts";
import { Gateway } from "../../../../sandboxes/gateway.ts";

Deno.test("__NAME__ templates generate valid, deterministic tasks", () => {
  for (const template of site.templates) {
    assertEquals(generateTask(site, template.id, 5), generateTask(site, template.id, 5));
  }
});

Deno.test("checkSite() passes the __NAME__ site on seed 1", async () => {
  await using gateway = new Gateway();
  await using sandbox = new FixtureSandbox(site, { gateway });
  await using browser = await Browser.launch();
  const report = await checkSite(browser, site, { sandbox, seeds: [1] });
  assertEquals([...report.templates.flatMap((t) => t.failures), ...report.isolation.failures], []);
  assertEquals(report.ok, true);
});
