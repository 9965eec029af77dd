/**
 * A stand-in for a real application's image in shared-runtime mode, small
 * enough to build in seconds (the WordPress image takes minutes): with
 * `WS_SHARED=1` its module's top level serves the control API the host's
 * `SharedRuntimeSandbox` speaks (`kit/shared_runtime.ts`'s routes) on
 * `/run/ws/control.sock`, as root, and makes each env's folder
 * `/run/ws/env-KEY/` with a site relay and a state server in it, as the real
 * control does; otherwise it is a plain site. Built into an image by
 * `test/sandboxes/incus/shared_runtime_hostile_test.ts`.
 *
 * @module
 */
import type { Site } from "../../../sandboxes/types.ts";

const ROOT = "/run/ws";

function serve(path: string, handler: (request: Request) => Response | Promise<Response>) {
  try {
    Deno.removeSync(path);
  } catch {
    // absent
  }
  const server = Deno.serve({ path, onListen() {} }, handler);
  Deno.chmodSync(path, 0o777);
  return server;
}

if (Deno.env.get("WS_SHARED") === "1") {
  const envs = new Map<string, Deno.HttpServer[]>();
  let slot = 0;
  const answer = () => Response.json({ source: "spare", slot: slot++, ms: 1 });
  serve(`${ROOT}/control.sock`, async (request) => {
    const route = `${request.method} ${new URL(request.url).pathname}`;
    if (route === "GET /healthz") {
      return Response.json({ envs: envs.size, spares: 0, sparesLost: 0 });
    }
    if (route === "POST /spares") return Response.json({});
    if (route === "POST /envs") {
      const { key } = await request.json() as { key: string };
      const folder = `${ROOT}/env-${key}`;
      Deno.mkdirSync(folder, { recursive: true, mode: 0o777 });
      envs.set(key, [
        serve(`${folder}/site.sock`, () => new Response(`the site of ${key}`)),
        serve(
          `${folder}/state.sock`,
          (state) =>
            new URL(state.url).pathname === "/views"
              ? Response.json({ views: 0, key })
              : new Response("ok"),
        ),
      ]);
      return answer();
    }
    const reset = /^POST \/envs\/([a-z0-9]+)\/reset$/.exec(route);
    if (reset?.[1] && envs.has(reset[1])) return answer();
    const destroy = /^DELETE \/envs\/([a-z0-9]+)$/.exec(route);
    if (destroy?.[1]) {
      for (const server of envs.get(destroy[1]) ?? []) await server.shutdown();
      envs.delete(destroy[1]);
      try {
        Deno.removeSync(`${ROOT}/env-${destroy[1]}`, { recursive: true });
      } catch {
        // gone already (a test moved it)
      }
      return Response.json({ gone: true });
    }
    return Response.json({ error: `no route "${route}"` }, { status: 404 });
  });
  // The control is the container's one job: the plain site never starts.
  await new Promise(() => {});
}

/** The plain site: not used by the test, but an image needs one. */
const site: Site = {
  name: "sharedfake",
  seed(db) {
    db.exec("CREATE TABLE t (x INTEGER)");
  },
  app() {
    return () => new Response("sharedfake");
  },
  state() {
    return () => new Response("ok");
  },
};
export default site;
