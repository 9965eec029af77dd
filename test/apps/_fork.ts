/**
 * What the real applications' fork tests (`*_fork_test.ts`) share: the
 * fork-of-three episode of `test/_util/fork_episode.ts` run in a fresh
 * browser on an instance of an application, opened on a container backend
 * (Incus, Docker) or on the shared runtime. Each test names only what differs
 * between the applications: the site, the template, the seed and the steps
 * that undo the solver's work.
 *
 * @module
 */
import { Browser } from "../../engine/browser/browser.ts";
import type { Env } from "../../engine/env.ts";
import type { SiteModule, Task } from "../../fixtures/sites/kit/types.ts";
import { Gateway } from "../../sandboxes/gateway.ts";
import type { Instance } from "../../sandboxes/types.ts";
import { assertForkMidEpisode } from "../_util/fork_episode.ts";
import { assertEquals } from "@std/assert";
import type { StateHash } from "../../fixtures/sites/kit/types.ts";
import type { SharedRuntimeInstance } from "../../sandboxes/incus/shared_runtime_sandbox.ts";
import { type OpenApp, stateReader, withInstance } from "./_apps.ts";
import { execIn, openShared } from "./_shared.ts";

/** One application's fork episode. */
export interface AppFork {
  /** The application's site module. */
  site: SiteModule;
  /** A state-changing template whose solver ends with `stop`. */
  template: string;
  /** The seed of the task and of the instance. */
  seed: number;
  /** Steps that undo the solver's work (the fork then stops, and must earn 0). */
  undo(env: Env, task: Task): Promise<void>;
  /**
   * Tables the state hash does not cover whose rows a fork must carry all
   * the same (MediaWiki's MyISAM `searchindex`), compared by `CHECKSUM TABLE`.
   */
  unhashed?: { database: string; tables: string[] };
}

/**
 * Runs the fork episode in a browser of its own on an instance.
 *
 * @param app the application's episode
 * @param instance a fresh instance of the application at `app.seed`
 */
export async function forkEpisode(app: AppFork, instance: Instance): Promise<void> {
  await using browser = await Browser.launch();
  await assertForkMidEpisode({
    browser,
    site: app.site,
    template: app.template,
    seed: app.seed,
    instance,
    undo: app.undo,
    // Three copies of the application started (MariaDB's recovery, the web server) on a
    // loaded machine.
    forkTimeoutMs: 300_000,
  });
}

/**
 * Runs the fork episode on an instance of a container backend.
 *
 * @param app the application's episode
 * @param open how the backend's sandbox is opened
 */
export async function forkOnBackend(app: AppFork, open: OpenApp): Promise<void> {
  await withInstance(open, ({ instance }) => forkEpisode(app, instance), { seed: app.seed });
}

/**
 * Runs the fork episode on an env of the shared runtime.
 *
 * @param app the application's episode
 * @param image the image alias
 * @param timeouts how long the runtime may take to start, and an env to be made
 */
export async function forkOnShared(
  app: AppFork,
  image: string,
  timeouts: { readyTimeoutMs: number; envTimeoutMs?: number },
): Promise<void> {
  await using gateway = new Gateway();
  await using sandbox = await openShared(gateway, image, timeouts);
  await using instance = await sandbox.create({ seed: app.seed });
  await forkEpisode(app, instance);
  // The episode's three forks at once outrun the spares (some copy); one fork
  // with a spare waiting must take the import path, at the parent's state.
  const deadline = performance.now() + 120_000;
  while ((await sandbox.health(app.seed)).spares < 1) {
    if (performance.now() > deadline) throw new Error("the runtime's spares did not refill");
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  await using one = await instance.fork!() as SharedRuntimeInstance;
  assertEquals(one.forked?.path, "import", `the fork copied: ${one.forked?.reason}`);
  const hash = async (env: SharedRuntimeInstance) =>
    (await stateReader(env)<StateHash>("/hash")).hash;
  assertEquals(await hash(one), await hash(instance as SharedRuntimeInstance));
  if (app.unhashed) {
    const { database, tables } = app.unhashed;
    const sums = (env: SharedRuntimeInstance) =>
      execIn(
        env,
        "mariadb",
        `--socket=/run/wsdb/env-${env.key}.sock`,
        "--batch",
        "--skip-column-names",
        `--database=${database}`,
        "-e",
        `CHECKSUM TABLE ${tables.join(", ")}`,
      );
    assertEquals(await sums(one), await sums(instance as SharedRuntimeInstance));
  }
}
