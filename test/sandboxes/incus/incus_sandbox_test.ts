import { assert, assertEquals, assertRejects, assertStringIncludes } from "@std/assert";
import { SandboxError, SandboxTimeoutError } from "../../../sandboxes/errors.ts";
import { Gateway } from "../../../sandboxes/gateway.ts";
import { InstanceGoneError } from "../../../sandboxes/errors.ts";
import { ownerTag } from "../../../sandboxes/_owner.ts";
import { IncusClient } from "../../../sandboxes/incus/client.ts";
import { IncusSandbox } from "../../../sandboxes/incus/incus_sandbox.ts";
import { buildRootfs } from "../../../sandboxes/image/build_rootfs.ts";
import { WarmPool } from "../../../sandboxes/warm_pool.ts";
import { conformance, exists, socketFolders } from "../_conformance.ts";
import { waitFor } from "../../_util/wait.ts";

const POOL = Deno.env.get("WEBSERV_INCUS_POOL") ?? "webserv-btrfs";
const IMAGE = "webserv-demo";
const SOCKET_ROOT = "/run/webserv/incus";

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
  found.push(...await socketFolders(SOCKET_ROOT, names));
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
  async killInit(sandbox, instance) {
    const { pid } = await sandbox.client.instanceState(instance.containerName);
    assert(pid > 0);
    Deno.kill(pid, "SIGKILL");
  },
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

Deno.test("IncusSandbox.create() serves a TCP-only site through a proxy device when siteTransport is tcp", async () => {
  await using gateway = new Gateway();
  await using sandbox = await IncusSandbox.open({
    gateway,
    image: IMAGE,
    pool: POOL,
    siteTransport: "tcp",
  });
  await using instance = await sandbox.create({ seed: 1 });
  const name = instance.containerName;
  // No site socket in the folder: the site answers only on TCP inside.
  assert(!(await exists(`${SOCKET_ROOT}/${name}/site.sock`)), "the site listened on a socket");
  const { devices } = await sandbox.client.request("GET", `/1.0/instances/${name}`)
    .then((body) => body as { devices: Record<string, Record<string, string>> });
  assertEquals(devices.site?.type, "proxy");
  assert(devices.site?.listen?.startsWith("tcp:127.0.0.1:"), "the proxy listens off loopback");
  const page = await gateway.request(instance.origin, "/");
  assertEquals(page.status, 200);
  await page.body?.cancel();
  const views = async () => (await (await instance.state.fetch("/views")).json()).views;
  assertEquals(await views(), 1);
  await instance.reset();
  assertEquals(await views(), 0);
  const again = await gateway.request(instance.origin, "/");
  assertEquals(again.status, 200, "the route follows the re-copied container's port");
  await again.body?.cancel();
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

Deno.test("IncusSandbox.create() throws SandboxError naming the instance with its lxc.log when the start fails", async () => {
  await using gateway = new Gateway();
  await using sandbox = await IncusSandbox.open({
    gateway,
    image: IMAGE,
    pool: POOL,
    // A pre-start hook that fails, as Incus's own hook did when it could not
    // reach incusd.
    config: { "raw.lxc": "lxc.hook.pre-start = /bin/false" },
  });
  const error = await assertRejects(() => sandbox.create(), SandboxError);
  assert(!(error instanceof InstanceGoneError), String(error));
  assertStringIncludes(error.message, 'Incus could not start instance "ws-');
  assert(
    error.daemonLog.some((line) => line.includes("Failed to run lxc.hook.pre-start")),
    `lxc.log lines: ${JSON.stringify(error.daemonLog)}`,
  );
  assertStringIncludes(error.message, "lxc.log says:");
  assertEquals(sandbox.containerNames, []);
  assertEquals(await leftovers(sandbox.client, new Set()), []);
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

Deno.test("IncusSandbox.reset() takes a ready spare when spares are kept", async () => {
  await using gateway = new Gateway();
  const sandbox = await IncusSandbox.open({
    gateway,
    image: IMAGE,
    pool: POOL,
    spares: 1,
  });
  try {
    await using instance = await sandbox.create({ seed: 1 });
    for (let i = 0; i < 300 && sandbox.readySpares < 1; i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    assertEquals(sandbox.readySpares, 1);
    const before = instance.containerName;
    await (await gateway.request(instance.origin, "/")).text();
    await instance.reset();
    assert(instance.containerName !== before);
    assertEquals(await (await instance.state.fetch("/views")).json(), {
      views: 0,
    });
  } finally {
    await sandbox.close();
  }
  using client = new IncusClient();
  assertEquals(await leftovers(client, new Set()), []);
});

Deno.test("IncusSandbox.warm() fills every spare of a seed before any create()", async () => {
  await using gateway = new Gateway();
  const sandbox = await IncusSandbox.open({ gateway, image: IMAGE, pool: POOL, spares: 2 });
  try {
    sandbox.warm(3);
    // One launch at a time: the second spare starts when the first is ready.
    await waitFor(() => sandbox.readySpares === 2, {
      message: "both spares of seed 3 should be ready",
      timeoutMs: 120_000,
      intervalMs: 100,
    });
    await using instance = await sandbox.create({ seed: 3 });
    assertEquals(sandbox.readySpares, 1);
    assertEquals(await (await instance.state.fetch("/views")).json(), { views: 0 });
  } finally {
    await sandbox.close();
  }
  using client = new IncusClient();
  assertEquals(await leftovers(client, new Set()), []);
});

Deno.test("IncusSandbox.open() refuses a target its given client does not place on", async () => {
  await using gateway = new Gateway();
  using client = new IncusClient({ target: "member-1" });
  const error = await assertRejects(
    () => IncusSandbox.open({ gateway, image: IMAGE, pool: POOL, client, target: "member-2" }),
    TypeError,
  );
  assertStringIncludes(error.message, '"member-2"');
});

const HTTPS_ADDRESS = "127.0.0.1:8443";

interface ClientCert extends AsyncDisposable {
  cert: string;
  key: string;
  serverCert: string;
}

/**
 * Makes the local incusd listen on loopback HTTPS (as a remote host would)
 * and trusts a fresh client certificate, removed again on dispose.
 */
async function trustedClientCert(trust: boolean): Promise<ClientCert> {
  using local = new IncusClient();
  // .ci/daemons.sh sets the address; changing server config while other
  // test files start instances makes Incus's start hooks time out.
  const server = JSON.stringify(await local.request("GET", "/1.0"));
  if (!server.includes(`"core.https_address":"${HTTPS_ADDRESS}"`)) {
    await local.request("PATCH", "/1.0", {
      json: { config: { "core.https_address": HTTPS_ADDRESS } },
    });
  }
  const dir = await Deno.makeTempDir({ prefix: "webserv-cert-" });
  const { code, stderr } = await new Deno.Command("openssl", {
    args: [
      "req",
      "-x509",
      "-newkey",
      "ec",
      "-pkeyopt",
      "ec_paramgen_curve:secp384r1",
      "-nodes",
      "-days",
      "1",
      "-subj",
      "/CN=webserv-test",
      "-addext",
      "extendedKeyUsage=clientAuth",
      "-keyout",
      `${dir}/client.key`,
      "-out",
      `${dir}/client.crt`,
    ],
    stdout: "null",
    stderr: "piped",
  }).output();
  assertEquals(code, 0, new TextDecoder().decode(stderr));
  const cert = await Deno.readTextFile(`${dir}/client.crt`);
  const key = await Deno.readTextFile(`${dir}/client.key`);
  const serverCert = await Deno.readTextFile("/var/lib/incus/server.crt");
  await Deno.remove(dir, { recursive: true });
  const name = `webserv-test-${Deno.pid}-${Math.floor(Math.random() * 1e6)}`;
  if (trust) {
    await local.request("POST", "/1.0/certificates", {
      json: { name, type: "client", certificate: pemBody(cert) },
    });
  }
  return {
    cert,
    key,
    serverCert,
    async [Symbol.asyncDispose]() {
      if (!trust) return;
      using local = new IncusClient();
      const fingerprints = await local.request("GET", "/1.0/certificates");
      for (const url of Array.isArray(fingerprints) ? fingerprints : []) {
        const path = String(url);
        const certificate = await local.request("GET", path);
        if (JSON.stringify(certificate).includes(`"name":"${name}"`)) {
          await local.request("DELETE", path);
        }
      }
    },
  };
}

function pemBody(pem: string): string {
  return pem.replace(/-----[A-Z ]+-----/g, "").replace(/\s+/g, "");
}

Deno.test("IncusClient.request() is refused when the client certificate is not trusted", async () => {
  await using cert = await trustedClientCert(false);
  using remote = new IncusClient({
    url: `https://${HTTPS_ADDRESS}`,
    cert: cert.cert,
    key: cert.key,
    serverCert: cert.serverCert,
  });
  const error = await assertRejects(
    () => remote.listInstances(),
    SandboxError,
  );
  assertEquals(error.status, 403);
});

Deno.test("IncusSandbox.create() works over HTTPS when the client certificate is trusted", async () => {
  await using cert = await trustedClientCert(true);
  using remote = new IncusClient({
    url: `https://${HTTPS_ADDRESS}`,
    cert: cert.cert,
    key: cert.key,
    serverCert: cert.serverCert,
  });
  await using gateway = new Gateway();
  await using sandbox = await IncusSandbox.open({
    gateway,
    image: "webserv-demo",
    pool: POOL,
    client: remote,
  });
  await using instance = await sandbox.create({ seed: 1 });
  const names = (await remote.listInstances()).map((i) => i.name);
  assert(names.includes(instance.containerName));
  const page = await gateway.request(instance.origin, "/");
  assertEquals(page.status, 200);
  await page.body?.cancel();
  await instance.reset();
  const views = await (await instance.state.fetch("/views")).json();
  assertEquals(views, { views: 0 });
});

Deno.test("IncusSandbox.create() passes the placement target to Incus when the client has one", async () => {
  // A standalone incusd refuses a target with its own message; a cluster
  // places the instance on that member.
  using placed = new IncusClient({ target: "webserv-member-2" });
  await using gateway = new Gateway();
  await using sandbox = await IncusSandbox.open({
    gateway,
    image: IMAGE,
    pool: POOL,
    client: placed,
  });
  const error = await assertRejects(() => sandbox.create(), SandboxError);
  assertEquals(error.status, 400);
  assertEquals(error.daemonMessage, "Target only allowed when clustered");
});

Deno.test("IncusClient.wait() throws SandboxTimeoutError when the operation outlasts the wait", async () => {
  // Incus answers a wait that runs out with the running operation or, under
  // load, with "context deadline exceeded": a timeout either way, never a refusal.
  await using gateway = new Gateway();
  await using sandbox = await IncusSandbox.open({ gateway, image: IMAGE, pool: POOL });
  await using instance = await sandbox.create();
  const op = await sandbox.client.request("POST", `/1.0/instances/${instance.containerName}/exec`, {
    json: { command: ["sleep", "4"], "wait-for-websocket": false, "record-output": false },
    timeoutMs: 100,
  }).catch((error) => error);
  // The exec runs in the background: a 100 ms wait for it ran out.
  assert(op instanceof SandboxTimeoutError, `a timeout, not ${op}`);
  assertStringIncludes(op.message, "did not finish within 100 ms");
});

/** Imports the demo site under `alias` as an image of its own (a nonce in its metadata); its fingerprint. */
async function importOwnImage(client: IncusClient, alias: string): Promise<string> {
  const stage = await Deno.makeTempDir({ prefix: "webserv-prune-" });
  try {
    await buildRootfs("fixtures/sites/demo/mod.ts", { out: `${stage}/rootfs` });
    await Deno.writeTextFile(
      `${stage}/metadata.yaml`,
      `architecture: x86_64\ncreation_date: ${Math.floor(Date.now() / 1000)}\n` +
        `properties:\n  description: prune test\n  webserv.nonce: "${crypto.randomUUID()}"\n`,
    );
    const tar = new Deno.Command("tar", {
      args: ["-C", stage, "-cf", "-", "metadata.yaml", "rootfs"],
      stdout: "piped",
    }).spawn();
    const fingerprint = await client.importImage(tar.stdout, alias);
    assert((await tar.status).success, "tar packed the image");
    return fingerprint;
  } finally {
    await Deno.remove(stage, { recursive: true });
  }
}

Deno.test("IncusSandbox.open() removes the bases of a replaced image once no env was copied from them", async () => {
  using client = new IncusClient();
  const basesOf = async (image: string) =>
    (await client.listInstances()).filter((i) =>
      i.config["user.webserv.role"] === "base" && i.config["volatile.base_image"] === image
    ).map((i) => i.name);
  const fingerprint = await importOwnImage(client, "webserv-prunetest");
  const demo = await client.imageFingerprint(IMAGE);
  try {
    await using gateway = new Gateway();
    {
      // A base of the current image, made if no test before made it.
      await using sandbox = await IncusSandbox.open({ gateway, image: IMAGE, pool: POOL });
      await using _instance = await sandbox.create({ seed: 1 });
    }
    {
      await using sandbox = await IncusSandbox.open({
        gateway,
        image: "webserv-prunetest",
        pool: POOL,
      });
      await using _instance = await sandbox.create({ seed: 3 });
      assertEquals((await basesOf(fingerprint)).length, 1, "the env was copied from a base");
      // The image is replaced (deleted) while an env copied from its base lives: the base stays.
      await client.request("DELETE", `/1.0/images/${fingerprint}`);
      await using _other = await IncusSandbox.open({ gateway, image: IMAGE, pool: POOL });
      assertEquals((await basesOf(fingerprint)).length, 1, "an env still comes from it");
    }
    const kept = await basesOf(demo);
    await using _reaped = await IncusSandbox.open({ gateway, image: IMAGE, pool: POOL });
    assertEquals(await basesOf(fingerprint), [], "no env left: the stale base is removed");
    assertEquals(await basesOf(demo), kept, "the current image's bases stay");
    assert(kept.length > 0, "the demo image has a base");
  } finally {
    await client.request("DELETE", `/1.0/images/${fingerprint}`).catch(() => {});
    for (const name of await basesOf(fingerprint)) {
      await client.request("DELETE", `/1.0/instances/${name}`).catch(() => {});
    }
  }
});

/** The names of the instances whose names start with `prefix`. */
async function instancesNamed(client: IncusClient, prefix: string): Promise<string[]> {
  return (await client.listInstances()).map((i) => i.name).filter((n) => n.startsWith(prefix));
}

/** Removes every instance whose name starts with `prefix` (this test's own), and its socket folder. */
async function removeNamed(client: IncusClient, prefix: string): Promise<void> {
  for (const name of await instancesNamed(client, prefix)) {
    await client.changeState(name, "stop", true).catch(() => {});
    await client.request("DELETE", `/1.0/instances/${name}`);
  }
  for await (const entry of Deno.readDir(SOCKET_ROOT)) {
    if (entry.name.startsWith(prefix)) {
      await Deno.remove(`${SOCKET_ROOT}/${entry.name}`, { recursive: true });
    }
  }
}

for (const left of ["stopped", "running"] as const) {
  Deno.test(`IncusSandbox.create() rebuilds a base a killed run left ${left} without its seeded snapshot`, async () => {
    using client = new IncusClient();
    const prefix = `wstakeover${left[0]}-`;
    await removeNamed(client, prefix);
    const fingerprint = await client.imageFingerprint(IMAGE);
    const name = `${prefix}base-demo-7-${POOL.replace(/[^a-zA-Z0-9]/g, "").slice(0, 12)}-${
      fingerprint.slice(0, 12)
    }`;
    try {
      // What a run killed while seeding leaves: the base, made by a process
      // that is gone, and no snapshot.
      await client.request("POST", "/1.0/instances", {
        placed: true,
        json: {
          name,
          type: "container",
          profiles: [],
          source: { type: "image", fingerprint },
          config: {
            "environment.WS_SEED": "7",
            "user.webserv.owner": ownerTag().replace(/\/\d+$/, "/999999999"),
            "user.webserv.role": "base",
          },
          devices: { root: { type: "disk", path: "/", pool: POOL } },
        },
      });
      if (left === "running") await client.changeState(name, "start");
      await using gateway = new Gateway();
      await using sandbox = await IncusSandbox.open({
        gateway,
        image: IMAGE,
        pool: POOL,
        prefix,
        seedTimeoutMs: 120_000,
      });
      await using instance = await sandbox.create({ seed: 7 });
      const response = await gateway.request(instance.origin, "/");
      assertEquals(response.status, 200);
      await response.body?.cancel();
      const base = (await client.listInstances()).find((i) => i.name === name);
      assertEquals(base?.config["user.webserv.owner"], ownerTag(), "this run made the base anew");
      await client.request("GET", `/1.0/instances/${name}/snapshots/seeded`);
    } finally {
      await removeNamed(client, prefix);
    }
  });
}

Deno.test("IncusSandbox.create() waits for a base another live sandbox is making", async () => {
  using client = new IncusClient();
  const prefix = "wstakeoverc-";
  await removeNamed(client, prefix);
  try {
    await using gateway = new Gateway();
    const open = () =>
      IncusSandbox.open({ gateway, image: IMAGE, pool: POOL, prefix, seedTimeoutMs: 120_000 });
    await using one = await open();
    await using two = await open();
    // Both make the same base at once: Incus refuses the second copy by name
    // (in its operation, as a 500), and that run waits for the first's snapshot.
    const [a, b] = await Promise.all([one.create({ seed: 7 }), two.create({ seed: 7 })]);
    await using _a = a;
    await using _b = b;
    assertEquals(
      (await instancesNamed(client, `${prefix}base-`)).length,
      1,
      "one base for both",
    );
  } finally {
    await removeNamed(client, prefix);
  }
});

Deno.test("IncusSandbox.create() is not ready while the site's socket does not listen, though the state socket answers", async () => {
  await using gateway = new Gateway();
  await using sandbox = await IncusSandbox.open({
    gateway,
    image: IMAGE,
    pool: POOL,
    readyTimeoutMs: 8_000,
    // The site listens on TCP inside instead of site.sock, which the gateway
    // uses here: what a relay that never comes up (or comes up late) looks like.
    config: { "environment.WS_SITE_PORT": "8080" },
  });
  const error = await assertRejects(() => sandbox.create(), SandboxTimeoutError);
  assertStringIncludes(error.message, "site.sock");
  assertEquals(sandbox.containerNames, []);
  assertEquals(await leftovers(sandbox.client, new Set()), []);
});
