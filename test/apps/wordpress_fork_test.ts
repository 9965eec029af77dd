/**
 * A WordPress episode forked mid-task on every backend that runs it
 * (`deno task test:apps`, and `.ci/apps.sh`): the approve-comment solver runs
 * to the step before its last action, the episode is forked three ways, the
 * forks that stop earn 1, the fork that unapproves the comment first earns 0,
 * and the parent, which never saw a fork's write, still earns 1; each fork's
 * state hash equals the parent's at the fork. On Incus the container is frozen
 * while a snapshot of it is cut; on Docker it is paused while committed; on
 * the shared runtime the env's `mariadbd` is stopped while its datadir is
 * reflinked. A fork whose copy's web server does not answer is the
 * sandbox's failure, never a ready instance serving the relay's 502.
 *
 * `WEBSERV_WORDPRESS_IMAGE` names another image (Incus alias, Docker repository), such as a private
 * build (`deno task image:apps --alias=NAME wordpress`). Fails,
 * never skips, when the image is missing: build it with
 * `deno task image:apps wordpress`.
 */
import { quoted } from "../../fixtures/sites/kit/solve.ts";
import site from "../../fixtures/sites/wordpress/mod.ts";
import { moderate } from "../../fixtures/sites/wordpress/tasks/_solve.ts";
import type { Env } from "../../engine/env.ts";
import type { Task } from "../../fixtures/sites/kit/types.ts";
import { assert, assertEquals, assertRejects } from "@std/assert";
import { SandboxError } from "../../sandboxes/errors.ts";
import { Gateway } from "../../sandboxes/gateway.ts";
import { IncusSandbox } from "../../sandboxes/incus/incus_sandbox.ts";
import {
  type AppImage,
  appImage,
  openDocker,
  openIncus,
  POOL,
  requireIncusImage,
} from "./_apps.ts";
import { type AppFork, forkOnBackend, forkOnShared } from "./_fork.ts";

const SEED = 1;
const IMAGE = Deno.env.get("WEBSERV_WORDPRESS_IMAGE") ?? "webserv-wordpress";
const APP: AppImage = appImage("wordpress", { image: IMAGE, readyMs: 180_000, prefix: "wstask-" });

/** Unapproves the comment the task named: its approval undone, the task not done. */
async function unapprove(env: Env, task: Task): Promise<void> {
  await moderate(
    env,
    quoted(task.instruction, 0),
    quoted(task.instruction, 1),
    "Unapprove this comment",
  );
}

const FORK: AppFork = { site, template: "approve-comment", seed: SEED, undo: unapprove };

Deno.test("WordPress on Incus forked mid-episode: forks that approve earn 1, one that unapproves earns 0, the parent keeps 1", async () => {
  await forkOnBackend(FORK, openIncus(APP, "unix"));
});

Deno.test("WordPress on Docker forked mid-episode: forks that approve earn 1, one that unapproves earns 0, the parent keeps 1", async () => {
  await forkOnBackend(FORK, openDocker(APP));
});

Deno.test("WordPress on the shared runtime forked mid-episode: forks that approve earn 1, one that unapproves earns 0, the parent keeps 1", async () => {
  await forkOnShared(FORK, IMAGE, { readyTimeoutMs: 900_000 });
});

Deno.test("WordPress on Incus: a fork whose web server does not answer is refused as the sandbox's failure, and leaves no container", async () => {
  await requireIncusImage(APP);
  await using gateway = new Gateway();
  await using sandbox = await IncusSandbox.open({
    gateway,
    image: IMAGE,
    pool: POOL,
    prefix: "wstask-",
    siteTransport: "unix",
    // Long enough for an instance to start on a loaded machine; the failing fork waits it out.
    readyTimeoutMs: 90_000,
  });
  const parent = await sandbox.create({ seed: SEED });
  const [name] = sandbox.containerNames;
  // The copy's Apache is told to listen elsewhere: it starts, and nothing answers on 8080, as in
  // a copy whose init took a stale pid file for a running Apache. The parent's Apache runs on.
  const moved = await new Deno.Command("incus", {
    args: [
      "exec",
      name!,
      "--",
      "sh",
      "-c",
      "grep -rl 127.0.0.1:8080 /etc/apache2 | xargs sed -i s/127.0.0.1:8080/127.0.0.1:8081/",
    ],
  }).output();
  assert(moved.success, new TextDecoder().decode(moved.stderr));
  await assertRejects(() => parent.fork!(), SandboxError);
  assertEquals(sandbox.containerNames, [name], "the failed fork's container was removed");
  const page = await gateway.request(parent.origin, "/");
  await page.body?.cancel();
  assert(page.status < 500, `the parent answered ${page.status}`);
});
