// Forking from Python (webserv's clients, WebServEnv, the gymnasium env): test_fork.py against a
// real server, whose cap the capacity refusal reaches.
import { startServer } from "../../../adapters/http/server.ts";
import { pytest } from "./_venv.ts";

const MAX_SESSIONS = 3;

Deno.test("webserv's Python fork carries the live episode, isolates the copies and types its refusals", async () => {
  await using server = await startServer({ port: 0, maxSessions: MAX_SESSIONS });
  await pytest(["test_fork.py"], {
    WEBSERV_URL: server.url,
    WEBSERV_MAX_SESSIONS: String(MAX_SESSIONS),
  }, ["-v"]);
});
