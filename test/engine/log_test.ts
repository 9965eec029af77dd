// Failures nobody throws are never silent: one JSON line on stderr each by
// default, counted by kind, and WEBSERV_LOG=quiet stops the lines, not the counts.
import { assert, assertEquals, assertStringIncludes } from "@std/assert";
import { bestEffort, failureCounts, logFailure } from "../../engine/log.ts";

const SCRIPT = `
import { bestEffort, failureCounts, logFailure } from ${
  JSON.stringify(import.meta.resolve("../../engine/log.ts"))
};
logFailure('removing the container "env-7"', new Error("busy"));
bestEffort('removing the container "env-8"', Promise.reject(new TypeError("gone")));
const { ConnectionClosedError, TargetClosedError } = await import(${
  JSON.stringify(import.meta.resolve("../../engine/cdp/errors.ts"))
});
const { EnvError } = await import(${
  JSON.stringify(import.meta.resolve("../../engine/env_error.ts"))
});
bestEffort("releasing a handle", Promise.reject(new TargetClosedError("Runtime.releaseObject: Target detached")));
bestEffort("closing a context", Promise.reject(new ConnectionClosedError("Connection closed: transport closed", { byClient: true })));
bestEffort("closing a context", Promise.reject(new Error("wrapped", { cause: new EnvError("closed", "Cannot finish: the env was closed") })));
bestEffort("closing a context", Promise.reject(new ConnectionClosedError("Connection closed: socket closed by the browser")));
await new Promise((resolve) => setTimeout(resolve, 10));
console.log(JSON.stringify(failureCounts()));
`;

/** What the script counts: neither shutdown (the client's close, the env's) is a failure. */
const COUNTS = { "removing the container *": 2, "releasing a handle": 1, "closing a context": 1 };

async function run(env: Record<string, string>): Promise<{ stdout: string; stderr: string }> {
  const { stdout, stderr, success } = await new Deno.Command(Deno.execPath(), {
    args: ["eval", "--ext=ts", SCRIPT],
    env: { WEBSERV_LOG: "", WEBSERV_DEBUG: "", ...env },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const decode = (bytes: Uint8Array) => new TextDecoder().decode(bytes);
  assert(success, decode(stderr));
  return { stdout: decode(stdout), stderr: decode(stderr) };
}

Deno.test("logFailure() writes one structured line per failure to stderr by default and counts it by kind", async () => {
  const { stdout, stderr } = await run({});
  const lines = stderr.trim().split("\n").filter((line) => line.startsWith("[webserv] "));
  assertEquals(lines.length, 3, stderr);
  const first = JSON.parse(lines[0]!.slice("[webserv] ".length));
  assertEquals(first.level, "warn");
  assertEquals(first.kind, "removing the container *");
  assertEquals(first.what, 'removing the container "env-7"');
  assertEquals(first.error, "Error: busy");
  assertStringIncludes(first.stack, "Error: busy");
  assertEquals(JSON.parse(lines[1]!.slice("[webserv] ".length)).error, "TypeError: gone");
  // A connection the browser dropped is a failure; one the client closed, or an env closed, is not.
  assertEquals(
    JSON.parse(lines[2]!.slice("[webserv] ".length)).error,
    "ConnectionClosedError: Connection closed: socket closed by the browser",
  );
  // A closed target is counted, not written: a tab or frame that went is no warning.
  assertEquals(JSON.parse(stdout), COUNTS);
});

Deno.test("WEBSERV_LOG=quiet stops the lines and keeps the counts", async () => {
  const { stdout, stderr } = await run({ WEBSERV_LOG: "quiet" });
  assert(!stderr.includes("[webserv]"), stderr);
  assertEquals(JSON.parse(stdout), COUNTS);
});

Deno.test("logFailure() takes an explicit kind", () => {
  const before = failureCounts()["log-test"] ?? 0;
  logFailure("an internal check", new TypeError("bad"), "log-test");
  bestEffort("nothing fails", Promise.resolve());
  assertEquals(failureCounts()["log-test"], before + 1);
});
