// A foothold inside an Incus env container: whatever it does to its socket
// folder, the host never dials a socket the container points it at, the
// verifier never reads a fake state server, and the container cannot take
// more than its memory, processes and CPU.
import { assert, assertEquals } from "@std/assert";
import { Gateway } from "../../../sandboxes/gateway.ts";
import { SandboxError } from "../../../sandboxes/errors.ts";
import { IncusSandbox } from "../../../sandboxes/incus/incus_sandbox.ts";
import { assertSocketFolderShut, fakeServer, incusExec as exec, plantLink } from "../_hostile.ts";

const POOL = Deno.env.get("WEBSERV_INCUS_POOL") ?? "webserv-btrfs";
const IMAGE = "webserv-demo";

interface Config {
  config: Record<string, string>;
}

Deno.test("IncusSandbox: a process of another uid in an env cannot write its socket folder", async () => {
  await using gateway = new Gateway();
  await using sandbox = await IncusSandbox.open({ gateway, image: IMAGE, pool: POOL });
  await using instance = await sandbox.create();
  await assertSocketFolderShut(exec, instance.containerName);
});

Deno.test("IncusSandbox: the verifier never reads a state server the container links state.sock to", async () => {
  await using gateway = new Gateway();
  await using sandbox = await IncusSandbox.open({ gateway, image: IMAGE, pool: POOL });
  await using instance = await sandbox.create();
  // The fake says 999 views: the reward a gamed verifier would pay.
  await using fake = await fakeServer({ views: 999 });
  const planted = await exec(instance.containerName, [
    "/bin/deno",
    "eval",
    plantLink("state.sock", fake.path),
  ]);
  assertEquals(planted.code, 0, planted.output);
  try {
    const response = await instance.state.fetch("/views", { signal: AbortSignal.timeout(10_000) });
    const body = await response.json();
    assertEquals(body, { views: 0 }, "the state came from elsewhere than the env's own server");
  } catch (error) {
    // Refusing is fine, as one of ours: never the fake's answer.
    assert(error instanceof SandboxError, String(error));
  }
  try {
    await instance.check();
  } catch (error) {
    assert(error instanceof SandboxError, String(error));
  }
  assertEquals(fake.hits, 0, "the host dialled the socket the container pointed it at");
});

Deno.test("IncusSandbox: the gateway never dials a socket the container links site.sock to", async () => {
  await using gateway = new Gateway();
  await using sandbox = await IncusSandbox.open({ gateway, image: IMAGE, pool: POOL });
  await using instance = await sandbox.create();
  // A stand-in for a host daemon's socket (Incus's or Docker's API).
  await using fake = await fakeServer({ api: "the host's daemon" });
  const planted = await exec(instance.containerName, [
    "/bin/deno",
    "eval",
    plantLink("site.sock", fake.path),
  ]);
  assertEquals(planted.code, 0, planted.output);
  const page = await gateway.request(instance.origin, "/", { signal: AbortSignal.timeout(10_000) });
  const text = await page.text();
  assert(!text.includes("the host's daemon"), text);
  assertEquals(fake.hits, 0, "the gateway dialled the socket the container pointed it at");
});

Deno.test("IncusSandbox.create() sets memory, process and CPU limits on every env", async () => {
  await using gateway = new Gateway();
  await using sandbox = await IncusSandbox.open({ gateway, image: IMAGE, pool: POOL });
  await using instance = await sandbox.create();
  const { config } = await sandbox.client.request(
    "GET",
    `/1.0/instances/${instance.containerName}`,
  ) as Config;
  assertEquals(config["limits.memory"], "1024MiB");
  assertEquals(config["limits.processes"], "1024");
  assertEquals(config["limits.cpu.allowance"], "200ms/100ms");
});

Deno.test("IncusSandbox: a fork bomb inside an env stops at its process limit", async () => {
  await using gateway = new Gateway();
  await using sandbox = await IncusSandbox.open({
    gateway,
    image: IMAGE,
    pool: POOL,
    limits: { processes: 64 },
  });
  await using instance = await sandbox.create();
  const name = instance.containerName;
  const { config } = await sandbox.client.request("GET", `/1.0/instances/${name}`) as Config;
  assertEquals(config["limits.processes"], "64");
  // 200 sleepers, each a process: the limit stops the shell's forks.
  const bomb = await exec(name, [
    "/bin/sh",
    "-c",
    "i=0; while [ $i -lt 200 ]; do sleep 600 & i=$((i+1)); done; echo DONE",
  ]);
  assert(/fork|resource/i.test(bomb.output), bomb.output);
  const state = await sandbox.client.request("GET", `/1.0/instances/${name}/state`) as {
    processes: number;
  };
  assert(state.processes <= 64, `${state.processes} processes`);
  assert(state.processes >= 32, `the bomb ran: ${state.processes} processes`);
});
