/**
 * MediaWiki 1.39 from Debian packages on Incus and Docker (`deno task
 * image:apps mediawiki`): the seeded wiki served through the gateway (pages
 * with sections and categories, history, search), its state read from its own
 * MariaDB over the state socket, one visitor's edit seen as one row of the
 * diff, and reset back to the seeded hash.
 *
 * Not in the default run (the image takes minutes to build): run with
 * `deno task test:apps`. It fails, never skips, when the image is missing.
 */
import { assert, assertEquals, assertStringIncludes } from "@std/assert";
import type { StateDiff, StateHash } from "../../fixtures/sites/kit/types.ts";
import type {
  PageSummary,
  PageText,
  RevisionSummary,
} from "../../fixtures/sites/mediawiki/state_server.ts";
import {
  type AppImage,
  appImage,
  type AppInstance,
  assertResetRestores,
  assertStateNotRouted,
  diffRows,
  testEveryBackend,
} from "./_apps.ts";

// A base seeds its wiki at its first start (about a minute unloaded).
const APP: AppImage = appImage("mediawiki", { readyMs: 300_000, buildTime: "10 minutes" });

async function checks(app: AppInstance): Promise<void> {
  const { gateway, instance, state } = app;

  // The archive the image carries: long pages with many revisions.
  const archive = (await state<{ result: PageSummary[] }>(
    "/query/pages?namespace=0&category=Archives&limit=2000",
  )).result;
  assertEquals(archive.length, 560);
  assert(archive.every((page) => page.revisions === 20 && page.length > 50_000));

  const [article] = (await state<{ result: PageSummary[] }>(
    "/query/pages?namespace=0&category=History&limit=1",
  )).result;
  assert(article !== undefined, "the seed made no article about history");
  const page = (await state<{ result: PageText }>(
    `/query/page?title=${encodeURIComponent(article.title)}`,
  )).result;
  const heading = /^== (.+) ==$/m.exec(page.text)?.[1];
  assert(heading !== undefined, `the article has no section: ${page.text.slice(0, 300)}`);
  const history = (await state<{ result: RevisionSummary[] }>(
    `/query/history?title=${encodeURIComponent(article.title)}`,
  )).result;
  assert(history.length >= 3, `the article has ${history.length} revisions`);
  assertEquals(history[0]?.id, article.latest);

  const html = await (await gateway.request(
    instance.origin,
    `/index.php?title=${encodeURIComponent(article.title)}`,
  )).text();
  assertStringIncludes(html, '<meta name="generator" content="MediaWiki 1.39');
  assertStringIncludes(html, article.title.replaceAll("_", " "));
  assertStringIncludes(html, heading);
  assertStringIncludes(html, 'title="Category:History"');
  // Links follow the gateway's host, not the URL given at install time.
  assert(!html.includes("http://localhost/"), "the page links to the install-time URL");

  const historyHtml = await (await gateway.request(
    instance.origin,
    `/index.php?title=${encodeURIComponent(article.title)}&action=history`,
  )).text();
  assertStringIncludes(historyHtml, `oldid=${history.at(-1)?.id}`);
  const search = await (await gateway.request(
    instance.origin,
    "/index.php?search=lantern+harbor&fulltext=1&ns0=1",
  )).text();
  assertStringIncludes(search, "mw-search-result-heading", "the search index found nothing");

  await assertStateNotRouted(app);

  const seeded = await state<StateHash>("/hash");
  await state("/mark", { method: "POST" });

  // A visitor's edit, through the gateway, as MediaWiki's API takes it from
  // an anonymous editor (whose edit token is "+\").
  const summary = `An edit from the MediaWiki test ${crypto.randomUUID()}`;
  const edited = await gateway.request(instance.origin, "/api.php", {
    method: "POST",
    body: new URLSearchParams({
      action: "edit",
      format: "json",
      title: article.title,
      appendtext: "\n\nA visitor adds a sentence.",
      summary,
      token: "+\\",
    }),
  });
  const answer = await edited.text();
  assertEquals(edited.status, 200, answer);
  assertStringIncludes(answer, '"result":"Success"');

  const diff = await state<StateDiff>("/diff");
  assertEquals(diffRows(diff), ["revisions added"], JSON.stringify(diff).slice(0, 2000));
  const [revision] = diff.tables.revisions?.added ?? [];
  assertEquals(revision?.page_id, article.id);
  assertEquals(revision?.parent_id, article.latest);
  assertEquals(revision?.comment, summary);
  const after = (await state<{ result: RevisionSummary[] }>(
    `/query/history?title=${encodeURIComponent(article.title)}&limit=1`,
  )).result;
  assertEquals(after[0]?.comment, summary);
  await assertResetRestores(app, seeded);
  const again = (await state<{ result: PageText }>(
    `/query/page?title=${encodeURIComponent(article.title)}`,
  )).result;
  assertEquals(again.latest, article.latest);
  assert(!again.text.includes("A visitor adds a sentence."));
}

testEveryBackend(APP, {
  name: "MediaWiki",
  does: "serves its seeded wiki, reports its MariaDB state, and resets to the seeded hash",
  check: checks,
});
