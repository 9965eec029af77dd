/**
 * A MediaWiki episode forked mid-task on Incus, Docker and the shared runtime
 * (`deno task test:apps`, and `.ci/apps.sh`): the add-category solver runs to
 * the step before its last action, the episode is forked three ways, the
 * forks that stop earn 1, the fork that undoes the edit from the page's
 * history first earns 0, and the parent still earns 1; each fork's state hash
 * equals the parent's at the fork. On Incus each container is frozen while a
 * snapshot of it is cut; on Docker it is paused while committed; on the
 * shared runtime the env's changed tables are imported into a spare, its
 * MyISAM search index carried whole (`kit/shared_fork.ts`).
 *
 * Fails, never skips, when the image is missing: build it with
 * `deno task image:apps mediawiki`.
 */
import type { Env } from "../../engine/env.ts";
import { look, quoted } from "../../fixtures/sites/kit/solve.ts";
import type { Task } from "../../fixtures/sites/kit/types.ts";
import site from "../../fixtures/sites/mediawiki/mod.ts";
import { follow, goTo, save } from "../../fixtures/sites/mediawiki/tasks/_solve.ts";
import { appImage, openDocker, openIncus } from "./_apps.ts";
import { type AppFork, forkOnBackend, forkOnShared } from "./_fork.ts";

const SEED = 1;
/**
 * `WEBSERV_MEDIAWIKI_IMAGE` names another image (Incus alias, Docker
 * repository), such as a private build (`--alias=NAME`).
 */
const IMAGE = Deno.env.get("WEBSERV_MEDIAWIKI_IMAGE") ?? "webserv-mediawiki";
const MEDIAWIKI = appImage("mediawiki", { image: IMAGE, readyMs: 900_000 });

/** Undoes the page's latest edit (the category the solver added) from its history. */
async function undoLatest(env: Env, task: Task): Promise<void> {
  await goTo(env, quoted(task.instruction, 0));
  const history = await follow(env, "View history");
  const undo = history.elements.find((el) => el.role === "link" && el.name === "undo");
  if (!undo) throw new Error(`No undo link in:\n${history.text}`);
  await env.step({ action: "click", id: undo.id });
  await look(env);
  await save(env, "Undo the category");
}

const APP: AppFork = {
  site,
  template: "add-category",
  seed: SEED,
  undo: undoLatest,
  // Every edit writes the search index, a MyISAM table: the import carries it whole.
  unhashed: { database: "mediawiki", tables: ["searchindex"] },
};

Deno.test("MediaWiki on Incus forked mid-episode: forks that add the category earn 1, one that undoes it earns 0, the parent keeps 1", async () => {
  await forkOnBackend(APP, openIncus(MEDIAWIKI, "unix"));
});

Deno.test("MediaWiki on Docker forked mid-episode: forks that add the category earn 1, one that undoes it earns 0, the parent keeps 1", async () => {
  await forkOnBackend(APP, openDocker(MEDIAWIKI));
});

Deno.test("MediaWiki on the shared runtime forked mid-episode: forks that add the category earn 1, one that undoes it earns 0, the parent keeps 1", async () => {
  await forkOnShared(APP, IMAGE, { readyTimeoutMs: 900_000, envTimeoutMs: 120_000 });
});
