// webserv.client and webserv.aio keep connections alive: a session's steps
// share one, a connection the server dropped is reopened (test_connections.py).
import { startServer } from "../../../adapters/http/server.ts";
import { pytest } from "./_venv.ts";

Deno.test("the Python clients step a session on one kept-alive connection and reopen a dropped one", async () => {
  // The guard cuts a connection that passes no byte for this long, a request
  // awaiting its answer included: long enough for a session to open under load.
  await using server = await startServer({ port: 0, connectionIdleTimeoutMs: 6_000 });
  await pytest(["test_connections.py"], { WEBSERV_URL: server.url, WEBSERV_CONN_IDLE_S: "6" });
});
