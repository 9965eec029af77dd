// OpenEnv parity, tested with OpenEnv's own client (openenv-core from PyPI, in
// the venv .ci/python.sh makes): test_openenv.py against a real server.
import { startServer } from "../../../adapters/http/server.ts";
import { pytest } from "./_venv.ts";

Deno.test("OpenEnv's GenericEnvClient, AutoEnv and validator run against the server", async () => {
  await using server = await startServer({ port: 0, maxSessions: 4 });
  // A test-only hook: kills a session's sandbox instance, for the env_error test.
  await using faults = Deno.serve(
    { port: 0, hostname: "127.0.0.1", onListen() {} },
    async (req) => {
      const id = new URL(req.url).pathname.split("/").pop() ?? "";
      await server.sessions.instance(id)?.destroy();
      return new Response("killed");
    },
  );
  await pytest(["test_openenv.py"], {
    WEBSERV_URL: server.url,
    WEBSERV_FAULTS: `http://127.0.0.1:${faults.addr.port}`,
  });
});
