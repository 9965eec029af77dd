// webserv.nemo_gym's resources server (NeMo Gym's contract: /seed_session,
// one route per tool, /verify with the reward's components) driven by a NeMo
// Gym client, verifiers' NeMo Gym taskset under vf-eval (the verifiers venv),
// with the scripted model server: solvable 1, wrong 0, a server killed
// mid-episode an errored rollout with no reward.
import { startServer } from "../../../adapters/http/server.ts";
import { pytest, VERIFIERS_VENV } from "./_venv.ts";

Deno.test("webserv.nemo_gym resources server earns the verifier's reward under a NeMo Gym client", async () => {
  await using server = await startServer({ port: 0, maxSessions: 8 });
  await pytest(["test_nemo_gym.py"], { WEBSERV_URL: server.url }, ["-v"], VERIFIERS_VENV);
});
