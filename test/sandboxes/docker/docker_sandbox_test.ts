import { assert, assertEquals, assertRejects } from "@std/assert";
import { Gateway } from "../../../sandboxes/gateway.ts";
import { InstanceGoneError } from "../../../sandboxes/errors.ts";
import { ownerTag } from "../../../sandboxes/_owner.ts";
import type { DockerClient } from "../../../sandboxes/docker/client.ts";
import { DockerSandbox } from "../../../sandboxes/docker/docker_sandbox.ts";
import { conformance } from "../_conformance.ts";

const IMAGE = "webserv-demo";
const SOCKET_ROOT = "/run/webserv/docker";

async function exists(path: string): Promise<boolean> {
  try {
    await Deno.stat(path);
    return true;
  } catch {
    return false;
  }
}

async function leftovers(client: DockerClient, names: Set<string>) {
  const found: string[] = [];
  for (const c of await client.listContainers({ label: "webserv.owner" })) {
    if (
      c.labels["webserv.owner"] === ownerTag() &&
      c.labels["webserv.role"] === "env"
    ) {
      found.push(c.names[0] ?? c.id);
    }
  }
  for (const name of names) {
    if (await exists(`${SOCKET_ROOT}/${name}`)) found.push(`folder ${name}`);
  }
  return found;
}

const seen = new Set<string>();
conformance<DockerSandbox>({
  name: "DockerSandbox",
  open: (gateway) => DockerSandbox.open({ gateway, image: IMAGE }),
  async leftovers(sandbox) {
    for (const name of sandbox.containerNames) seen.add(name);
    return await leftovers(sandbox.client, seen);
  },
});

Deno.test("DockerSandbox.create() reports the killed instance when its init is killed from outside", async () => {
  await using gateway = new Gateway();
  await using sandbox = await DockerSandbox.open({ gateway, image: IMAGE });
  await using instance = await sandbox.create();
  const { pid } = await sandbox.client.inspectContainer(instance.containerName);
  assert(pid > 0);
  Deno.kill(pid, "SIGKILL");
  // The kill is asynchronous: wait until Docker has seen the exit.
  for (let i = 0; i < 100; i++) {
    if (!(await sandbox.client.inspectContainer(instance.containerName)).running) break;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  await assertRejects(() => instance.check(), InstanceGoneError);
  await assertRejects(() => instance.reset(), InstanceGoneError);
  const response = await gateway.request(instance.origin, "/");
  assertEquals(response.status, 502);
  await response.body?.cancel();
});

Deno.test("DockerSandbox.open() reaps envs when the run that made them is gone", async () => {
  await using gateway = new Gateway();
  await using sandbox = await DockerSandbox.open({ gateway, image: IMAGE });
  // Pretend a crashed run made a container: an owner pid that cannot exist.
  const name = `ws-reaptest${Math.floor(Math.random() * 1e6)}`;
  await sandbox.client.createContainer({
    name,
    image: `${IMAGE}:latest`,
    labels: {
      "webserv.owner": ownerTag().replace(/\/\d+$/, "/999999999"),
      "webserv.role": "env",
    },
  });
  await using other = await DockerSandbox.open({ gateway, image: IMAGE });
  const names = (await other.client.listContainers({})).flatMap((c) => c.names);
  assert(!names.includes(name), `${name} was not reaped`);
});

Deno.test("DockerSandbox.open() throws SandboxError naming the task when the image is missing", async () => {
  await using gateway = new Gateway();
  const error = await assertRejects(() =>
    DockerSandbox.open({ gateway, image: "webserv-nothere" })
  );
  assert(String(error).includes("deno task image"), String(error));
});
