// `deno task serve` as a user runs it: a subprocess that prints its URLs,
// refuses a public address without a token, and closes every session on SIGINT.
import {
  assert,
  assertEquals,
  assertFalse,
  assertMatch,
  assertRejects,
  assertStringIncludes,
} from "@std/assert";
import { type Backend, startServer } from "../../../adapters/http/server.ts";
import { WebServClient } from "../../../adapters/client/mod.ts";
import { defaultCatalog } from "../../../adapters/http/catalog.ts";

const SERVE = new URL("../../../adapters/http/serve.ts", import.meta.url).pathname;

Deno.test("serve.ts closes every session and exits 0 on SIGINT", async () => {
  const runDir = await Deno.makeTempDir();
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "--allow-all", SERVE, "--port", "0", "--run-dir", runDir],
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let printed = "";
  while (!printed.includes("trajectories in")) {
    const { value, done } = await reader.read();
    if (done) break;
    printed += value;
  }
  const url = printed.match(/on (http:\/\/127\.0\.0\.1:\d+)/)?.[1];
  assert(url, printed);
  assertStringIncludes(printed, `dashboard  ${url}/`);
  assertStringIncludes(printed, `API docs   ${url}/docs`);
  // Which mode the browser runs in (from root, as another user).
  assertMatch(printed, /\n {2}browser {4}(sandboxed, as user \S+|without its sandbox: .+)\n/);
  if (Deno.uid() === 0) assertFalse(printed.includes("as user current"), printed);
  const created = await (await fetch(`${url}/v1/sessions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ task: "demo/add-note/1" }),
  })).json();
  assert(typeof created.id === "string", JSON.stringify(created));
  child.kill("SIGINT");
  while (true) {
    const { value, done } = await reader.read();
    if (done) break;
    printed += value;
  }
  const status = await child.status;
  await child.stderr.cancel();
  assertEquals(status.code, 0, printed);
  assertStringIncludes(printed, "Closed");
  const events = (await Deno.readTextFile(`${runDir}/${created.id}.jsonl`)).trim().split("\n")
    .map((line) => JSON.parse(line));
  assertEquals(events.at(-1).type, "end");
  assertEquals(events.at(-1).reason, "shutdown");
  await Deno.remove(runDir, { recursive: true });
});

/** Live (not zombie) processes whose environment holds `marker`: a server's descendants carry it. */
function processesWithEnv(marker: string): string[] {
  const found: string[] = [];
  for (const entry of Deno.readDirSync("/proc")) {
    if (!/^\d+$/.test(entry.name)) continue;
    try {
      const stat = Deno.readTextFileSync(`/proc/${entry.name}/stat`);
      if (stat.slice(stat.lastIndexOf(")") + 2).startsWith("Z")) continue;
      if (Deno.readTextFileSync(`/proc/${entry.name}/environ`).includes(marker)) {
        found.push(`${entry.name} ${stat.slice(stat.indexOf("("), stat.lastIndexOf(")") + 1)}`);
      }
    } catch {
      // exited while we looked, or not ours to read
    }
  }
  return found;
}

/**
 * SIGKILLs what is left of a server a test ran (its processes carry
 * `marker`): the Deno processes only, so that the browser's watchdog sees
 * its pipe close and removes the browser with its profile, as it is made to.
 */
function reap(marker: string): void {
  for (const line of processesWithEnv(marker)) {
    if (!line.endsWith(" (deno)")) continue;
    try {
      Deno.kill(Number(line.split(" ")[0]), "SIGKILL");
    } catch {
      // already gone
    }
  }
}

/**
 * `deno task serve` (through `setsid`, in a process group of its own like a
 * terminal's foreground job) or serve.ts itself, on port 0, its processes
 * marked with `marker` in their environment.
 */
function spawnServe(viaTask: boolean, runDir: string, marker: string) {
  const args = ["--port", "0", "--run-dir", runDir];
  const child = new Deno.Command(viaTask ? "setsid" : Deno.execPath(), {
    args: viaTask
      ? [Deno.execPath(), "task", "serve", ...args]
      : ["run", "--allow-all", SERVE, ...args],
    cwd: new URL("../../../", import.meta.url).pathname,
    env: { WEBSERV_TEST_MARK: marker.slice(marker.indexOf("=") + 1) },
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let printed = "";
  /** Reads the output until it matches `pattern` (or ends); resolves with all of it. */
  const until = async (pattern?: RegExp) => {
    while (pattern === undefined || !pattern.test(printed)) {
      const { value, done } = await reader.read();
      if (done) break;
      printed += value;
    }
    return printed;
  };
  return { child, until };
}

for (const viaTask of [false, true]) {
  const what = viaTask ? "deno task serve" : "serve.ts";
  Deno.test(`${what} closes in order on two quick SIGINTs: exit 0, the trajectory ended, no browser left`, async () => {
    const runDir = await Deno.makeTempDir();
    const marker = `WEBSERV_TEST_MARK=${crypto.randomUUID()}`;
    try {
      const { child, until } = spawnServe(viaTask, runDir, marker);
      const started = await until(/trajectories in/);
      const url = started.match(/on (http:\/\/127\.0\.0\.1:\d+)/)?.[1];
      assert(url, started);
      const created = await (await fetch(`${url}/v1/sessions`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ task: "demo/add-note/1" }),
      })).json();
      assert(typeof created.id === "string", JSON.stringify(created));
      // The server's processes, the browser's among them, carry the marker.
      const before = processesWithEnv(marker);
      assert(before.some((line) => line.includes("chrom")), `no browser found: ${before}`);
      // Ctrl-C twice, as a hurried user does: the second once the close began
      // (sent together, the two would merge into one pending signal). A
      // terminal signals its whole foreground group.
      const signal = () => viaTask ? Deno.kill(-child.pid, "SIGINT") : child.kill("SIGINT");
      signal();
      await until(/closing every session/);
      signal();
      const printed = await until();
      const status = await child.status;
      const errors = await new Response(child.stderr).text();
      assertEquals(status.code, 0, `${printed}\n${errors}`);
      assertStringIncludes(printed, "Closed");
      const events = (await Deno.readTextFile(`${runDir}/${created.id}.jsonl`)).trim().split("\n")
        .map((line) => JSON.parse(line));
      assertEquals(events.at(-1).type, "end");
      assertEquals(events.at(-1).reason, "shutdown");
      assertEquals(processesWithEnv(marker), [], "processes of the server outlived it");
    } finally {
      reap(marker);
      await Deno.remove(runDir, { recursive: true });
    }
  });
}

Deno.test("serve.ts stopped while it starts closes once started: exit 0, no process left", async () => {
  const runDir = await Deno.makeTempDir();
  const marker = `WEBSERV_TEST_MARK=${crypto.randomUUID()}`;
  try {
    const { child, until } = spawnServe(false, runDir, marker);
    // Signals are handled from the start (the browser and sandboxes start after this line).
    const first = await until(/Starting|trajectories in/);
    assertStringIncludes(first, "Starting", "no line says the server is starting");
    child.kill("SIGINT");
    const printed = await until();
    const status = await child.status;
    const errors = await new Response(child.stderr).text();
    assertEquals(status.code, 0, `${printed}\n${errors}`);
    assertStringIncludes(printed, "Closed");
    assertEquals(processesWithEnv(marker), [], "processes of the server outlived it");
  } finally {
    reap(marker);
    await Deno.remove(runDir, { recursive: true });
  }
});

/** Runs serve.ts with `args` until it exits: its exit code and what it printed. */
async function runServe(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["run", "--allow-all", SERVE, ...args],
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder();
  return {
    code: output.code,
    stdout: text.decode(output.stdout),
    stderr: text.decode(output.stderr),
  };
}

Deno.test("serve.ts refuses a non-loopback host without a token", async () => {
  const output = await runServe(["--host", "0.0.0.0", "--port", "0"]);
  assertEquals(output.code, 1);
  assertStringIncludes(output.stderr, "without a bearer token");
});

Deno.test("startServer() takes the next free port after 8800 when no port is given", async () => {
  let blocker: Deno.HttpServer | undefined;
  try {
    blocker = Deno.serve(
      { hostname: "127.0.0.1", port: 8800, onListen() {} },
      () => new Response(),
    );
  } catch {
    // Someone else holds 8800 already; that blocks it just as well.
  }
  try {
    await using server = await startServer();
    assert(server.port > 8800 && server.port < 8900, String(server.port));
  } finally {
    await blocker?.shutdown();
  }
});

Deno.test("serve.ts refuses an unknown backend, naming the backends", async () => {
  const output = await runServe(["--backend", "kubernetes", "--port", "0"]);
  assertEquals(output.code, 2);
  assertStringIncludes(
    output.stderr,
    'Backend "kubernetes" is not one of "fixture", "incus", "docker", "shared"',
  );
});

Deno.test("serve.ts --help names the shared backend and the sites it serves", async () => {
  const output = await runServe(["--help"]);
  assertEquals(output.code, 0);
  const help = output.stdout;
  assertStringIncludes(help, "--backend fixture|incus|docker|shared");
  assertStringIncludes(help, "shared (wordpress, mediawiki, redmine only");
});

Deno.test("startServer() refuses an unknown backend, naming the backends", async () => {
  const error = await assertRejects(
    () => startServer({ port: 0, backend: "kubernetes" as Backend }),
    RangeError,
  );
  assertStringIncludes(error.message, '"fixture", "incus", "docker", "shared"');
});

Deno.test("startServer() on shared refuses to warm a site without a shared runtime", async () => {
  for (const entry of ["shop/1", "forum/2", "demo/0"]) {
    const error = await assertRejects(
      () => startServer({ port: 0, backend: "shared", warm: [entry] }),
      RangeError,
    );
    assertStringIncludes(error.message, `Cannot warm "${entry}"`);
    assertStringIncludes(
      error.message,
      'the shared backend serves ("wordpress", "mediawiki", "redmine")',
    );
  }
});

Deno.test("startServer() on shared lists only the shared-runtime sites and refuses the others", async () => {
  // No Incus call is made: the catalog refuses before any sandbox opens.
  await using server = await startServer({ port: 0, backend: "shared" });
  const client = new WebServClient(server.url);
  for (const site of ["wordpress", "mediawiki", "redmine"]) {
    const tasks = await client.tasks({ site, limit: 100 });
    assert(tasks.length > 0 && tasks.every((task) => task.site === site), site);
  }
  const tasks = await client.tasks({ limit: 100 });
  assert(tasks.every((task) => ["wordpress", "mediawiki", "redmine"].includes(task.site)));
  const shop = await fetch(`${server.url}/v1/tasks?site=shop`);
  assertEquals(shop.status, 404);
  assertStringIncludes(
    (await shop.json()).message,
    'the sites are "wordpress", "mediawiki", "redmine"',
  );
  for (const body of [{ task: "demo/add-note/1" }, { task: "shop/any-template/1" }]) {
    const response = await fetch(`${server.url}/v1/sessions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    const refusal = await response.json() as { code: string; message: string };
    assertEquals(response.status, 404, JSON.stringify(refusal));
    assertEquals(refusal.code, "unknown-site");
    assertStringIncludes(refusal.message, 'the sites are "wordpress", "mediawiki", "redmine"');
  }
  assertEquals(server.sessions.live, 0);
});

Deno.test("startServer() on shared refuses a site without a shared runtime from a catalog of its own", async () => {
  // A caller's catalog may hold any site: the backend still refuses, typed, before Incus.
  await using server = await startServer({ port: 0, backend: "shared", catalog: defaultCatalog() });
  const response = await fetch(`${server.url}/v1/sessions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ task: "demo/add-note/1" }),
  });
  const refusal = await response.json() as { code: string; message: string };
  assertEquals(response.status, 400, JSON.stringify(refusal));
  assertEquals(refusal.code, "no-shared-runtime");
  assertStringIncludes(refusal.message, 'Site "demo" has no shared runtime');
  assertStringIncludes(refusal.message, '"wordpress", "mediawiki", "redmine"');
});
