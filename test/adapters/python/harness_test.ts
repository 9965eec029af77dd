// The harness-native flow (webserv.harness) against a real server and the
// scripted model server (webserv.scripted_model, a real OpenAI-compatible
// HTTP server standing in for a model): solvable → 1, wrong → 0, each
// prompt a strict extension of the last, a dead endpoint or a server killed
// mid-episode an error.
import { startServer } from "../../../adapters/http/server.ts";
import { pytest } from "./_venv.ts";

Deno.test("webserv.harness rollout() earns the verifier's reward and raises on infrastructure failures", async () => {
  await using server = await startServer({ port: 0, maxSessions: 4 });
  await pytest(["test_harness.py"], { WEBSERV_URL: server.url }, ["-v"]);
});
