// The gymnasium env (adapters/python/webserv/gym.py) with gymnasium from PyPI,
// in the venv .ci/python.sh makes: test_gym.py against a real server.
import { startServer } from "../../../adapters/http/server.ts";
import { pytest } from "./_venv.ts";
import { faultHooks } from "./_faults.ts";

Deno.test("WebServGymEnv passes check_env, wraps, vectorises, is deterministic and raises our failures", async () => {
  await using server = await startServer({ port: 0, maxSessions: 6 });
  await using faults = faultHooks(server);
  await pytest(["test_gym.py"], { WEBSERV_URL: server.url, WEBSERV_FAULTS: faults.url });
});
