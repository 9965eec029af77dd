/**
 * What the soak concludes from what it observed: the trajectory check
 * (every step result a client got is a line of its session's JSONL, with
 * start and end lines), the rules on rewards read from the recorded lines,
 * the stalls with what was in flight around them, and the targets.
 *
 * @module
 */
import type { Call, Ledger } from "./_soak_client.ts";
import type { Stall } from "./_soak_server.ts";
import type { Sample } from "./_soak_system.ts";

/** The trajectory check's result. */
export interface TrajectoryCheck {
  /** Sessions a client opened and the check looked at. */
  sessions: number;
  complete: number;
  /** Step results clients got, and how many of them have no line. */
  seenSteps: number;
  missingSteps: number;
  /** Recorded step lines of HTTP sessions no client saw an answer to. */
  extraLines: number;
  /** Rewards the recorded lines give on failures of ours, or after one before a reset. */
  recordedViolations: string[];
  /** Up to 20 sessions that are not complete, and why. */
  problems: string[];
}

type Line = {
  type?: string;
  step?: number;
  status?: string;
  reward?: number;
  done?: boolean;
};

async function lines(path: string): Promise<Line[] | string> {
  let text: string;
  try {
    text = await Deno.readTextFile(path);
  } catch {
    return "no trajectory file";
  }
  const out: Line[] = [];
  for (const [i, raw] of text.split("\n").entries()) {
    if (raw === "") continue;
    try {
      out.push(JSON.parse(raw));
    } catch {
      return `line ${i + 1} is not JSON`;
    }
  }
  return out;
}

const key = (s: { step?: number; status?: string; reward?: number; done?: boolean }) =>
  `${s.step}|${s.status}|${s.reward ?? "-"}|${s.done ?? false}`;

/**
 * Checks the run directory's trajectories against what the clients saw.
 *
 * @param runDir the server's run directory
 * @param ledger the run's ledger
 * @returns the check
 */
export async function checkTrajectories(runDir: string, ledger: Ledger): Promise<TrajectoryCheck> {
  const check: TrajectoryCheck = {
    sessions: 0,
    complete: 0,
    seenSteps: 0,
    missingSteps: 0,
    extraLines: 0,
    recordedViolations: [],
    problems: [],
  };
  // Every file, ours or not, for the reward rules.
  for await (const entry of Deno.readDir(runDir)) {
    if (!entry.name.endsWith(".jsonl")) continue;
    const read = await lines(`${runDir}/${entry.name}`);
    if (typeof read === "string") continue;
    let failed = false;
    for (const line of read) {
      if (line.type === "start") failed = false;
      if (line.type !== "step") continue;
      const ours = line.status !== "ok" && line.status !== "action_error";
      if (ours && line.reward !== undefined) {
        check.recordedViolations.push(
          `${entry.name} step ${line.step}: reward with ${line.status}`,
        );
      } else if (!ours && failed && (line.reward ?? 0) > 0) {
        check.recordedViolations.push(`${entry.name} step ${line.step}: reward after a failure`);
      }
      if (ours) failed = true;
    }
  }
  for (const [session, { actor, ws }] of ledger.sessions) {
    check.sessions++;
    const seen = ledger.seen.get(session) ?? [];
    check.seenSteps += seen.length;
    const read = await lines(`${runDir}/${session}.jsonl`);
    const why: string[] = [];
    if (typeof read === "string") {
      why.push(read);
      check.missingSteps += seen.length;
    } else {
      if (!read.some((l) => l.type === "start")) why.push("no start line");
      if (!read.some((l) => l.type === "end")) why.push("no end line");
      const recorded = new Map<string, number>();
      let steps = 0;
      for (const line of read) {
        if (line.type !== "step") continue;
        steps++;
        recorded.set(key(line), (recorded.get(key(line)) ?? 0) + 1);
      }
      let missing = 0;
      for (const s of seen) {
        const n = recorded.get(key(s)) ?? 0;
        if (n === 0) missing++;
        else recorded.set(key(s), n - 1);
      }
      if (missing > 0) why.push(`${missing} of ${seen.length} step results have no line`);
      check.missingSteps += missing;
      if (!ws) check.extraLines += Math.max(0, steps - (seen.length - missing));
    }
    if (why.length === 0) check.complete++;
    else if (check.problems.length < 20) {
      check.problems.push(`${session} (${actor}): ${why.join(", ")}`);
    }
  }
  return check;
}

/**
 * The requests in flight during a stall, counted by kind.
 *
 * @param stall the stall (it ended at `at`)
 * @param calls every request
 * @returns `kind×n` joined, busiest first
 */
export function inFlight(stall: Stall, calls: Call[]): string {
  const from = stall.at - stall.ms;
  const counts = new Map<string, number>();
  for (const call of calls) {
    if (call.start <= stall.at && call.end >= from) {
      const name = `${call.actor.replace("hostile:", "")}/${call.kind}`;
      counts.set(name, (counts.get(name) ?? 0) + 1);
    }
  }
  return [...counts].sort((a, b) => b[1] - a[1]).map(([k, n]) => `${k}×${n}`).join(", ") ||
    "nothing the soak sent";
}

/** A target and whether it was met. */
export interface Target {
  name: string;
  goal: string;
  value: string;
  pass: boolean;
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor((sorted.length - 1) / 2)] ?? NaN;
};

/**
 * One resource's verdict. `midLoad` and `lateLoad` are the medians of the
 * middle and the last third of the samples under load: the first third is
 * left out, as the first use of each site, seed and code path grows memory
 * once; a leak grows with the work done and shows between the two.
 */
export interface Flatness {
  resource: string;
  start: number;
  end: number;
  midLoad: number;
  lateLoad: number;
  /** How it was judged. */
  rule: string;
  pass: boolean;
}

/**
 * Whether the resources stayed flat: memory (server, browser) by its trend
 * under load, the late third within 25% plus a slack of the middle third;
 * descriptors by the same trend and by coming back, at the idle end, within
 * 25% plus the slack of the idle start; no live sessions, contexts or
 * containers left at the end; the temporary directory within 16 MiB of its
 * start. A trend needs 6 samples under load; with fewer it is not judged.
 *
 * @param samples every sample of the run
 * @returns a verdict per resource
 */
export function flatness(samples: Sample[]): Flatness[] {
  const start = samples.find((s) => s.phase === "start");
  const end = samples.findLast((s) => s.phase === "end");
  const load = samples.filter((s) => s.phase === "load");
  if (!start || !end) return [];
  const third = Math.floor(load.length / 3);
  const mid = load.slice(third, 2 * third);
  const late = load.slice(load.length - third);
  const trend = load.length >= 6;
  const rows: [keyof Sample, number, boolean][] = [
    ["serverRssMiB", 64, false],
    ["browserRssMiB", 128, false],
    ["serverFds", 16, true],
    ["browserFds", 64, true],
  ];
  const grew = (from: number, to: number, slack: number) => to > from * 1.25 + slack;
  const out: Flatness[] = rows.map(([field, slack, back]) => {
    const of = (s: Sample) => (s[field] as number | null) ?? 0;
    const midLoad = median(mid.map(of));
    const lateLoad = median(late.map(of));
    const rules = [
      ...(trend ? [`late ≤ mid × 1.25 + ${slack}`] : []),
      ...(back ? [`end ≤ start × 1.25 + ${slack}`] : []),
    ];
    return {
      resource: field,
      start: of(start),
      end: of(end),
      midLoad,
      lateLoad,
      rule: rules.join(", ") || "not judged (fewer than 6 samples under load)",
      pass: !(trend && grew(midLoad, lateLoad, slack)) &&
        !(back && grew(of(start), of(end), slack)),
    };
  });
  for (const field of ["live", "contexts", "containers", "tmpDirMiB"] as const) {
    const of = (s: Sample) => s[field] ?? 0;
    const slack = field === "tmpDirMiB" ? 16 : 0;
    out.push({
      resource: field,
      start: of(start),
      end: of(end),
      midLoad: median(mid.map(of)),
      lateLoad: median(late.map(of)),
      rule: `end ≤ start${slack ? ` + ${slack}` : ""}`,
      pass: of(end) <= of(start) + slack,
    });
  }
  return out;
}
