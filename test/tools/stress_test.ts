// tools/stress.ts: the commands' exit code passes through; with
// WEBSERV_STRESS the burners run beside the commands and are gone after them,
// also when the wrapper itself is killed.
import { assert, assertEquals, assertFalse } from "@std/assert";
import { stressWanted } from "../../tools/stress.ts";
import { waitFor } from "../_util/wait.ts";

const STRESS = new URL("../../tools/stress.ts", import.meta.url).pathname;

/** Whether a process runs: listed and not a zombie waiting to be reaped. */
function alive(pid: number): boolean {
  try {
    const stat = Deno.readTextFileSync(`/proc/${pid}/stat`);
    return stat.slice(stat.lastIndexOf(")") + 2)[0] !== "Z";
  } catch {
    return false;
  }
}

/** A command for the wrapper to run: prints the burners' pids, its own, then runs `then`. */
function reporter(then: string): string[] {
  return [
    Deno.execPath(),
    "eval",
    `console.log(JSON.stringify({ burners: (Deno.env.get("WEBSERV_STRESS_PIDS") ?? "")` +
    `.split(",").filter(Boolean).map(Number), self: Deno.pid })); ${then}`,
  ];
}

function wrapper(env: Record<string, string>, command: string[]): Deno.ChildProcess {
  return new Deno.Command(Deno.execPath(), {
    args: ["run", "--allow-all", STRESS, "--", ...command],
    // Empty: this test may itself run under a stress wrapper, which sets it.
    env: { WEBSERV_STRESS_BURNERS: "1", WEBSERV_STRESS_PIDS: "", ...env },
    stdout: "piped",
    stderr: "piped",
  }).spawn();
}

async function firstLine(stream: ReadableStream<Uint8Array>): Promise<string> {
  const reader = stream.pipeThrough(new TextDecoderStream()).getReader();
  let text = "";
  while (!text.includes("\n")) {
    const { value, done } = await reader.read();
    if (done) break;
    text += value;
  }
  reader.releaseLock();
  return text.split("\n")[0]!;
}

Deno.test("stressWanted() reads WEBSERV_STRESS: set and not 0, false, no or off", () => {
  assertEquals(
    [undefined, "", "0", "false", "OFF", "1", "yes"].map(stressWanted),
    [false, false, false, false, false, true, true],
  );
});

Deno.test("tools/stress.ts runs the command alone and passes its exit code without WEBSERV_STRESS", async () => {
  const child = wrapper({ WEBSERV_STRESS: "" }, reporter("Deno.exit(3)"));
  const { code, stdout } = await child.output();
  assertEquals(code, 3);
  assertEquals(JSON.parse(new TextDecoder().decode(stdout)).burners, []);
});

Deno.test("tools/stress.ts runs burners beside the command and stops them when it ends", async () => {
  // The command itself checks that the burners run while it does.
  const check = `const running = Deno.env.get("WEBSERV_STRESS_PIDS").split(",").every((pid) => {
    try { Deno.statSync("/proc/" + pid); return true; } catch { return false; }
  });
  Deno.exit(running ? 0 : 4);`;
  const child = wrapper({ WEBSERV_STRESS: "1" }, reporter(check));
  const { code, stdout, stderr } = await child.output();
  assertEquals(code, 0, new TextDecoder().decode(stderr));
  const { burners } = JSON.parse(new TextDecoder().decode(stdout)) as { burners: number[] };
  assertEquals(burners.length, 1);
  assertFalse(burners.some(alive), "a burner outlived the run");
});

Deno.test("tools/stress.ts burners end on their own when the wrapper is killed", async () => {
  const child = wrapper({ WEBSERV_STRESS: "1" }, reporter("setTimeout(() => {}, 60_000)"));
  const line = await firstLine(child.stdout);
  const { burners, self } = JSON.parse(line) as { burners: number[]; self: number };
  try {
    assertEquals(burners.length, 1);
    assert(burners.every(alive), "the burner runs");
    child.kill("SIGKILL");
    await child.status;
    await waitFor(() => !burners.some(alive), {
      message: "the burners end once the wrapper that started them is gone",
    });
  } finally {
    try {
      Deno.kill(self, "SIGKILL"); // the command the wrapper ran, orphaned by the kill
    } catch { /* already gone */ }
    for (const pid of burners.filter(alive)) Deno.kill(pid, "SIGKILL");
    await child.stderr.cancel();
  }
});
