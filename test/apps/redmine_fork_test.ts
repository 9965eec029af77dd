/**
 * A Redmine episode forked mid-task on Incus (`deno task test:apps`): the
 * change-status solver runs to the step before its last action, the episode
 * is forked three ways (each container frozen while a snapshot of it is
 * cut), the forks that stop earn 1, the fork that sets another status first
 * earns 0, and the parent still earns 1; each fork's state hash equals the
 * parent's at the fork.
 *
 * Fails, never skips, when the image is missing: build it with
 * `deno task image:apps redmine`.
 */
import { Browser } from "../../engine/browser/browser.ts";
import type { Env } from "../../engine/env.ts";
import { quoted } from "../../fixtures/sites/kit/solve.ts";
import type { Task } from "../../fixtures/sites/kit/types.ts";
import site from "../../fixtures/sites/redmine/mod.ts";
import { editIssue } from "../../fixtures/sites/redmine/tasks/_solve.ts";
import { assertForkMidEpisode } from "../_util/fork_episode.ts";
import { openIncus, withInstance } from "./_apps.ts";

const SEED = 3;
/** `WEBSERV_REDMINE_IMAGE` names another alias, such as a private build (`--alias=NAME`). */
const OPEN = openIncus({
  image: Deno.env.get("WEBSERV_REDMINE_IMAGE") ?? "webserv-redmine",
  build: 'build it with "deno task image:apps redmine"',
  readyMs: 400_000,
  prefix: "rmtask-",
}, "unix");

/**
 * Sets the issue (open on the page) to a closed status other than the task's:
 * a closed status is always allowed, even on an issue of a closed version.
 */
async function otherStatus(env: Env, task: Task): Promise<void> {
  const asked = quoted(task.instruction, 0);
  await editIssue(env, { status: asked === "Rejected" ? "Closed" : "Rejected" });
}

Deno.test("Redmine on Incus forked mid-episode: forks that set the status earn 1, one that sets another earns 0, the parent keeps 1", async () => {
  await withInstance(OPEN, async ({ instance }) => {
    await using browser = await Browser.launch();
    await assertForkMidEpisode({
      browser,
      site,
      template: "change-status",
      seed: SEED,
      instance,
      undo: otherStatus,
      // Three Redmine containers started (MariaDB's recovery, Rails) on a loaded machine.
      forkTimeoutMs: 300_000,
    });
  }, { seed: SEED });
});
