// The Python client and its example, run by python3 against the real server.
import { assertEquals, assertStringIncludes } from "@std/assert";
import { startServer } from "../../../adapters/http/server.ts";

const PYTHON_DIR = new URL("../../../adapters/python/", import.meta.url).pathname;

async function python(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const output = await new Deno.Command("python3", {
    args,
    cwd: PYTHON_DIR,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const decode = (bytes: Uint8Array) => new TextDecoder().decode(bytes);
  return { code: output.code, stdout: decode(output.stdout), stderr: decode(output.stderr) };
}

Deno.test("example_episode.py ends with the final reward 1 when its scripted policy solves the task", async () => {
  await using server = await startServer({ port: 0 });
  const { code, stdout, stderr } = await python(["example_episode.py", "--server", server.url]);
  assertEquals(code, 0, stderr);
  assertStringIncludes(stdout, "batch: ['ok', 'ok']");
  const lines = stdout.trim().split("\n");
  assertEquals(lines.at(-1), "1.0", stdout);
  assertEquals(server.sessions.live, 0);
});

Deno.test("WebServEnv places a new session on the server with free capacity", async () => {
  await using full = await startServer({ port: 0, maxSessions: 1 });
  await using roomy = await startServer({ port: 0, maxSessions: 4 });
  await full.sessions.create({ site: "demo" });
  const script = `
from webserv import WebServEnv, WebServError, place
env = WebServEnv([${JSON.stringify(full.url)}, ${JSON.stringify(roomy.url)}], site="demo")
obs, info = env.reset()
print(env.client.url)
obs, reward, done, info = env.step({"action": "click", "id": 999})
print(info["status"], reward, info["error"]["code"])
env.close()
try:
    place([${JSON.stringify(full.url)}])
except WebServError as error:
    print("refused", error.status)
`;
  const { code, stdout, stderr } = await python(["-c", script]);
  assertEquals(code, 0, stderr);
  assertEquals(stdout.trim().split("\n"), [
    roomy.url,
    "action_error 0.0 unknown-id",
    "refused 429",
  ]);
});
