/**
 * MediaWiki in the shared-runtime mode (`SharedRuntimeSandbox`): one
 * Apache/PHP for every env, a `mariadbd` per env on a reflinked copy of the
 * seeded 1.5 GiB datadir. An edit through one env's origin (even one naming
 * another env in the header the runtime picks databases by) is a revision
 * in that env's database only, and reset restores the seeded hash.
 *
 * Fails, never skips, when the image is missing: build it with
 * `deno task image:apps mediawiki`.
 */
import { assertEquals, assertNotEquals, assertStringIncludes } from "@std/assert";
import { Gateway } from "../../sandboxes/gateway.ts";
import type { SharedRuntimeInstance } from "../../sandboxes/incus/shared_runtime_sandbox.ts";
import type { StateHash } from "../../fixtures/sites/kit/types.ts";
import { addedRowsWith, markedPair, openShared, postForm } from "./_shared.ts";

async function edit(
  gateway: Gateway,
  env: SharedRuntimeInstance,
  summary: string,
  headers: Record<string, string> = {},
): Promise<void> {
  const { status, body } = await postForm(gateway, env, "/api.php", {
    action: "edit",
    format: "json",
    title: `Shared runtime ${crypto.randomUUID()}`,
    appendtext: "A sentence from the shared-runtime test.",
    summary,
    token: "+\\",
  }, headers);
  assertEquals(status, 200, body.slice(0, 300));
  assertStringIncludes(body, '"result":"Success"');
}

function revisionsWith(env: SharedRuntimeInstance, summary: string): Promise<number> {
  return addedRowsWith(env, "revisions", "comment", summary);
}

Deno.test("SharedRuntimeSandbox keeps each MediaWiki env's database private and resets it to the seeded hash", async () => {
  await using gateway = new Gateway();
  // Another checkout's build replaces "webserv-mediawiki" (its own inputs):
  // a private alias (`deno task image:apps --alias=NAME mediawiki`) keeps this one's.
  await using sandbox = await openShared(
    gateway,
    Deno.env.get("WEBSERV_MEDIAWIKI_IMAGE") ?? "webserv-mediawiki",
    { readyTimeoutMs: 900_000, envTimeoutMs: 120_000 },
  );
  const { a, b, stateA, seeded } = await markedPair(sandbox, 1);

  const forged = `A naming B ${crypto.randomUUID()}`;
  await edit(gateway, a, forged, { "x-webserv-env": b.key });
  const plain = `B ${crypto.randomUUID()}`;
  await edit(gateway, b, plain);
  assertEquals(await revisionsWith(a, forged), 1, "the forged header moved A's edit elsewhere");
  assertEquals(await revisionsWith(b, forged), 0, "A's edit reached B's database");
  assertEquals(await revisionsWith(b, plain), 1);
  assertEquals(await revisionsWith(a, plain), 0, "B's edit reached A's database");
  assertNotEquals((await stateA<StateHash>("/hash")).hash, seeded.hash);

  await a.reset();
  assertEquals((await stateA<StateHash>("/hash")).hash, seeded.hash, "reset did not restore");
  await edit(gateway, a, `after reset ${crypto.randomUUID()}`);
});
