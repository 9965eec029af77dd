// TrajectoryLog writes each line before append() returns: a step's line is in
// its file before the step's answer leaves, in the order the steps were taken,
// and a line that cannot be written is the caller's rejection, never a throw.
import { assert, assertEquals, assertRejects } from "@std/assert";
import { TrajectoryLog } from "../../../adapters/http/trajectory.ts";

function linesOf(path: string): Record<string, unknown>[] {
  return Deno.readTextFileSync(path).split("\n").filter((l) => l !== "").map((l) => JSON.parse(l));
}

Deno.test("TrajectoryLog.append() has the line in the file when it returns, in call order", async () => {
  const directory = await Deno.makeTempDir();
  try {
    const log = await TrajectoryLog.open(directory);
    const pending: Promise<void>[] = [];
    for (let step = 1; step <= 50; step++) {
      for (const session of ["s-a", "s-b"]) {
        pending.push(log.append(session, { type: "step", step, observation: "x".repeat(4096) }));
      }
    }
    // Read before awaiting anything: every line must already be there.
    for (const session of ["s-a", "s-b"]) {
      const lines = linesOf(log.path(session));
      assertEquals(lines.map((l) => l["step"]), Array.from({ length: 50 }, (_, i) => i + 1));
      assert(lines.every((l) => l["v"] === 1 && l["session"] === session));
    }
    await Promise.all(pending);
    assertEquals((await log.read("s-a")).length, 50);
  } finally {
    await Deno.remove(directory, { recursive: true });
  }
});

Deno.test("TrajectoryLog.append() rejects a line it cannot serialise or write, and writes the next", async () => {
  const directory = await Deno.makeTempDir();
  try {
    const log = await TrajectoryLog.open(directory);
    await assertRejects(() => log.append("s-1", { type: "step", bad: 1n }), TypeError);
    await log.append("s-1", { type: "start" });
    await Deno.remove(directory, { recursive: true });
    await assertRejects(() => log.append("s-1", { type: "step" }), Deno.errors.NotFound);
    await Deno.mkdir(directory);
    await log.append("s-1", { type: "end", reason: "closed" });
    assertEquals(linesOf(log.path("s-1")).map((l) => l["type"]), ["end"]);
  } finally {
    await Deno.remove(directory, { recursive: true }).catch(() => {});
  }
});
