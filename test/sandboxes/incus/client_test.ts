import { assertEquals, assertRejects, assertStringIncludes, assertThrows } from "@std/assert";
import { SandboxError } from "../../../sandboxes/errors.ts";
import { IncusClient } from "../../../sandboxes/incus/client.ts";

// The HTTPS tests live in incus_sandbox_test.ts: API traffic over HTTPS
// while another test file starts instances makes Incus's start hooks time
// out, so every test that talks to incusd stays in one file, run in order.

Deno.test("IncusClient() throws TypeError when a remote url has no client certificate", () => {
  assertThrows(
    () => new IncusClient({ url: "https://127.0.0.1:8443" }),
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
