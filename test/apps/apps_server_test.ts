/**
 * The rollout server runs MediaWiki's and Redmine's tasks (`deno task
 * test:apps`), on the incus backend (a container per session) and the shared
 * backend (one runtime per seed, a database per session): in a group of 2 on
 * one state-change task, the template's solver drives one session through
 * the HTTP API to reward 1, the other session's state stays at the seeded
 * hash, and a reset brings the solved session back to it, where the
 * verifier gives 0. (WordPress has its own: `wordpress_server_test.ts`,
 * `wordpress_shared_server_test.ts`.)
 *
 * Fails, never skips, when an image is missing: build it with
 * `deno task image:apps mediawiki redmine`.
 */
import { assert, assertEquals, assertNotEquals } from "@std/assert";
import { startServer } from "../../adapters/http/server.ts";
import { WebServClient } from "../../adapters/client/mod.ts";
import { generateTask, siteByName } from "../../fixtures/sites/mod.ts";
import type { StateHash } from "../../fixtures/sites/kit/types.ts";
import type { Instance } from "../../sandboxes/types.ts";
import { sessionAsEnv } from "../_util/session_env.ts";
import { appImage, requireIncusImage, stateReader } from "./_apps.ts";
import { SHARED_PREFIX } from "./_shared.ts";

const POOL = Deno.env.get("WEBSERV_INCUS_POOL") ?? "webserv-btrfs";
const SEED = 2;

/** A state-change template of each application, with a solver of at least 8 steps. */
const CASES = [
  { app: "mediawiki", template: "add-category" },
  { app: "redmine", template: "change-status" },
] as const;

for (const { app, template: templateId } of CASES) {
  for (const backend of ["incus", "shared"] as const) {
    Deno.test({
      name:
        `startServer() on ${backend} runs a ${app} task: its solver earns 1 in one session of a group of 2 over HTTP, the other stays seeded, and a reset takes it back`,
      // Spares fill in the background, outliving single requests by design.
      sanitizeOps: false,
      sanitizeResources: false,
      async fn() {
        await requireIncusImage(appImage(app, { readyMs: 300_000 }));
        await using server = await startServer({
          port: 0,
          backend,
          incusPool: POOL,
          // The app tests' prefixes: their seeded bases serve here too.
          incusPrefix: backend === "shared" ? SHARED_PREFIX : "wsapp-",
          stepTimeoutMs: 180_000,
          maxSessions: 2,
        });
        const client = new WebServClient(server.url, { timeoutMs: 900_000, retries: 0 });
        const site = siteByName(app);
        const template = site.templates.find((t) => t.id === templateId);
        assert(template, `${app} has no template "${templateId}"`);
        const task = generateTask(site, templateId, SEED);

        const group = await client.createGroup({ task: task.id, observation: "json" }, 2);
        const [solved, neighbour] = group.sessions.map((session) => session.id) as [
          string,
          string,
        ];
        const instanceOf = (id: string): Instance => {
          const instance = server.sessions.instance(id);
          assert(instance, `session ${id} has no instance`);
          return instance;
        };
        assertNotEquals(instanceOf(solved).origin, instanceOf(neighbour).origin);
        const hashOf = async (id: string) =>
          (await stateReader(instanceOf(id))<StateHash>("/hash")).hash;
        const seeded = await hashOf(neighbour);
        assertEquals(await hashOf(solved), seeded);

        await template.solve(sessionAsEnv(client, solved), task);
        assertEquals((await client.state(solved)).rewards, [1], "the solver did not earn 1");
        assertNotEquals(await hashOf(solved), seeded, "the solved session's state did not change");
        assertEquals(await hashOf(neighbour), seeded, "the solver's change reached the neighbour");

        await client.reset(solved);
        assertEquals(await hashOf(solved), seeded, "the reset did not restore the seeded state");
        assertEquals((await client.verify(solved)).reward, 0, "the reward outlived the reset");

        assertEquals(await client.close(solved), true);
        assertEquals(await client.close(neighbour), true);
      },
    });
  }
}
