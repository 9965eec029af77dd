// What a shared machine needs of the server: on loopback it answers only to
// loopback names on its port (DNS rebinding) and refuses other origins'
// browser requests; the dashboard serves the
// run directory's files alone; a proposal starts on its own site.
import { assert, assertEquals, assertStringIncludes } from "@std/assert";
import { join } from "node:path";
import { startServer } from "../../../adapters/http/server.ts";
import { siteByName } from "../../../fixtures/sites/mod.ts";
import { seededDatabase } from "../../../fixtures/sites/kit/mod.ts";
import { rawRequest } from "./_hostile.ts";

Deno.test("on loopback the server answers only to loopback names on its port (DNS rebinding: 403)", async () => {
  await using server = await startServer({ port: 0, allowedHosts: ["webserv.test"] });
  const ask = (host: string, extra: string[] = []) =>
    rawRequest(server.port, ["GET /health HTTP/1.1", `host: ${host}`, ...extra]);
  for (const host of ["evil.com", `evil.com:${server.port}`, `127.0.0.1:${server.port + 1}`]) {
    const refused = await ask(host);
    assertEquals(refused.status, 403, host);
    const body = JSON.parse(refused.body);
    assertEquals(body.code, "forbidden-host", host);
    assertStringIncludes(body.message, "--allowed-host");
  }
  for (
    const host of [
      `127.0.0.1:${server.port}`,
      `localhost:${server.port}`,
      `env-7.localhost:${server.port}`,
      `[::1]:${server.port}`,
      "webserv.test:9000",
    ]
  ) {
    assertEquals((await ask(host)).status, 200, host);
  }
  // A rebinding page's request names its own host: refused before any route runs.
  const created = await rawRequest(
    server.port,
    ["POST /v1/sessions HTTP/1.1", "host: evil.com", "content-type: application/json"],
    JSON.stringify({ site: "demo" }),
  );
  assertEquals(created.status, 403);
  assertEquals(server.sessions.live, 0);
});

Deno.test("a browser request from another origin is refused with 403, the server's own pages are not", async () => {
  await using server = await startServer({ port: 0 });
  for (const origin of ["http://evil.com", "null", `http://localhost:${server.port + 1}`]) {
    const response = await fetch(`${server.url}/v1/sessions`, {
      method: "POST",
      headers: { origin, "content-type": "application/json" },
      body: JSON.stringify({ site: "demo" }),
    });
    assertEquals(response.status, 403, origin);
    const body = await response.json();
    assertEquals(body.code, "forbidden-origin", origin);
    assertStringIncludes(body.message, origin);
  }
  assertEquals(server.sessions.live, 0);
  const own = await fetch(`${server.url}/health`, { headers: { origin: server.url } });
  assertEquals(own.status, 200);
  await own.body?.cancel();
});

Deno.test("the dashboard serves files of the run directory alone (.., absolute paths, symlinks out)", async () => {
  const root = await Deno.makeTempDir();
  const runDir = join(root, "run");
  await Deno.mkdir(runDir);
  const mark = "SECRET-OUTSIDE-THE-RUN";
  await Deno.writeTextFile(
    join(root, "secret.jsonl"),
    JSON.stringify({ type: "end", reason: mark }),
  );
  await Deno.writeFile(join(root, "secret.png"), new TextEncoder().encode(mark));
  await using server = await startServer({ port: 0, runDir });
  await Deno.symlink(join(root, "secret.jsonl"), join(runDir, "s-link.jsonl"));
  await Deno.symlink(join(root, "secret.png"), join(runDir, "screenshots", "link.png"));
  const get = (path: string) => fetch(`${server.url}${path}`);
  for (
    const path of [
      "/dashboard/sessions/..%2Fsecret",
      `/dashboard/sessions/${encodeURIComponent(join(root, "secret"))}`,
      "/dashboard/files/screenshots/..%2F..%2Fsecret.png",
      `/dashboard/files/screenshots/${encodeURIComponent(join(root, "secret.png"))}`,
    ]
  ) {
    const response = await get(path);
    const text = await response.text();
    assertEquals(response.status, 400, `${path}: ${text.slice(0, 200)}`);
    assertEquals(text.includes(mark), false, path);
    assertEquals(JSON.parse(text).code, "bad-name", path);
  }
  const linked = await get("/dashboard/sessions/s-link");
  assertEquals((await linked.text()).includes(mark), false, "a symlink out is not followed");
  const shot = await get("/dashboard/files/screenshots/link.png");
  assertEquals(shot.status, 404);
  assertEquals((await shot.text()).includes(mark), false);
  await server.close();
  await Deno.remove(root, { recursive: true });
});

Deno.test("a proposal's startUrl must be a path on its site: //host, /\\host, a URL are 400 bad-start-url", async () => {
  await using server = await startServer({ port: 0 });
  const db = seededDatabase(siteByName("forum"), 4);
  const forum = db.prepare("SELECT id, slug FROM forums ORDER BY id LIMIT 1").get()!;
  const proposal = (startUrl: string) => ({
    site: "forum",
    seed: 4,
    instruction: `How many members does the forum f/${forum["slug"]} have? (${startUrl})`,
    startUrl,
    read: { table: "subscriptions", where: { forum_id: Number(forum["id"]) }, count: true },
    op: "number",
  });
  const post = (body: unknown) =>
    fetch(`${server.url}/v1/tasks/proposals`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });
  for (
    const startUrl of [
      "/\\evil.com",
      "//evil.com",
      "https://evil.com",
      "\\\\evil.com",
      "/\t/evil.com",
      "/%2F%2Fevil.com",
    ]
  ) {
    const refused = await post(proposal(startUrl));
    const body = await refused.json();
    assertEquals([refused.status, body.code], [400, "bad-start-url"], startUrl);
    assertStringIncludes(body.message, "path on the site");
  }
  const accepted = await post(proposal("/"));
  assertEquals(accepted.status, 201);
  await accepted.body?.cancel();
});

Deno.test("serve.ts --allowed-host adds names the server answers to", async () => {
  const serve = new URL("../../../adapters/http/serve.ts", import.meta.url).pathname;
  const runDir = await Deno.makeTempDir();
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--allow-all",
      serve,
      "--port",
      "0",
      "--run-dir",
      runDir,
      "--allowed-host",
      "webserv.test",
      "--allowed-host",
      "tunnel.test:9000",
    ],
    stdout: "piped",
    stderr: "null",
  }).spawn();
  const timer = setTimeout(() => child.kill("SIGKILL"), 60_000);
  try {
    const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
    let printed = "";
    while (!printed.includes("trajectories in")) {
      const { value, done } = await reader.read();
      if (done) break;
      printed += value;
    }
    const port = Number(printed.match(/on http:\/\/127\.0\.0\.1:(\d+)/)?.[1]);
    assert(port > 0, printed);
    const status = async (host: string) =>
      (await rawRequest(port, ["GET /health HTTP/1.1", `host: ${host}`])).status;
    assertEquals(await status("webserv.test:8123"), 200);
    assertEquals(await status("tunnel.test:9000"), 200);
    assertEquals(await status("tunnel.test:9001"), 403);
    assertEquals(await status("evil.com"), 403);
    child.kill("SIGINT");
    await reader.cancel();
    assertEquals((await child.status).code, 0);
  } finally {
    clearTimeout(timer);
    await Deno.remove(runDir, { recursive: true });
  }
});
