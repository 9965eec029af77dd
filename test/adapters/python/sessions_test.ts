// Sessions that outlive a training loop (webserv.env, webserv.keepalive, the
// capacity wait, the TRL factory's close): test_sessions.py against a server
// whose idle timeout is shorter than the loop's pauses and whose cap is
// smaller than its batch.
import { startServer } from "../../../adapters/http/server.ts";
import { pytest } from "./_venv.ts";

const IDLE_S = 2;
const MAX_SESSIONS = 3;

Deno.test("webserv sessions survive pauses past the idle timeout, revive when reaped, and wait for capacity", async () => {
  await using server = await startServer({
    port: 0,
    maxSessions: MAX_SESSIONS,
    idleTimeoutMs: IDLE_S * 1000,
  });
  await pytest(["test_sessions.py", "test_aio.py"], {
    WEBSERV_URL: server.url,
    WEBSERV_IDLE_S: String(IDLE_S),
    WEBSERV_MAX_SESSIONS: String(MAX_SESSIONS),
  }, ["-v"]);
});
