import {
  assert,
  assertEquals,
  assertRejects,
  assertStringIncludes,
  assertThrows,
} from "@std/assert";
import { SandboxError } from "../../../sandboxes/errors.ts";
import { Gateway } from "../../../sandboxes/gateway.ts";
import { IncusClient } from "../../../sandboxes/incus/client.ts";
import { IncusSandbox } from "../../../sandboxes/incus/incus_sandbox.ts";

const HTTPS_ADDRESS = "127.0.0.1:8443";
const POOL = Deno.env.get("WEBSERV_INCUS_POOL") ?? "webserv-btrfs";

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
  await local.request("PATCH", "/1.0", {
    json: { config: { "core.https_address": HTTPS_ADDRESS } },
  });
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

Deno.test("IncusClient() throws TypeError when a remote url has no client certificate", () => {
  assertThrows(
    () => new IncusClient({ url: `https://${HTTPS_ADDRESS}` }),
    TypeError,
  );
});

Deno.test("IncusClient.request() throws SandboxError with Incus's message when the path is unknown", async () => {
  using incus = new IncusClient();
  const error = await assertRejects(
    () => incus.request("GET", "/1.0/instances/webserv-no-such-instance"),
    SandboxError,
  );
  assertEquals(error.status, 404);
  assertStringIncludes(error.daemonMessage, "not found");
});

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
