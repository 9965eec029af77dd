/**
 * Redmine's state server on its image serves no secret (`kit/state_secrets.ts`):
 * the password hashes, salts and API keys read from the container's own
 * MariaDB appear in none of its answers (hash, table reads, mark, diff), nor
 * does any plain hash of them; a password changed through Redmine's REST API
 * is still a changed row naming its columns, with digests on both sides; a
 * read may not filter by a secret column; and two instances of one seed,
 * given the same API key, show different digests of it.
 *
 * Not in the default run (the image takes minutes to build): run with
 * `deno task test:apps`. Fails, never skips, when the image is missing;
 * `WEBSERV_REDMINE_IMAGE` names another alias (a private build).
 */
import { assert, assertEquals, assertMatch, assertNotEquals } from "@std/assert";
import { createHash } from "node:crypto";
import { DIGEST_PREFIX } from "../../fixtures/sites/kit/state_secrets.ts";
import type { Row, StateDiff } from "../../fixtures/sites/kit/types.ts";
import { ADMIN, FIRST_USER_ID } from "../../fixtures/sites/redmine/data.ts";
import { Gateway } from "../../sandboxes/gateway.ts";
import type { Instance } from "../../sandboxes/types.ts";
import { appImage, openIncus, stateReader } from "./_apps.ts";

const SEED = 1;
const IMAGE = Deno.env.get("WEBSERV_REDMINE_IMAGE") ?? "webserv-redmine";
/** Each instance in a sandbox of its own, so each has a base, and a key, of its own. */
const PREFIXES = ["rmsecret-a-", "rmsecret-b-"];

const DIGEST = new RegExp(`^${DIGEST_PREFIX}[0-9a-f]{32}$`);

/** Runs `mariadb` on the Redmine database inside the instance's container (the one its prefix names). */
async function rawQuery(prefix: string, statement: string): Promise<string[]> {
  const list = await new Deno.Command("incus", {
    args: ["list", prefix, "--format", "csv", "--columns", "n"],
    stdout: "piped",
  }).output();
  const [name, ...others] = new TextDecoder().decode(list.stdout).trim().split("\n")
    .filter((line) => line.startsWith(prefix) && !line.includes("base"));
  assert(name !== undefined && others.length === 0, `one env container of ${prefix} expected`);
  const run = await new Deno.Command("incus", {
    args: [
      "exec",
      name,
      "--",
      "mariadb",
      "--batch",
      "--skip-column-names",
      "redmine",
      "-e",
      statement,
    ],
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (!run.success) throw new Error(new TextDecoder().decode(run.stderr));
  return new TextDecoder().decode(run.stdout).trim().split("\n").flatMap((line) => line.split("\t"))
    .filter((value) => value !== "" && value !== "NULL");
}

/** The raw secrets of the instance: every password hash, salt and token. */
async function rawSecrets(prefix: string): Promise<string[]> {
  return await rawQuery(
    prefix,
    "SELECT hashed_password, salt FROM users; SELECT value FROM tokens",
  );
}

/** Asserts no answer holds a raw secret or a plain hash of one. */
function assertNoSecret(answers: string[], secrets: string[]): void {
  const text = answers.join("\n");
  for (const secret of secrets) {
    assert(!text.includes(secret), `a state answer holds the secret ${secret.slice(0, 8)}…`);
    for (const algorithm of ["md5", "sha1", "sha256"]) {
      const hash = createHash(algorithm).update(secret).digest("hex");
      assert(!text.includes(hash), `a state answer holds the ${algorithm} of a secret`);
    }
  }
}

/** Reads a state route as text, checking it answered 200. */
async function answer(instance: Instance, path: string, init?: RequestInit): Promise<string> {
  return JSON.stringify(await stateReader(instance)<unknown>(path, init));
}

Deno.test("Redmine's state server on its image serves its secrets only as digests of an instance's own key, and a changed password is still a changed row", async () => {
  await using gateway = new Gateway();
  const sandboxes = [];
  try {
    const instances: Instance[] = [];
    for (const prefix of PREFIXES) {
      const sandbox = await openIncus(
        appImage("redmine", { image: IMAGE, readyMs: 600_000, prefix }),
        "unix",
      )(gateway);
      sandboxes.push(sandbox);
      instances.push(await sandbox.create({ seed: SEED }));
    }
    const [a, b] = instances as [Instance, Instance];
    const state = stateReader(a);

    const secrets = await rawSecrets(PREFIXES[0]!);
    assert(secrets.length > 20, `too few secrets read: ${secrets.length}`);
    const answers = [
      await answer(a, "/hash"),
      await answer(a, "/tables/users?limit=5000"),
      await answer(a, "/tables/tokens?limit=5000"),
      await answer(a, "/tables/settings?limit=5000"),
      await answer(a, "/mark", { method: "POST" }),
      await answer(a, "/mark"),
    ];
    assertNoSecret(answers, secrets);

    // Both instances are given the same API key for the first user (Redmine
    // makes each at random): each shows its own digest of it, and neither the key.
    const same = "0123456789abcdef0123456789abcdef01234567";
    for (const prefix of PREFIXES) {
      await rawQuery(
        prefix,
        `UPDATE tokens SET value = '${same}' WHERE user_id = ${FIRST_USER_ID} AND action = 'api'`,
      );
    }
    const user = `user_id=${FIRST_USER_ID}&action=api`;
    const [tokenA] = await state<Row[]>(`/tables/tokens?${user}`);
    const [tokenB] = await stateReader(b)<Row[]>(`/tables/tokens?${user}`);
    assertMatch(String(tokenA?.value), DIGEST);
    assertMatch(String(tokenB?.value), DIGEST);
    assertNotEquals(tokenA?.value, tokenB?.value);
    assertNoSecret([JSON.stringify([tokenA, tokenB])], [same]);
    // Read again, the digest is the same: it is the instance's key, not a draw per read.
    assertEquals((await state<Row[]>(`/tables/tokens?${user}`))[0]?.value, tokenA?.value);

    // A read may not ask whether a guess is the secret.
    const [raw] = await rawQuery(
      PREFIXES[0]!,
      `SELECT value FROM tokens WHERE user_id = ${FIRST_USER_ID} AND action = 'api'`,
    );
    const probe = await a.state!.fetch(`/tables/tokens?value=${encodeURIComponent(raw ?? "")}`);
    assertEquals(probe.status, 400);
    assertMatch(((await probe.json()) as { error: string }).error, /holds secrets/);

    // The administrator changes the first user's password through the REST API.
    const changed = await gateway.request(a.origin, `/users/${FIRST_USER_ID}.json`, {
      method: "PUT",
      headers: {
        "content-type": "application/json",
        authorization: `Basic ${btoa(`${ADMIN.login}:${ADMIN.password}`)}`,
      },
      body: JSON.stringify({ user: { password: "changed-by-the-test" } }),
    });
    assertEquals(changed.status, 204, await changed.text());
    const diff = await state<StateDiff>("/diff");
    const row = diff.tables.users?.changed.find((change) => change.key.id === FIRST_USER_ID);
    assert(row !== undefined, JSON.stringify(diff).slice(0, 2000));
    assert(row.columns.includes("hashed_password"), row.columns.join(", "));
    assertMatch(String(row.before.hashed_password), DIGEST);
    assertMatch(String(row.after.hashed_password), DIGEST);
    assertNotEquals(row.before.hashed_password, row.after.hashed_password);
    assertNoSecret(
      [JSON.stringify(diff), await answer(a, "/tables/users?limit=5000")],
      [...secrets, ...await rawSecrets(PREFIXES[0]!)],
    );
  } finally {
    for (const sandbox of sandboxes.reverse()) await sandbox.close();
  }
});
