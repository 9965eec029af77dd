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
import {
  type SharedRuntimeInstance,
  SharedRuntimeSandbox,
} from "../../sandboxes/incus/shared_runtime_sandbox.ts";
import type { StateDiff, StateHash } from "../../fixtures/sites/kit/types.ts";
import { stateReader } from "./_apps.ts";

const POOL = Deno.env.get("WEBSERV_INCUS_POOL") ?? "webserv-btrfs";

async function edit(
  gateway: Gateway,
  env: SharedRuntimeInstance,
  summary: string,
  headers: Record<string, string> = {},
): Promise<void> {
  const response = await gateway.request(env.origin, "/api.php", {
    method: "POST",
    headers,
    body: new URLSearchParams({
      action: "edit",
      format: "json",
      title: `Shared runtime ${crypto.randomUUID()}`,
      appendtext: "A sentence from the shared-runtime test.",
      summary,
      token: "+\\",
    }),
  });
  const answer = await response.text();
  assertEquals(response.status, 200, answer.slice(0, 300));
  assertStringIncludes(answer, '"result":"Success"');
}

async function revisionsWith(env: SharedRuntimeInstance, summary: string): Promise<number> {
  const diff = await stateReader(env)<StateDiff>("/diff");
  return (diff.tables.revisions?.added ?? []).filter((row) => row.comment === summary).length;
}

Deno.test("SharedRuntimeSandbox keeps each MediaWiki env's database private and resets it to the seeded hash", async () => {
  await using gateway = new Gateway();
  await using sandbox = await SharedRuntimeSandbox.open({
    gateway,
    // Another checkout's build replaces "webserv-mediawiki" (its own inputs):
    // a private alias (`deno task image:apps --alias=NAME mediawiki`) keeps this one's.
    image: Deno.env.get("WEBSERV_MEDIAWIKI_IMAGE") ?? "webserv-mediawiki",
    pool: POOL,
    prefix: "wsshared-",
    readyTimeoutMs: 900_000,
    envTimeoutMs: 120_000,
  });
  const a = await sandbox.create({ seed: 1 });
  const b = await sandbox.create({ seed: 1 });
  const stateA = stateReader(a);
  const stateB = stateReader(b);
  const seeded = await stateA<StateHash>("/hash");
  assertEquals((await stateB<StateHash>("/hash")).hash, seeded.hash);
  await stateA("/mark", { method: "POST" });
  await stateB("/mark", { method: "POST" });

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
