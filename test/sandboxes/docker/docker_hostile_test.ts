// A foothold inside a Docker env container: whatever it does to its socket
// folder, the host never dials a socket the container points it at, the
// verifier never reads a fake state server, and the container cannot take
// more than its memory, processes and CPU.
import { assert, assertEquals } from "@std/assert";
import { Gateway } from "../../../sandboxes/gateway.ts";
import { SandboxError } from "../../../sandboxes/errors.ts";
import { DockerSandbox } from "../../../sandboxes/docker/docker_sandbox.ts";
import { assertSocketFolderShut, dockerExec as exec, fakeServer, plantLink } from "../_hostile.ts";

const IMAGE = "webserv-demo";

Deno.test("DockerSandbox: a process of another uid in an env cannot write its socket folder", async () => {
  await using gateway = new Gateway();
  await using sandbox = await DockerSandbox.open({ gateway, image: IMAGE });
  await using instance = await sandbox.create();
  await assertSocketFolderShut(exec, instance.containerName);
});

Deno.test("DockerSandbox: neither the verifier nor the gateway dials a socket the container links to", async () => {
  await using gateway = new Gateway();
  await using sandbox = await DockerSandbox.open({ gateway, image: IMAGE });
  await using instance = await sandbox.create();
  await using fake = await fakeServer({ views: 999 });
  for (const socket of ["state.sock", "site.sock"]) {
    const planted = await exec(instance.containerName, [
      "/bin/deno",
      "eval",
      plantLink(socket, fake.path),
    ]);
    assertEquals(planted.code, 0, planted.output);
  }
  try {
    const body =
      await (await instance.state.fetch("/views", { signal: AbortSignal.timeout(10_000) })).json();
    assertEquals(body, { views: 0 }, "the state came from elsewhere than the env's own server");
  } catch (error) {
    assert(error instanceof SandboxError, String(error));
  }
  const page = await gateway.request(instance.origin, "/", { signal: AbortSignal.timeout(10_000) });
  const text = await page.text();
  assert(!text.includes("999"), text);
  assertEquals(fake.hits, 0, "the host dialled the socket the container pointed it at");
});

interface Inspected {
  HostConfig: { Memory: number; MemorySwap: number; PidsLimit: number; NanoCpus: number };
}

Deno.test("DockerSandbox.create() sets memory, process and CPU limits on every env", async () => {
  await using gateway = new Gateway();
  await using sandbox = await DockerSandbox.open({ gateway, image: IMAGE });
  await using instance = await sandbox.create();
  const { HostConfig } = await (await sandbox.client.request(
    "GET",
    `/containers/${instance.containerName}/json`,
  )).json() as Inspected;
  assertEquals(HostConfig.Memory, 1024 * 1024 * 1024);
  assertEquals(HostConfig.MemorySwap, 1024 * 1024 * 1024);
  assertEquals(HostConfig.PidsLimit, 1024);
  assertEquals(HostConfig.NanoCpus, 2_000_000_000);
});

Deno.test("DockerSandbox: a fork bomb inside an env stops at its process limit", async () => {
  await using gateway = new Gateway();
  await using sandbox = await DockerSandbox.open({
    gateway,
    image: IMAGE,
    limits: { processes: 64 },
  });
  await using instance = await sandbox.create();
  const name = instance.containerName;
  const bomb = await exec(name, [
    "/bin/sh",
    "-c",
    "i=0; while [ $i -lt 200 ]; do sleep 600 & i=$((i+1)); done; echo DONE",
  ]);
  assert(/fork|resource/i.test(bomb.output), bomb.output);
  const stats = await (await sandbox.client.request(
    "GET",
    `/containers/${name}/stats?stream=false`,
  )).json() as { pids_stats: { current: number; limit: number } };
  assertEquals(stats.pids_stats.limit, 64);
  assert(stats.pids_stats.current <= 64, `${stats.pids_stats.current} tasks`);
  assert(stats.pids_stats.current >= 32, `the bomb ran: ${stats.pids_stats.current} tasks`);
});

Deno.test("DockerSandbox.create() caps the CPU limit at the CPUs of the daemon's host", async () => {
  await using gateway = new Gateway();
  // Docker refuses a container with more CPUs than its host has.
  await using sandbox = await DockerSandbox.open({ gateway, image: IMAGE, limits: { cpus: 4096 } });
  await using instance = await sandbox.create();
  const { HostConfig } = await (await sandbox.client.request(
    "GET",
    `/containers/${instance.containerName}/json`,
  )).json() as Inspected;
  assertEquals(HostConfig.NanoCpus, (await sandbox.client.cpuCount()) * 1e9);
});
