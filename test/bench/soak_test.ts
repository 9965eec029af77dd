// The soak's CI version: `bench/soak.ts` for 3 minutes (WEBSERV_SOAK_MINUTES
// to change it) on the fixture backend, hostile actors beside scripted
// solvers and a browser and a renderer killed from outside; every target of
// the issue must hold: no step request lost, no reward on a failure of ours,
// every trajectory complete, resources flat, the server's event loop never
// held by its own code past a bound (see below). Each failure names the target and what was seen;
// the full report is kept under the test's temporary directory when it fails.
import { assert, assertEquals } from "@std/assert";
import type { SoakReport } from "../../bench/_soak_report.ts";

const MINUTES = Deno.env.get("WEBSERV_SOAK_MINUTES") ?? "3";

Deno.test({
  name: `bench:soak for ${MINUTES} minutes meets every target`,
  // The soak's server and browser are a subprocess, ended before it returns.
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const dir = await Deno.makeTempDir({ prefix: "webserv-soak-test-" });
    const out = `${dir}/soak.md`;
    const run = await new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "--allow-all",
        new URL("../../bench/soak.ts", import.meta.url).pathname,
        `--minutes=${MINUTES}`,
        "--sessions=3",
        "--hostile=3",
        `--out=${out}`,
      ],
      stdout: "piped",
      stderr: "piped",
    }).output();
    const stdout = new TextDecoder().decode(run.stdout);
    const stderr = new TextDecoder().decode(run.stderr);
    let report: SoakReport;
    try {
      report = JSON.parse(await Deno.readTextFile(`${dir}/soak.json`));
    } catch {
      throw new Error(
        `The soak wrote no report (exit ${run.code}):\n${stdout}\n${stderr.slice(-4000)}`,
      );
    }
    // Every target, the stall's 100 ms aside: on a shared runner the server's
    // own garbage collection comes near it (40-60 ms pauses; the committed run
    // in bench/results/soak.md judges it), so here the stall is held under a
    // bound that catches the class of freeze the soak was written against (an
    // answer reader, a seeding or a state mark on the loop held it for 0.3 to
    // 100 s), and a loop that never came back fails.
    const STALL_BOUND_MS = 1_000;
    const failed = report.targets.filter((t) =>
      !t.pass && !t.name.startsWith("longest event-loop")
    );
    assertEquals(
      failed.map((t) => `${t.name}: ${t.value} (target ${t.goal})`),
      [],
      `${stdout}\nreport: ${out}`,
    );
    assert(
      report.stall.longestOnCpuMs <= STALL_BOUND_MS,
      `the server's code held its loop ${report.stall.longestOnCpuMs} ms (bound ${STALL_BOUND_MS})`,
    );
    assertEquals(report.server.shutdown, "closed", `the server did not close: ${stdout}`);
    assert(report.solvers.won > 0, `no solver won: ${JSON.stringify(report.solvers)}`);
    await Deno.remove(dir, { recursive: true });
  },
});
