// WebServ's verifiers taskset (webserv_verifiers, verifiers 0.4.0 in the third
// venv .ci/python.sh makes) under verifiers' own evaluation loop (vf-eval, its
// null chat harness, interception server and MCP tool server) against the
// scripted model server: solvable rollouts earn 1, wrong ones 0, a server
// killed mid-episode errs the rollout with no reward, and splits are by
// template.
import { startServer } from "../../../adapters/http/server.ts";
import { pytest, VERIFIERS_VENV } from "./_venv.ts";

Deno.test("webserv_verifiers taskset earns the verifier's reward in vf-eval and errs on infrastructure failures", async () => {
  await using server = await startServer({ port: 0, maxSessions: 8 });
  await pytest(["test_verifiers.py"], { WEBSERV_URL: server.url }, ["-v"], VERIFIERS_VENV);
});
