// The Open Reward Standard, tested with its own client (ors-sdk from PyPI, in
// the venv .ci/python.sh makes): test_ors.py against a real server.
import { assertEquals } from "@std/assert";
import { startServer } from "../../../adapters/http/server.ts";
import { pytest } from "./_venv.ts";
import { faultHooks } from "./_faults.ts";

const TOKEN_TEST = "test_the_servers_token_is_the_clients_api_key";

Deno.test("ORS's client lists tasks, runs episodes and raises our failures", async () => {
  await using server = await startServer({ port: 0, maxSessions: 4 });
  await using faults = faultHooks(server);
  await pytest(["test_ors.py"], { WEBSERV_URL: server.url, WEBSERV_FAULTS: faults.url }, [
    "-k",
    `not ${TOKEN_TEST}`,
  ]);
  assertEquals(server.sessions.live, 0, "an ORS session was left open");
});

Deno.test("ORS's client sends the server's token as its api_key", async () => {
  await using server = await startServer({ port: 0, maxSessions: 2, token: "s3cret" });
  await pytest(["test_ors.py"], { WEBSERV_URL: server.url, WEBSERV_TOKEN: "s3cret" }, [
    "-k",
    TOKEN_TEST,
  ]);
  assertEquals(server.sessions.live, 0, "an ORS session was left open");
});
