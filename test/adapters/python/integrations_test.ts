// webserv.integrations under the frameworks' own code (the fourth venv
// .ci/python.sh makes): Agent Lightning's Trainer.dev, ART's
// gather_trajectory_groups and rLLM's model gateway, each driving the
// harness-native flow against a real server with the scripted model server
// standing in for the model: solvable 1, wrong 0, a server killed mid-episode
// a failure with no reward.
import { startServer } from "../../../adapters/http/server.ts";
import { HARNESS_VENV, pytest } from "./_venv.ts";

Deno.test("webserv.integrations earn the verifier's reward in Agent Lightning, ART and rLLM's gateway", async () => {
  await using server = await startServer({ port: 0, maxSessions: 8 });
  await pytest(
    ["test_rllm.py", "test_art.py", "test_agent_lightning.py"],
    { WEBSERV_URL: server.url },
    ["-v"],
    HARNESS_VENV,
  );
});
