/**
 * Forks of a live WordPress env on the shared runtime, at the sandbox level:
 * a fork is a waiting spare that imports the tables the parent changed
 * (`fixtures/sites/kit/shared_fork.ts`), and its state equals the parent's
 * at the fork (the state hash, and every table's checksum, AUTO_INCREMENT
 * counters and the env's files beside), forks asked at once too; parent
 * and fork then change apart;
 * a fork of a fork carries what its parent was handed; a schema change in
 * the parent sends the fork to the copy path, which still copies it whole.
 *
 * Fails, never skips, when the image is missing: build it with
 * `deno task image:apps wordpress`.
 */
import { assert, assertEquals, assertMatch, assertNotEquals } from "@std/assert";
import { Gateway } from "../../sandboxes/gateway.ts";
import type { SharedRuntimeInstance } from "../../sandboxes/incus/shared_runtime_sandbox.ts";
import type { StateHash } from "../../fixtures/sites/kit/types.ts";
import type { PostSummary } from "../../fixtures/sites/wordpress/state_server.ts";
import { stateReader } from "./_apps.ts";
import { execIn, openShared, postForm } from "./_shared.ts";

const SEED = 1;
// Another checkout's build replaces "webserv-wordpress" (its own inputs):
// a private alias (`deno task image:apps --alias=NAME wordpress`) keeps this one's.
const IMAGE = Deno.env.get("WEBSERV_WORDPRESS_IMAGE") ?? "webserv-wordpress";

/** Runs SQL on an env's own server; rows tab-separated. */
function sql(env: SharedRuntimeInstance, statement: string): Promise<string> {
  return execIn(
    env,
    "mariadb",
    `--socket=/run/wsdb/env-${env.key}.sock`,
    "--batch",
    "--skip-column-names",
    "--database=wordpress",
    "-e",
    statement,
  );
}

/** Every table's checksum and AUTO_INCREMENT counter: the database, below the state hash. */
async function tablesOf(env: SharedRuntimeInstance): Promise<string> {
  const tables = (await sql(env, "SHOW TABLES")).split("\n");
  const sums = await sql(env, `CHECKSUM TABLE ${tables.join(", ")}`);
  const counters = await sql(
    env,
    "SELECT table_name, auto_increment FROM information_schema.tables " +
      "WHERE table_schema = 'wordpress' ORDER BY table_name",
  );
  return `${sums}\n${counters}`;
}

/** The env's files (uploads): each file's path and contents. */
function filesOf(env: SharedRuntimeInstance): Promise<string> {
  return execIn(
    env,
    "sh",
    "-c",
    `cd /run/wsfiles/env-${env.key}/ && find . -type f | sort | xargs -r md5sum`,
  );
}

/** Whether an env's own `mariadbd` has libeatmydata loaded (its syncs return at once). */
async function syncsSkipped(env: SharedRuntimeInstance): Promise<boolean> {
  const maps = await execIn(
    env,
    "sh",
    "-c",
    `cat /proc/$(cat /var/lib/wsdb/slot-${env.slot}/mariadbd.pid)/maps`,
  );
  return maps.includes("libeatmydata");
}

async function hashOf(env: SharedRuntimeInstance): Promise<string> {
  return (await stateReader(env)<StateHash>("/hash")).hash;
}

async function comment(gateway: Gateway, env: SharedRuntimeInstance, text: string) {
  const [post] = (await stateReader(env)<{ result: PostSummary[] }>(
    "/query/posts?status=publish&limit=1",
  )).result;
  assert(post, "no published post");
  const { status, body } = await postForm(gateway, env, "/wp-comments-post.php", {
    comment_post_ID: String(post.id),
    author: "Test Reader",
    email: `reader-${crypto.randomUUID()}@webserv.test`,
    url: "",
    comment: text,
  });
  assertEquals(status, 302, `the comment was refused: ${body.slice(0, 300)}`);
}

async function fork(env: SharedRuntimeInstance): Promise<SharedRuntimeInstance> {
  assert(env.fork, "the runtime's control cannot fork: rebuild the image");
  return await env.fork() as SharedRuntimeInstance;
}

/** Asserts two envs are at one state: the hash, every table, the files. */
async function assertSameState(a: SharedRuntimeInstance, b: SharedRuntimeInstance) {
  assertEquals(await hashOf(b), await hashOf(a), "the state hashes differ");
  assertEquals(await tablesOf(b), await tablesOf(a), "the tables differ");
  assertEquals(await filesOf(b), await filesOf(a), "the files differ");
}

Deno.test("WordPress on the shared runtime: a fork imports the parent's changed tables into a spare, at the parent's state, then apart; a fork of a fork carries its parent's imports", async () => {
  await using gateway = new Gateway();
  await using sandbox = await openShared(gateway, IMAGE, { readyTimeoutMs: 900_000 });
  const parent = await sandbox.create({ seed: SEED });
  const seeded = await hashOf(parent);
  // Writes through WordPress (a comment) and beside it (a setting, a file of the env's uploads).
  await comment(gateway, parent, "written before the fork");
  await sql(parent, "UPDATE wp_options SET option_value = 'Forked' WHERE option_name = 'blogname'");
  await execIn(parent, "sh", "-c", `echo parent > /run/wsfiles/env-${parent.key}/before.txt`);
  assertNotEquals(await hashOf(parent), seeded);

  const child = await fork(parent);
  assertEquals(
    child.forked?.path,
    "import",
    `the fork took the copy path: ${child.forked?.reason}`,
  );
  await assertSameState(parent, child);
  // Both servers skip their syncs (kit/shared_runtime.ts), the fork's a spare that imported.
  assert(await syncsSkipped(parent), "the parent's mariadbd syncs");
  assert(await syncsSkipped(child), "the fork's mariadbd syncs");

  // Forks asked at once: each export's .cfg files come and go, which another's copy must not see.
  const together = await Promise.all([fork(parent), fork(parent), fork(parent)]);
  for (const each of together) await assertSameState(parent, each);
  await Promise.all(together.map((each) => each.destroy()));

  // The runtime's own session on the parent (the one forks read and lock through), hung up on by
  // the server as its idle timeout would after a long episode, is made again: the fork imports.
  const held = await sql(
    parent,
    "SELECT id FROM information_schema.processlist WHERE id <> CONNECTION_ID() AND command = 'Sleep'",
  );
  assert(held !== "", "the runtime holds no session on the parent");
  for (const id of held.split("\n")) await sql(parent, `KILL ${id}`);
  const again = await fork(parent);
  assertEquals(
    again.forked?.path,
    "import",
    `the fork took the copy path: ${again.forked?.reason}`,
  );
  await assertSameState(parent, again);
  await again.destroy();

  // Apart: each one's writes stay its own, and each counter goes on from the fork.
  const atFork = await hashOf(parent);
  // Straight into the tables: WordPress refuses a second comment from one address this soon
  // (the fork has the parent's comment, so it refuses as the parent would).
  await sql(
    child,
    "INSERT INTO wp_comments (comment_author, comment_content) " +
      "VALUES ('Test Reader', 'written in the fork')",
  );
  await execIn(child, "sh", "-c", `echo child > /run/wsfiles/env-${child.key}/after.txt`);
  assertEquals(await hashOf(parent), atFork, "the fork's write reached the parent");
  await sql(
    parent,
    "INSERT INTO wp_comments (comment_author, comment_content) " +
      "VALUES ('Test Reader', 'written in the parent after the fork')",
  );
  const count = (text: string) =>
    `SELECT COUNT(*) FROM wp_comments WHERE comment_content = '${text}'`;
  assertEquals(await sql(child, count("written in the parent after the fork")), "0");
  assertEquals(await sql(parent, count("written in the fork")), "0");
  const newest = "SELECT MAX(comment_ID) FROM wp_comments";
  assertEquals(await sql(child, newest), await sql(parent, newest), "AUTO_INCREMENT not carried");
  assert(!(await filesOf(parent)).includes("after.txt"), "the fork's file reached the parent");

  // The fork never changed wp_options itself: its own fork gets the parent's setting all the same.
  const grandchild = await fork(child);
  assertEquals(grandchild.forked?.path, "import", grandchild.forked?.reason);
  await assertSameState(child, grandchild);
  assertEquals(
    await sql(grandchild, "SELECT option_value FROM wp_options WHERE option_name = 'blogname'"),
    "Forked",
  );
});

Deno.test("WordPress on the shared runtime: a schema change in the parent sends its fork to the copy path, which copies it whole; that fork's own forks copy too", async () => {
  await using gateway = new Gateway();
  await using sandbox = await openShared(gateway, IMAGE, { readyTimeoutMs: 900_000 });
  const parent = await sandbox.create({ seed: SEED });
  await comment(gateway, parent, "written before the schema change");
  await sql(parent, "ALTER TABLE wp_links ADD COLUMN link_extra INT NOT NULL DEFAULT 7");

  const child = await fork(parent);
  assertEquals(child.forked?.path, "copy");
  assertMatch(child.forked?.reason ?? "", /definition/);
  await assertSameState(parent, child);
  assertEquals(
    await sql(
      child,
      "SELECT COUNT(*) FROM information_schema.columns WHERE table_schema = 'wordpress' AND column_name = 'link_extra'",
    ),
    "1",
  );

  const grandchild = await fork(child);
  assertEquals(grandchild.forked?.path, "copy");
  await assertSameState(child, grandchild);
});
