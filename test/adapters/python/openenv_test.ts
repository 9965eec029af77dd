// OpenEnv parity, tested with OpenEnv's own client (openenv-core from PyPI, in
// the venv .ci/python.sh makes): test_openenv.py against a real server.
import { startServer } from "../../../adapters/http/server.ts";
import { pytest } from "./_venv.ts";
import { faultHooks } from "./_faults.ts";

Deno.test("OpenEnv's GenericEnvClient, AutoEnv and validator run against the server", async () => {
  await using server = await startServer({ port: 0, maxSessions: 4 });
  await using faults = faultHooks(server);
  await pytest(["test_openenv.py"], {
    WEBSERV_URL: server.url,
    WEBSERV_FAULTS: faults.url,
  });
});
