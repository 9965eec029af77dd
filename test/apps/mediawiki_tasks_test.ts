/**
 * MediaWiki as a task environment on Incus (`deno task test:apps`): the
 * host's mirror of the seeded wiki equals the container's MariaDB row by
 * row (pages, revisions with their SHA-1, category and page links), a
 * template runs end to end through `Env.create({ task })` (its solver wins,
 * doing nothing does not), and reading, logging in and opening the editor
 * write nothing the state tracks (the site declares no harmless writes).
 *
 * Fails, never skips, when the image is missing: build it with
 * `deno task image:apps mediawiki`.
 */
import { assert, assertEquals } from "@std/assert";
import { DatabaseSync } from "node:sqlite";
import { Browser } from "../../engine/browser/browser.ts";
import { Env } from "../../engine/env.ts";
import { bindTask } from "../../fixtures/sites/kit/bind.ts";
import { generateTask } from "../../fixtures/sites/kit/generate.ts";
import { look } from "../../fixtures/sites/kit/solve.ts";
import { StateSdk } from "../../fixtures/sites/kit/state_client.ts";
import type { Row } from "../../fixtures/sites/kit/types.ts";
import site from "../../fixtures/sites/mediawiki/mod.ts";
import { seedMirror } from "../../fixtures/sites/mediawiki/data.ts";
import { follow, goTo, login } from "../../fixtures/sites/mediawiki/tasks/_solve.ts";
import { Gateway } from "../../sandboxes/gateway.ts";
import type { Instance } from "../../sandboxes/types.ts";
import { openIncus } from "./_apps.ts";
import type { IncusSandbox } from "../../sandboxes/incus/incus_sandbox.ts";

const SEED = 1;
const open = openIncus({
  image: "webserv-mediawiki",
  build: `build it with "deno task image:apps mediawiki"`,
  // A base imports its seed's wiki and runs the import's jobs at its first start: minutes under load.
  readyMs: 900_000,
}, "unix");

async function table(instance: Instance, name: string): Promise<Row[]> {
  return await new StateSdk(instance.state!).rows(name, {}, 100_000);
}

type MirrorRow = Record<string, string | number | null>;

Deno.test("seedMirror() draws the same pages, revisions and links as dump.php in the container", async () => {
  await using gateway = new Gateway();
  await using sandbox = await open(gateway) as IncusSandbox;
  const instance = await sandbox.create({ seed: SEED });
  try {
    const db = new DatabaseSync(":memory:");
    seedMirror(db, SEED);
    const mirrored = (sql: string) => db.prepare(sql).all() as MirrorRow[];
    // The seed's pages: every id from the mirror's first one on.
    const pages = (await table(instance, "pages")).filter((page) => Number(page["page_id"]) >= 562)
      .sort((a, b) => Number(a["page_id"]) - Number(b["page_id"]));
    assertEquals(
      pages.map((page) => [Number(page["page_id"]), Number(page["namespace"]), page["title"]]),
      mirrored("SELECT id, namespace, title FROM pages ORDER BY id").map((page) => [
        page["id"],
        page["namespace"],
        page["title"],
      ]),
    );
    const revisions = (await table(instance, "revisions")).filter((rev) =>
      Number(rev["rev_id"]) >= 11202
    ).sort((a, b) => Number(a["rev_id"]) - Number(b["rev_id"]));
    assertEquals(
      revisions.map((rev) => [
        Number(rev["rev_id"]),
        Number(rev["page_id"]),
        rev["timestamp"],
        rev["user"],
        rev["comment"],
        Number(rev["length"]),
        rev["sha1"],
      ]),
      mirrored(
        "SELECT id, page_id, timestamp, user, comment, length, sha1 FROM revisions ORDER BY id",
      ).map((rev) => Object.values(rev)),
    );
    const categories = (await table(instance, "categorylinks")).filter((link) =>
      Number(link["page_id"]) >= 562
    ).map((link) => `${link["page_id"]} ${link["category"]}`).sort();
    assertEquals(
      categories,
      mirrored("SELECT id, category FROM pages WHERE category IS NOT NULL").map((page) =>
        `${page["id"]} ${page["category"]}`
      ).sort(),
    );
    const links = (await table(instance, "pagelinks")).filter((link) =>
      Number(link["page_id"]) >= 562
    ).map((link) => `${link["page_id"]} ${link["namespace"]} ${link["title"]}`).sort();
    assertEquals(
      links,
      mirrored("SELECT page_id, namespace, title FROM links").map((link) =>
        `${link["page_id"]} ${link["namespace"]} ${link["title"]}`
      ).sort(),
    );
  } finally {
    await instance.destroy();
  }
});

Deno.test("Env.create({ task }) runs a MediaWiki task end to end: the solver earns 1, doing nothing 0", async () => {
  await using gateway = new Gateway();
  await using sandbox = await open(gateway) as IncusSandbox;
  await using browser = await Browser.launch();
  const instance = await sandbox.create({ seed: SEED });
  try {
    const task = generateTask(site, "add-category", SEED);
    const template = site.templates.find((t) => t.id === "add-category")!;
    const bound = bindTask(task, site, instance.state!, { origin: instance.origin });
    const env = await Env.create(browser, { site: instance, task: bound });
    try {
      await template.solve(env, task);
      const verdict = await env.verify();
      assertEquals(verdict.reward, 1, verdict.reason);
    } finally {
      await env.close();
    }
    await instance.reset();
    const idle = await Env.create(browser, { site: instance, task: bound });
    try {
      await idle.step({ action: "stop", answer: "done" });
      const verdict = await idle.verify();
      assertEquals(verdict.reward, 0, verdict.reason);
    } finally {
      await idle.close();
    }
  } finally {
    await instance.destroy();
  }
});

Deno.test("logging in, reading and opening MediaWiki's editor write nothing the state tracks", async () => {
  await using gateway = new Gateway();
  await using sandbox = await open(gateway) as IncusSandbox;
  await using browser = await Browser.launch();
  const instance = await sandbox.create({ seed: SEED });
  try {
    const task = generateTask(site, "add-category", SEED);
    const bound = bindTask(task, site, instance.state!, { origin: instance.origin });
    const env = await Env.create(browser, { site: instance, task: bound });
    try {
      await login(env, task.instruction);
      const title = task.instruction.match(/“([^”]*)”/)?.[1];
      assert(title, task.instruction);
      await goTo(env, title);
      await follow(env, "View history");
      await follow(env, "Edit");
      await look(env);
      assertEquals((await bound.sdk.diff()).tables, {});
    } finally {
      await env.close();
    }
  } finally {
    await instance.destroy();
  }
});
