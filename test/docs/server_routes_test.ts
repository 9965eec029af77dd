// docs/server.md lists every route the rollout server mounts, and nothing
// it does not: the routes come from the running server (its OpenAPI
// document, and a probe of each documented path) and from the route
// declarations in adapters/http, so a route added, moved or removed without
// its line in the page fails here.
import { assert, assertEquals } from "@std/assert";
import { startServer } from "../../adapters/http/mod.ts";

const ROOT = new URL("../../", import.meta.url);
const PAGE = new URL("docs/server.md", ROOT);
/** Methods the server answers; PATCH is none of them, so it probes what a path serves. */
const METHODS = ["GET", "POST", "PUT", "DELETE"];

/** `METHOD /path` from the page's route table (`| GET | \`/health\` | … |`). */
function documentedRoutes(page: string): Set<string> {
  const routes = new Set<string>();
  for (const match of page.matchAll(/^\|\s*(GET|POST|PUT|DELETE|PATCH)\s*\|\s*`([^`]+)`\s*\|/gm)) {
    routes.add(`${match[1]} ${match[2]}`);
  }
  return routes;
}

/** Paths declared with a literal in adapters/http (`app.get("/ws", …)`), as OpenAPI writes them. */
function declaredPaths(): Set<string> {
  const paths = new Set<string>();
  const walk = (dir: URL) => {
    for (const entry of Deno.readDirSync(dir)) {
      const url = new URL(entry.name + (entry.isDirectory ? "/" : ""), dir);
      if (entry.isDirectory) walk(url);
      else if (entry.name.endsWith(".ts")) {
        const source = Deno.readTextFileSync(url);
        for (const match of source.matchAll(/\.(?:get|post|put|delete)\(\s*"(\/[^"]*)"/g)) {
          paths.add(match[1]!.replace(/:(\w+)/g, "{$1}"));
        }
      }
    }
  };
  walk(new URL("adapters/http/", ROOT));
  return paths;
}

Deno.test("docs/server.md lists every route the server mounts, each with the methods it serves", async () => {
  const documented = documentedRoutes(await Deno.readTextFile(PAGE));
  assert(documented.size > 30, `only ${documented.size} routes found in docs/server.md's table`);
  const documentedPaths = new Set([...documented].map((route) => route.split(" ")[1]!));
  await using server = await startServer({ port: 0, maxSessions: 1 });

  // Every route of the OpenAPI document is on the page.
  const openapi = await (await fetch(`${server.url}/openapi.json`)).json() as {
    paths: Record<string, Record<string, unknown>>;
  };
  const inDocument = Object.entries(openapi.paths).flatMap(([path, operations]) =>
    Object.keys(operations).map((method) => `${method.toUpperCase()} ${path}`)
  );
  assert(inDocument.length > 20, `only ${inDocument.length} routes in /openapi.json`);
  assertEquals(inDocument.filter((route) => !documented.has(route)), [], "missing from the page");

  // Every path declared by a literal in the source is on the page.
  assertEquals(
    [...declaredPaths()].filter((path) => !documentedPaths.has(path)),
    [],
    "declared in adapters/http but missing from the page",
  );

  // Every documented path is served, under exactly the documented methods:
  // a method no route uses gets 405 with the path's methods in Allow.
  const wrong: string[] = [];
  for (const path of documentedPaths) {
    const concrete = path.replace(/\{[^}]+\}/g, "x");
    const response = await fetch(`${server.url}${concrete}`, { method: "PATCH" });
    await response.body?.cancel();
    const allowed = (response.headers.get("allow") ?? "").split(/,\s*/)
      .filter((method) => METHODS.includes(method)).sort();
    const expected = METHODS.filter((method) => documented.has(`${method} ${path}`)).sort();
    if (response.status !== 405 || allowed.join() !== expected.join()) {
      wrong.push(
        `${path}: page says ${expected.join(", ")}; server answered ${response.status} ${
          allowed.join(", ") || "(no Allow)"
        }`,
      );
    }
  }
  assertEquals(wrong, [], "routes on the page that the server does not serve so");
});
