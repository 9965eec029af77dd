// Test-only hooks for the Python tests: /kill/{id} destroys a session's
// sandbox instance (an env_error on its next step), /expire/{id} closes the
// session as the reaper does.
import type { RolloutServer } from "../../../adapters/http/server.ts";

/**
 * Serves the hooks on loopback.
 *
 * @param server the rollout server
 * @returns the hooks' base URL; dispose to stop
 */
export function faultHooks(server: RolloutServer): AsyncDisposable & { url: string } {
  const hooks = Deno.serve(
    { port: 0, hostname: "127.0.0.1", onListen() {} },
    async (req) => {
      const [, what, id = ""] = new URL(req.url).pathname.split("/");
      if (what === "kill") await server.sessions.instance(id)?.destroy();
      else await server.sessions.close(id, "idle");
      return new Response(what);
    },
  );
  return {
    url: `http://127.0.0.1:${hooks.addr.port}`,
    [Symbol.asyncDispose]: () => hooks.shutdown(),
  };
}
