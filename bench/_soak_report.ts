/**
 * The soak's report: the JSON shape and the markdown written beside it.
 *
 * @module
 */
import type { Flatness, Target, TrajectoryCheck } from "./_soak_check.ts";
import type { ProbeResult } from "./_soak_probe.ts";
import type { Stall } from "./_soak_server.ts";
import type { Fault, Sample } from "./_soak_system.ts";

/** Everything a soak run reports. */
export interface SoakReport {
  date: string;
  machine: {
    cores: number;
    loadBefore: string;
    loadAfter: string;
    commit: string;
    dirty: boolean;
    deno: string;
  };
  parameters: {
    sites: string;
    minutes: number;
    solvers: number;
    hostiles: number;
    backend: string;
    maxSessions: number;
    faultEverySeconds: number;
    seed: number;
  };
  targets: Target[];
  stall: {
    longestMs: number;
    longestOnCpuMs: number;
    longestSilenceMs: number;
    over100: number;
    over20: number;
    top: (Stall & { inFlight: string })[];
    probe: ProbeResult;
    benchOwnLateMs: number;
  };
  steps: {
    solverSteps: number;
    p50Ms: number;
    p99Ms: number;
    solverStatuses: Record<string, number>;
  };
  solvers: {
    episodes: number;
    won: number;
    lost: number;
    fault: number;
    refused: number;
    recovered: number;
    failures: string[];
  };
  lost: string[];
  otherFailures: string[];
  rewardViolations: string[];
  hostileRewards: number;
  requests: Record<string, number>;
  rounds: Record<string, number>;
  faults: Fault[];
  trajectories: TrajectoryCheck;
  samples: Sample[];
  flatness: Flatness[];
  /** The top-level entries of the server's temporary directory at the end, with MiB. */
  tmpEntries: [string, number][];
  /** The same after the server's shutdown. */
  tmpAfterShutdown: [string, number][];
  server: {
    drainMs: number;
    leftOpen: number;
    leftContainers: string[];
    healthAtEnd: string;
    shutdown: "closed" | "hung";
    shutdownMs: number;
    exitCode: number;
    browsers: number;
    rejections: number;
    logTail: string;
  };
}

const ms = (n: number) => Number.isFinite(n) ? `${n.toFixed(1)} ms` : "n/a";
const list = (items: string[]) => items.length ? items.map((i) => `- ${i}`).join("\n") : "- none";

/**
 * The report as markdown.
 *
 * @param r the report
 * @returns the markdown text
 */
export function markdown(r: SoakReport): string {
  const p = r.parameters;
  const s = r.solvers;
  const rate = s.episodes - s.fault - s.refused > 0
    ? `${((s.won / (s.episodes - s.fault - s.refused)) * 100).toFixed(1)}%`
    : "n/a";
  const start = r.samples.find((x) => x.phase === "start");
  const end = r.samples.findLast((x) => x.phase === "end");
  const load = r.samples.filter((x) => x.phase === "load");
  const maxOf = (f: (x: Sample) => number) => Math.max(...r.samples.map(f));
  const row = (name: string, f: (x: Sample) => number | null) =>
    `| ${name} | ${start ? f(start) : ""} | ${maxOf((x) => f(x) ?? 0)} | ${end ? f(end) : ""} |`;
  return `# Soak: the rollout server under a hostile mix

\`deno task bench:soak --minutes ${p.minutes} --sessions ${p.solvers} --hostile ${p.hostiles} --backend ${p.backend} --sites ${p.sites}\`
on ${r.date}, commit \`${r.machine.commit}\`${r.machine.dirty ? " (with uncommitted changes)" : ""},
Deno ${r.machine.deno}, ${r.machine.cores} cores; load average ${r.machine.loadBefore} before,
${r.machine.loadAfter} after (the machine is shared: read the stalls with the load). Up to
${p.maxSessions} live sessions; a fault every ${p.faultEverySeconds} s; seed ${p.seed}.

## Targets

| target | goal | observed | |
| --- | --- | --- | --- |
${
    r.targets.map((t) => `| ${t.name} | ${t.goal} | ${t.value} | ${t.pass ? "PASS" : "**FAIL**"} |`)
      .join("\n")
  }

## Stalls

The server's longest event-loop stall is measured inside the server's own
process (a 5 ms timer's lateness): it is the time its loop could not answer
anyone, and nothing the benchmark does counts in it, though a machine too
busy to schedule the process does. From outside, a worker asked \`/health\`
every 10 ms: ${r.stall.probe.requests} requests, longest answer ${ms(r.stall.probe.maxMs)}, p99 ${
    ms(r.stall.probe.p99Ms)
  },
${r.stall.probe.failures} failed, ${r.stall.probe.slow.length} over 100 ms. Stalls: ${r.stall.over20} of
20 ms or more, ${r.stall.over100} over 100 ms. This process's own loop was late by up to
${r.stall.benchOwnLateMs} ms (its solvers' latencies include that).

Each stall is shown with the time the server's main thread was on a CPU
during it (10 ms resolution): close to the stall, the server's own code
held the loop; close to 0, the machine did not run the process. The
longest stall with the main thread on CPU held it ${r.stall.longestOnCpuMs} ms. The
server's status lines (due every 500 ms) were late by up to ${r.stall.longestSilenceMs} ms,
counting a loop that never came back up to the end of the run; the longest
stall is the larger of the two.

| stall | main thread on CPU | at | requests in flight |
| --- | --- | --- | --- |
${
    r.stall.top.map((x) =>
      `| ${ms(x.ms)} | ${x.cpuMs < 0 ? "? (never came back)" : `${x.cpuMs} ms`} | ${
        new Date(x.at).toISOString().slice(11, 23)
      } | ${x.inFlight} |`
    ).join("\n")
  }

## Well-behaved sessions

${s.episodes} solver episodes (scripted solvers of the fixture sites through the HTTP API):
${s.won} won, ${s.lost} lost, ${s.fault} hit a fault of ours (${s.recovered} won again after a
reset), ${s.refused} never got a session. Success where no fault hit: **${rate}**.
Step latency over ${r.steps.solverSteps} steps: p50 **${ms(r.steps.p50Ms)}**, p99 **${
    ms(r.steps.p99Ms)
  }**
(statuses ${JSON.stringify(r.steps.solverStatuses)}).

Solver failures:
${list(r.solvers.failures)}

## Failures

Lost step requests:
${list(r.lost)}

Other requests answered with a 5xx or not at all (not steps; by actor/kind):
${list(r.otherFailures)}

Rewards on failures of ours:
${list(r.rewardViolations)}

Hostile sessions that earned a reward: ${r.hostileRewards}.

Faults injected:
${
    list(r.faults.map((f) =>
      `${new Date(f.at).toISOString().slice(11, 19)} ${f.kind} ${f.target}: ${
        f.done ? "done" : "not done"
      }`
    ))
  }

Trajectories: ${r.trajectories.complete}/${r.trajectories.sessions} sessions complete; ${r.trajectories.missingSteps}
of ${r.trajectories.seenSteps} step results a client got have no line; ${r.trajectories.extraLines} lines of
HTTP sessions no client saw answered.
${list(r.trajectories.problems)}

## Resources

Samples every 5 s under load (${load.length}); start and end are idle (no session).

| resource | start | max | end |
| --- | --- | --- | --- |
${row("server RSS, MiB", (x) => x.serverRssMiB)}
${row("browser RSS, MiB", (x) => x.browserRssMiB)}
${row("server fds", (x) => x.serverFds)}
${row("browser fds", (x) => x.browserFds)}
${row("browser processes", (x) => x.browserProcesses)}
${row("live sessions", (x) => x.live)}
${row("browser contexts", (x) => x.contexts)}
${p.backend === "incus" ? `${row("session containers", (x) => x.containers)}\n` : ""}${
    row("run dir, MiB", (x) => x.runDirMiB)
  }
${row("tmp dir, MiB", (x) => x.tmpDirMiB)}
${row("load average (1 min)", (x) => x.load1)}

| resource | rule | start | middle of the load | end of the load | end | |
| --- | --- | --- | --- | --- | --- | --- |
${
    r.flatness.map((f) =>
      `| ${f.resource} | ${f.rule} | ${f.start} | ${f.midLoad} | ${f.lateLoad} | ${f.end} | ${
        f.pass ? "PASS" : "**FAIL**"
      } |`
    ).join("\n")
  }

Server: ${r.server.browsers} browser process(es) over the run, drained in ${r.server.drainMs} ms after the load
(${r.server.leftOpen} sessions still open after it, closed by the soak),
\`/health\` after the drain: \`${r.server.healthAtEnd}\`; ${
    p.backend === "incus"
      ? `session containers left on Incus after the shutdown: ${r.server.leftContainers.length} (deleted by the soak, with its seeded bases); `
      : ""
  }shutdown ${r.server.shutdown} in ${r.server.shutdownMs} ms (exit ${r.server.exitCode}), ${r.server.rejections} unhandled rejections.

## Requests

| actor/kind status | n |
| --- | --- |
${Object.entries(r.requests).sort().map(([k, n]) => `| ${k} | ${n} |`).join("\n")}

Hostile rounds: ${JSON.stringify(r.rounds)}

What the server's temporary directory (its \`TMPDIR\`) held at the idle end, MiB:
${list(r.tmpEntries.map(([name, mib]) => `${name}: ${mib}`))}

and after its shutdown:
${list(r.tmpAfterShutdown.map(([name, mib]) => `${name}: ${mib}`))}
`;
}
