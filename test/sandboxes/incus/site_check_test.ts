import { assert, assertEquals } from "@std/assert";
import { Browser } from "../../../engine/browser/browser.ts";
import { checkSite } from "../../../fixtures/sites/kit/check.ts";
import forum from "../../../fixtures/sites/forum/mod.ts";
import { Gateway } from "../../../sandboxes/gateway.ts";
import { IncusClient } from "../../../sandboxes/incus/client.ts";
import { main } from "../../../tools/site_check.ts";
import { openForumSandbox } from "./_forum.ts";

// A navigation, an information and a state-change template: each kind of evaluator.
const TEMPLATES = ["top-post", "post-author", "upvote-post"];

Deno.test("checkSite() passes the forum on one seed when its instances are Incus containers", async () => {
  await using gateway = new Gateway();
  await using sandbox = await openForumSandbox(gateway);
  await using browser = await Browser.launch();
  const report = await checkSite(browser, forum, {
    sandbox,
    seeds: [1],
    templates: TEMPLATES,
    concurrency: 2,
  });
  const failures = [
    ...report.templates.flatMap((t) => t.failures),
    ...report.isolation.failures,
  ];
  assertEquals(failures, []);
  assert(report.ok);
  assertEquals(report.backend, sandbox.kind);
  assertEquals(report.templates.map((t) => [t.id, t.solved, t.resetExact]), [
    ["top-post", 1, 1],
    ["post-author", 1, 1],
    ["upvote-post", 1, 1],
  ]);
});

Deno.test("site:check --backend incus --chunk 1 leaves no seeded base of its seeds behind", async () => {
  // Its own prefix: the bases found after the run can only be this run's.
  const prefix = "wsscb-";
  Deno.env.set("WEBSERV_INCUS_PREFIX", prefix);
  using client = new IncusClient();
  const bases = async () =>
    (await client.listInstances()).map((instance) => instance.name)
      .filter((name) => name.startsWith(`${prefix}base-`));
  try {
    const report = await main(
      ["forum", "--backend", "incus", "--seeds", "2", "--chunk", "1", "--templates", "top-post"],
    );
    assertEquals(report.seeds, [0, 1]);
    assertEquals(report.templates.map((t) => [t.id, t.runs, t.solved]), [["top-post", 2, 2]]);
    assertEquals(await bases(), [], "each chunk removed the base of its seed");
  } finally {
    Deno.env.delete("WEBSERV_INCUS_PREFIX");
    for (const name of await bases()) {
      await client.request("DELETE", `/1.0/instances/${name}`).catch(() => {});
    }
  }
});
