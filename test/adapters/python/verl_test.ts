// webserv.integrations.verl under verl's own agent-loop worker
// (AgentLoopWorker.generate_sequences, the agent loop built by name from an
// agent-loop config file) with the scripted model server as the endpoint,
// against a real server: solvable 1, wrong 0, a server killed mid-episode a
// failed batch with no reward. Runs in the verl venv (WEBSERV_VERL_VENV).
import { startServer } from "../../../adapters/http/server.ts";
import { pytest, VERL_VENV } from "./_venv.ts";

Deno.test("webserv.integrations.verl earns the verifier's reward in verl's agent-loop worker", async () => {
  await using server = await startServer({ port: 0, maxSessions: 8 });
  await pytest(["test_verl.py"], { WEBSERV_URL: server.url }, ["-v"], VERL_VENV);
});
