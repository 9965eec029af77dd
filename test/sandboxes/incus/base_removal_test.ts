// removeBases: a sandbox that made a seed's base deletes it when it lets go of the seed (at
// retire once no env of the seed lives, and at close), so that a run over many seeds of a real
// application does not leave a seeded database per seed in the storage pool; a base it found
// already made, and every base without the option, stays as the shared cache.
import { assert, assertEquals } from "@std/assert";
import { Gateway } from "../../../sandboxes/gateway.ts";
import { IncusClient } from "../../../sandboxes/incus/client.ts";
import { IncusSandbox } from "../../../sandboxes/incus/incus_sandbox.ts";

const POOL = Deno.env.get("WEBSERV_INCUS_POOL") ?? "webserv-btrfs";
const IMAGE = "webserv-demo";

/** The base instances with this prefix that Incus has. */
async function bases(client: IncusClient, prefix: string): Promise<string[]> {
  return (await client.listInstances())
    .filter((instance) =>
      instance.name.startsWith(`${prefix}base-`) &&
      instance.config["user.webserv.role"] === "base"
    )
    .map((instance) => instance.name).sort();
}

/** Deletes what a failed test left, so the next run starts clean. */
async function tidy(client: IncusClient, prefix: string): Promise<void> {
  for (const name of await bases(client, prefix)) {
    await client.request("DELETE", `/1.0/instances/${name}`).catch(() => {});
  }
}

Deno.test("IncusSandbox with removeBases deletes the bases it made at close()", async () => {
  const prefix = "wsrbc-";
  using client = new IncusClient();
  await tidy(client, prefix);
  await using gateway = new Gateway();
  {
    await using sandbox = await IncusSandbox.open({
      gateway,
      image: IMAGE,
      pool: POOL,
      prefix,
      removeBases: true,
    });
    await using first = await sandbox.create({ seed: 3 });
    await using second = await sandbox.create({ seed: 4 });
    for (const env of [first, second]) {
      const page = await gateway.request(env.origin, "/");
      await page.body?.cancel();
      assertEquals(page.status, 200);
    }
    assertEquals((await bases(client, prefix)).length, 2, "a base per seed while the envs live");
  }
  assertEquals(await bases(client, prefix), [], "close() removed both bases it made");
});

Deno.test("IncusSandbox with removeBases deletes a seed's base at retire() once no env of it lives, and leaves a base it found", async () => {
  const prefix = "wsrbr-";
  using client = new IncusClient();
  await tidy(client, prefix);
  await using gateway = new Gateway();
  try {
    // A base made by an earlier run without the option: the cache another run finds.
    {
      await using keeper = await IncusSandbox.open({ gateway, image: IMAGE, pool: POOL, prefix });
      await (await keeper.create({ seed: 5 })).destroy();
    }
    const kept = await bases(client, prefix);
    assertEquals(kept.length, 1, "without removeBases the base stays after close()");
    await using sandbox = await IncusSandbox.open({
      gateway,
      image: IMAGE,
      pool: POOL,
      prefix,
      removeBases: true,
    });
    const env = await sandbox.create({ seed: 6 });
    await (await sandbox.create({ seed: 5 })).destroy();
    await sandbox.retire(6);
    const made = (await bases(client, prefix)).filter((name) => !kept.includes(name));
    assertEquals(made.length, 1, "retire() keeps the base while an env of the seed lives");
    await env.reset();
    const page = await gateway.request(env.origin, "/");
    await page.body?.cancel();
    assertEquals(page.status, 200, "the env resets from its base");
    await env.destroy();
    await sandbox.retire(6);
    await sandbox.retire(5);
    assertEquals(await bases(client, prefix), kept, "seed 6's base went; seed 5's, found, stayed");
  } finally {
    await tidy(client, prefix);
  }
});

Deno.test("IncusSandbox without removeBases keeps the bases it made", async () => {
  const prefix = "wsrbk-";
  using client = new IncusClient();
  await tidy(client, prefix);
  try {
    await using gateway = new Gateway();
    {
      await using sandbox = await IncusSandbox.open({ gateway, image: IMAGE, pool: POOL, prefix });
      await (await sandbox.create({ seed: 2 })).destroy();
      await sandbox.retire(2);
    }
    const left = await bases(client, prefix);
    assertEquals(left.length, 1);
    assert(left[0]?.startsWith(`${prefix}base-demo-2-`), left[0]);
  } finally {
    await tidy(client, prefix);
  }
});
