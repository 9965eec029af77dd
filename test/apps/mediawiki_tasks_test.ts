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
import { generateTask } from "../../fixtures/sites/kit/generate.ts";
import { look } from "../../fixtures/sites/kit/solve.ts";
import site from "../../fixtures/sites/mediawiki/mod.ts";
import { seedMirror } from "../../fixtures/sites/mediawiki/data.ts";
import { follow, goTo, login } from "../../fixtures/sites/mediawiki/tasks/_solve.ts";
import { assertSolverWins, incusSite, tableRows, withInstance, withSession } from "./_apps.ts";

const SEED = 1;
// A base imports its seed's wiki and runs the import's jobs at its first start: minutes under load.
const APP = incusSite(site, { seed: SEED, readyMs: 900_000 });

type MirrorRow = Record<string, string | number | null>;

Deno.test("seedMirror() draws the same pages, revisions and links as dump.php in the container", async () => {
  await withInstance(APP.open, async ({ instance }) => {
    const db = new DatabaseSync(":memory:");
    seedMirror(db, SEED);
    const mirrored = (sql: string) => db.prepare(sql).all() as MirrorRow[];
    // The seed's pages: every id from the mirror's first one on.
    const pages = (await tableRows(instance, "pages")).filter((page) =>
      Number(page["page_id"]) >= 562
    )
      .sort((a, b) => Number(a["page_id"]) - Number(b["page_id"]));
    assertEquals(
      pages.map((page) => [Number(page["page_id"]), Number(page["namespace"]), page["title"]]),
      mirrored("SELECT id, namespace, title FROM pages ORDER BY id").map((page) => [
        page["id"],
        page["namespace"],
        page["title"],
      ]),
    );
    const revisions = (await tableRows(instance, "revisions")).filter((rev) =>
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
    const categories = (await tableRows(instance, "categorylinks")).filter((link) =>
      Number(link["page_id"]) >= 562
    ).map((link) => `${link["page_id"]} ${link["category"]}`).sort();
    assertEquals(
      categories,
      mirrored("SELECT id, category FROM pages WHERE category IS NOT NULL").map((page) =>
        `${page["id"]} ${page["category"]}`
      ).sort(),
    );
    const links = (await tableRows(instance, "pagelinks")).filter((link) =>
      Number(link["page_id"]) >= 562
    ).map((link) => `${link["page_id"]} ${link["namespace"]} ${link["title"]}`).sort();
    assertEquals(
      links,
      mirrored("SELECT page_id, namespace, title FROM links").map((link) =>
        `${link["page_id"]} ${link["namespace"]} ${link["title"]}`
      ).sort(),
    );
  }, { seed: SEED });
});

Deno.test("Env.create({ task }) runs a MediaWiki task end to end: the solver earns 1, doing nothing 0", async () => {
  await withSession(APP, (session) => assertSolverWins(session, "add-category"));
});

Deno.test("logging in, reading and opening MediaWiki's editor write nothing the state tracks", async () => {
  await withSession(APP, async (session) => {
    const task = generateTask(site, "add-category", SEED);
    await session.inEnv(task, async (env, bound) => {
      await login(env, task.instruction);
      const title = task.instruction.match(/“([^”]*)”/)?.[1];
      assert(title, task.instruction);
      await goTo(env, title);
      await follow(env, "View history");
      await follow(env, "Edit");
      await look(env);
      assertEquals((await bound.sdk.diff()).tables, {});
    });
  });
});
