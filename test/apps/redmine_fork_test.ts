/**
 * A Redmine episode forked mid-task on Incus, Docker and the shared runtime
 * (`deno task test:apps`, and `.ci/apps.sh`): the change-status solver runs
 * to the step before its last action, the episode is forked three ways, the
 * forks that stop earn 1, the fork that sets another status first earns 0,
 * and the parent still earns 1; each fork's state hash equals the parent's at
 * the fork. On Incus each container is frozen while a snapshot of it is cut;
 * on Docker it is paused while committed; on the shared runtime the env's
 * changed tables are imported into a spare (`kit/shared_fork.ts`).
 *
 * Fails, never skips, when the image is missing: build it with
 * `deno task image:apps redmine`.
 */
import type { Env } from "../../engine/env.ts";
import { quoted } from "../../fixtures/sites/kit/solve.ts";
import type { Task } from "../../fixtures/sites/kit/types.ts";
import site from "../../fixtures/sites/redmine/mod.ts";
import { editIssue } from "../../fixtures/sites/redmine/tasks/_solve.ts";
import { appImage, openDocker, openIncus } from "./_apps.ts";
import { type AppFork, forkOnBackend, forkOnShared } from "./_fork.ts";

const SEED = 3;
/**
 * `WEBSERV_REDMINE_IMAGE` names another image (Incus alias, Docker
 * repository), such as a private build (`--alias=NAME`).
 */
const IMAGE = Deno.env.get("WEBSERV_REDMINE_IMAGE") ?? "webserv-redmine";
const REDMINE = appImage("redmine", { image: IMAGE, readyMs: 400_000, prefix: "rmtask-" });

/**
 * Sets the issue (open on the page) to a closed status other than the task's:
 * a closed status is always allowed, even on an issue of a closed version.
 */
async function otherStatus(env: Env, task: Task): Promise<void> {
  const asked = quoted(task.instruction, 0);
  await editIssue(env, { status: asked === "Rejected" ? "Closed" : "Rejected" });
}

const APP: AppFork = { site, template: "change-status", seed: SEED, undo: otherStatus };

Deno.test("Redmine on Incus forked mid-episode: forks that set the status earn 1, one that sets another earns 0, the parent keeps 1", async () => {
  await forkOnBackend(APP, openIncus(REDMINE, "unix"));
});

Deno.test("Redmine on Docker forked mid-episode: forks that set the status earn 1, one that sets another earns 0, the parent keeps 1", async () => {
  await forkOnBackend(APP, openDocker(REDMINE));
});

Deno.test("Redmine on the shared runtime forked mid-episode: forks that set the status earn 1, one that sets another earns 0, the parent keeps 1", async () => {
  await forkOnShared(APP, IMAGE, { readyTimeoutMs: 900_000, envTimeoutMs: 120_000 });
});
