// OpenEnv's current client (openenv 0.10.0, in the second venv .ci/python.sh
// makes): MCPToolClient's session handshake over /mcp driving the session
// its WebSocket resets, and AutoEnv's discovery of the installed package.
import { startServer } from "../../../adapters/http/server.ts";
import { OPENENV_VENV, pytest } from "./_venv.ts";

Deno.test("openenv 0.10 MCPToolClient and AutoEnv work against the server", async () => {
  await using server = await startServer({ port: 0, maxSessions: 4 });
  await pytest(["test_openenv10.py"], { WEBSERV_URL: server.url }, ["-v"], OPENENV_VENV);
});
