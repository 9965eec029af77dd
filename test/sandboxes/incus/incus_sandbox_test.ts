import { assert, assertEquals, assertRejects } from "@std/assert";
import { Gateway } from "../../../sandboxes/gateway.ts";
import { InstanceGoneError } from "../../../sandboxes/errors.ts";
import { ownerTag } from "../../../sandboxes/_owner.ts";
import type { IncusClient } from "../../../sandboxes/incus/client.ts";
import { IncusSandbox } from "../../../sandboxes/incus/incus_sandbox.ts";
import { WarmPool } from "../../../sandboxes/warm_pool.ts";
import { conformance } from "../_conformance.ts";

const POOL = Deno.env.get("WEBSERV_INCUS_POOL") ?? "webserv-btrfs";
const IMAGE = "webserv-demo";
const SOCKET_ROOT = "/run/webserv/incus";

async function exists(path: string): Promise<boolean> {
  try {
    await Deno.stat(path);
    return true;
  } catch {
    return false;
  }
}

/** The envs of this process that Incus still has, and their socket folders. */
async function leftovers(client: IncusClient, names: Set<string>) {
  const found: string[] = [];
  for (const instance of await client.listInstances()) {
    if (
      instance.config["user.webserv.owner"] === ownerTag() &&
      instance.config["user.webserv.role"] === "env"
    ) {
      found.push(instance.name);
    }
  }
  for (const name of names) {
    if (await exists(`${SOCKET_ROOT}/${name}`)) found.push(`folder ${name}`);
  }
  return found;
}

const seen = new Set<string>();
conformance<IncusSandbox>({
  name: "IncusSandbox",
  open: (gateway) => IncusSandbox.open({ gateway, image: IMAGE, pool: POOL }),
  async leftovers(sandbox) {
    for (const name of sandbox.containerNames) seen.add(name);
    return await leftovers(sandbox.client, seen);
  },
});

Deno.test("IncusSandbox.create() reports the killed instance when its init is killed from outside", async () => {
  await using gateway = new Gateway();
  await using sandbox = await IncusSandbox.open({
    gateway,
    image: IMAGE,
    pool: POOL,
  });
  await using instance = await sandbox.create();
  const { pid } = await sandbox.client.instanceState(instance.containerName);
  assert(pid > 0);
  Deno.kill(pid, "SIGKILL");
  await assertRejects(() => instance.check(), InstanceGoneError);
  await assertRejects(() => instance.reset(), InstanceGoneError);
  const response = await gateway.request(instance.origin, "/");
  assertEquals(response.status, 502);
  await response.body?.cancel();
});

Deno.test("IncusSandbox.reset() restores the snapshot when the reset mode is restore", async () => {
  await using gateway = new Gateway();
  await using sandbox = await IncusSandbox.open({
    gateway,
    image: IMAGE,
    pool: POOL,
    reset: "restore",
  });
  await using instance = await sandbox.create({ seed: 1 });
  const name = instance.containerName;
  await (await gateway.request(instance.origin, "/")).text();
  const views = async () => (await (await instance.state.fetch("/views")).json()).views;
  assertEquals(await views(), 1);
  await instance.reset();
  assertEquals(instance.containerName, name);
  assertEquals(await views(), 0);
});

Deno.test("IncusSandbox.open() reaps envs when the run that made them is gone", async () => {
  await using gateway = new Gateway();
  await using sandbox = await IncusSandbox.open({
    gateway,
    image: IMAGE,
    pool: POOL,
  });
  const instance = await sandbox.create();
  const name = instance.containerName;
  // Pretend a crashed run made it: an owner pid that cannot exist.
  const tag = ownerTag().replace(/\/\d+$/, "/999999999");
  await sandbox.client.request("PATCH", `/1.0/instances/${name}`, {
    json: { config: { "user.webserv.owner": tag } },
  });
  await using other = await IncusSandbox.open({
    gateway,
    image: IMAGE,
    pool: POOL,
  });
  const names = (await other.client.listInstances()).map((i) => i.name);
  assert(!names.includes(name), `${name} was not reaped`);
  assert(!(await exists(`${SOCKET_ROOT}/${name}`)));
  await assertRejects(() => instance.check(), InstanceGoneError);
  await instance.destroy();
});

Deno.test("IncusSandbox.open() throws SandboxError naming the task when the image is missing", async () => {
  await using gateway = new Gateway();
  const error = await assertRejects(() =>
    IncusSandbox.open({ gateway, image: "webserv-nothere", pool: POOL })
  );
  assert(String(error).includes("deno task image"), String(error));
});

Deno.test("WarmPool.acquire() replaces an Incus env when its init was killed while idle", async () => {
  await using gateway = new Gateway();
  await using sandbox = await IncusSandbox.open({
    gateway,
    image: IMAGE,
    pool: POOL,
  });
  await using pool = new WarmPool(sandbox, { size: 2 });
  await pool.filled();
  const victim = pool.idle[0];
  assert(victim);
  const { pid } = await sandbox.client.instanceState(victim.containerName);
  Deno.kill(pid, "SIGKILL");
  await using a = await pool.acquire();
  await using b = await pool.acquire();
  assertEquals(pool.replaced, 1);
  for (const instance of [a, b]) {
    const page = await gateway.request(instance.origin, "/");
    assertEquals(page.status, 200);
    await page.body?.cancel();
  }
});
