// A shutdown we asked for (the browser, an env, its context being closed)
// writes no warning and counts no failure, wherever it cuts a call short:
// the settle's render barrier, the context pool's set-up of a page. A browser
// lost while nothing closed it still warns and counts. Each case runs
// `_shutdown_scenario.ts` in a process of its own (the log level is read once
// per process), and again at the debug level, which writes the shutdown's
// cut-short calls: proof that the case reached the path it is about.
import { assert, assertEquals } from "@std/assert";

/** One written line of the log. */
interface LogLine {
  level: string;
  kind: string;
  error: string;
}

/** What a scenario's process wrote. */
interface Outcome {
  /** How the env's settle ended, for the settle scenarios. */
  settle?: string;
  /** `failureCounts()` at the end. */
  counts: Record<string, number>;
  /** The `[webserv]` lines on stderr. */
  lines: LogLine[];
  stderr: string;
}

async function scenario(mode: string, level: "" | "debug"): Promise<Outcome> {
  const { stdout, stderr, success } = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--allow-all",
      new URL("./_shutdown_scenario.ts", import.meta.url).pathname,
      mode,
    ],
    env: { WEBSERV_LOG: level, WEBSERV_DEBUG: "" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder().decode(stderr);
  assert(success, text);
  const lines = text.split("\n").filter((line) => line.startsWith("[webserv] "))
    .map((line) => JSON.parse(line.slice("[webserv] ".length)) as LogLine);
  // The last line: at the debug level the errors are printed whole on stdout before it.
  const last = new TextDecoder().decode(stdout).trim().split("\n").at(-1)!;
  const out = JSON.parse(last) as Omit<Outcome, "lines" | "stderr">;
  return { ...out, lines, stderr: text };
}

/** Checks that the quiet run wrote and counted nothing, and that the debug run reached `kinds`. */
async function quietShutdown(mode: string, kinds: string[], error: RegExp): Promise<Outcome> {
  const quiet = await scenario(mode, "");
  assertEquals(quiet.lines, [], quiet.stderr);
  assertEquals(quiet.counts, {});
  const debug = await scenario(mode, "debug");
  assert(debug.lines.length > 0, `the scenario cut no call short:\n${debug.stderr}`);
  for (const line of debug.lines) {
    assertEquals(line.level, "debug", debug.stderr);
    assert(error.test(line.error), line.error);
  }
  for (const kind of kinds) {
    assert(debug.lines.some((line) => line.kind === kind), `no "${kind}" line:\n${debug.stderr}`);
  }
  assertEquals(debug.counts, {});
  return quiet;
}

Deno.test("logFailure() writes no warning when the browser is closed mid-settle", async () => {
  const { settle } = await quietShutdown(
    "settle",
    ["settle barrier"],
    /^ConnectionClosedError: .*transport closed/,
  );
  // The caller still learns that its settle did not finish.
  assertEquals(settle, "EnvError browser-gone");
});

Deno.test("logFailure() writes no warning when the env, then the browser, are closed mid-settle", async () => {
  const { settle } = await quietShutdown(
    "env-then-browser",
    ["settle barrier"],
    /^EnvError: Cannot finish: the env was closed/,
  );
  assertEquals(settle, "EnvError closed");
});

Deno.test("logFailure() writes no warning when the browser is closed while the context pool fills", async () => {
  await quietShutdown(
    "fill",
    ["preparing target *", "initializer on *"],
    /^ConnectionClosedError: .*transport closed/,
  );
});

Deno.test("logFailure() still warns and counts when the browser is killed from outside mid-settle", async () => {
  const killed = await scenario("kill", "");
  assertEquals(killed.settle, "EnvError browser-gone");
  const barrier = killed.lines.filter((line) => line.kind === "settle barrier");
  assert(barrier.length > 0, killed.stderr);
  for (const line of barrier) {
    assertEquals(line.level, "warn");
    assert(line.error.startsWith("ConnectionClosedError: "), line.error);
  }
  assertEquals(killed.counts["settle barrier"], barrier.length);
});
