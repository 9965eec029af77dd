// webserv.trl.WebServToolEnv in TRL's environment_factory shape, with
// transformers' get_json_schema from PyPI (TRL's own tool-schema builder);
// TRL's trainer itself runs in `deno task test:trl` (its own venv, with torch).
import { startServer } from "../../../adapters/http/server.ts";
import { pytest } from "./_venv.ts";
import { faultHooks } from "./_faults.ts";

Deno.test("WebServToolEnv's tools build with get_json_schema and a scripted rollout earns the reward", async () => {
  await using server = await startServer({ port: 0, maxSessions: 3 });
  await using faults = faultHooks(server);
  await pytest(["test_trl.py"], { WEBSERV_URL: server.url, WEBSERV_FAULTS: faults.url });
});
