import { assert, assertEquals, assertRejects } from "@std/assert";
import { Gateway } from "../../../sandboxes/gateway.ts";
import { ownerTag } from "../../../sandboxes/_owner.ts";
import type { DockerClient } from "../../../sandboxes/docker/client.ts";
import { DockerSandbox } from "../../../sandboxes/docker/docker_sandbox.ts";
import { conformance, socketFolders } from "../_conformance.ts";
import { waitFor } from "../../_util/wait.ts";

const IMAGE = "webserv-demo";
const SOCKET_ROOT = "/run/webserv/docker";

/** The env containers and socket folders left of `names`: one sandbox's, not the run's. */
async function leftovers(client: DockerClient, names: Set<string>) {
  const found: string[] = [];
  for (const c of await client.listContainers({ label: "webserv.owner" })) {
    if (
      c.labels["webserv.owner"] === ownerTag() &&
      c.labels["webserv.role"] === "env" &&
      c.names.some((name) => names.has(name.replace(/^\//, "")))
    ) {
      found.push(c.names[0] ?? c.id);
    }
  }
  found.push(...await socketFolders(SOCKET_ROOT, names));
  for (const name of names) {
    // A fork's committed image goes with its container.
    if (await client.hasImage(`${IMAGE}:fork-${name}`)) found.push(`image fork-${name}`);
  }
  return found;
}

// The names each sandbox has had, so that one test's leftovers are its own:
// a container another test left does not fail this one, whatever the order.
const seen = new WeakMap<DockerSandbox, Set<string>>();
conformance<DockerSandbox>({
  name: "DockerSandbox",
  open: (gateway) => DockerSandbox.open({ gateway, image: IMAGE }),
  async leftovers(sandbox) {
    const names = seen.get(sandbox) ?? new Set<string>();
    seen.set(sandbox, names);
    for (const name of sandbox.containerNames) names.add(name);
    return await leftovers(sandbox.client, names);
  },
  async killInit(sandbox, instance) {
    const { pid } = await sandbox.client.inspectContainer(instance.containerName);
    assert(pid > 0);
    Deno.kill(pid, "SIGKILL");
    // The kill is asynchronous: wait until Docker has seen the exit.
    await waitFor(
      async () => !(await sandbox.client.inspectContainer(instance.containerName)).running,
      { message: "Docker sees the killed container exit", intervalMs: 20 },
    );
  },
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

Deno.test("Instance.fork() on Docker cuts concurrent forks of one container one at a time, each under its own pause", async () => {
  await using gateway = new Gateway();
  await using sandbox = await DockerSandbox.open({ gateway, image: IMAGE });
  await using parent = await sandbox.create();
  const since = Math.floor(Date.now() / 1000) - 1;
  const forks = await Promise.all([1, 2, 3].map(() => parent.fork!()));
  try {
    // Docker pauses a container only when it is not paused yet, and unpauses it when its own
    // commit ends: a commit that overlapped another was not paused for all of its cut.
    const events = await new Deno.Command("docker", {
      args: [
        "events",
        "--since",
        String(since),
        "--until",
        String(Math.floor(Date.now() / 1000) + 1),
        "--filter",
        `container=${parent.containerName}`,
        "--filter",
        "event=pause",
        "--format",
        "{{.Action}}",
      ],
    }).output();
    assert(events.success, new TextDecoder().decode(events.stderr));
    const pauses = new TextDecoder().decode(events.stdout).split("\n").filter((l) => l === "pause");
    // At least one pause per fork: before, three forks shared one.
    assert(pauses.length >= 3, `one pause per fork: ${pauses.length} for 3 forks`);
  } finally {
    await Promise.all(forks.map((fork) => fork.destroy()));
  }
});

Deno.test("Instance.fork() asked k times at once checks the parent's liveness once", async () => {
  await using gateway = new Gateway();
  await using sandbox = await DockerSandbox.open({ gateway, image: IMAGE });
  await using parent = await sandbox.create();
  // Counts the health requests to the parent's state server, passing each on.
  const paths: string[] = [];
  const fetch = parent.state.fetch;
  parent.state.fetch = (path, init) => {
    paths.push(path);
    return fetch(path, init);
  };
  const forks = await Promise.all([1, 2, 3, 4].map(() => parent.fork!()));
  try {
    // Sixteen health requests at once to one state server on a loaded host outlasted the
    // check's bound, and failed forks of a parent that was alive.
    assertEquals(paths.filter((path) => path === "/healthz"), ["/healthz"]);
  } finally {
    await Promise.all(forks.map((fork) => fork.destroy()));
  }
});

Deno.test("DockerClient.removeImage() of an image already gone resolves, and a refusal of another kind still throws", async () => {
  await using gateway = new Gateway();
  await using sandbox = await DockerSandbox.open({ gateway, image: IMAGE });
  // Gone already, as when a fork of a fork's removal took its parent's image with it.
  await sandbox.client.removeImage(`${IMAGE}:fork-never-made-${crypto.randomUUID().slice(0, 8)}`);
  // A name Docker cannot parse is refused for what it is.
  await assertRejects(() => sandbox.client.removeImage("Not A Valid Name"), Error);
});
