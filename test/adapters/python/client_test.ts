// webserv.client's deadline, retries and network errors, run by pytest in
// the venv .ci/python.sh makes (test_client.py).
import { startServer } from "../../../adapters/http/server.ts";
import { pytest } from "./_venv.ts";

Deno.test("WebServClient honours Retry-After with bounded retries, a deadline, and one network error", async () => {
  await using server = await startServer({ port: 0, maxSessions: 1 });
  await pytest(["test_client.py"], { WEBSERV_URL: server.url });
});
