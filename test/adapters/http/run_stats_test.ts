// The dashboard's figures from trajectory lines: outcomes, errors by kind,
// groups without signal, bins and rates, on hand-written trajectories.
import { assertEquals } from "@std/assert";
import { episodesOf } from "../../../adapters/http/_run_episodes.ts";
import { runStats } from "../../../adapters/http/_run_stats.ts";
import type { TrajectoryEvent } from "../../../adapters/http/trajectory.ts";

const T0 = Date.parse("2026-01-01T00:00:00Z");

function at(seconds: number): string {
  return new Date(T0 + seconds * 1000).toISOString();
}

/** One session: a start, `steps` steps, the last ending with `reward` (or not ending). */
function session(
  id: string,
  options: {
    task?: string;
    group?: string;
    steps: number;
    reward?: number;
    truncated?: boolean;
    statuses?: Record<number, [string, string]>;
    closed?: string;
  },
): TrajectoryEvent[] {
  const events: TrajectoryEvent[] = [{
    type: "start",
    t: at(0),
    session: id,
    episode: 0,
    task: options.task ?? "shop/find/7",
    ...(options.group ? { group: options.group } : {}),
  }];
  for (let step = 1; step <= options.steps; step++) {
    const last = step === options.steps;
    const [status, code] = options.statuses?.[step] ?? ["ok", ""];
    const ends = last && (options.reward !== undefined || options.truncated === true);
    events.push({
      type: "step",
      t: at(step),
      session: id,
      episode: 0,
      step,
      status,
      ...(code ? { error: { code, message: code } } : {}),
      done: ends,
      truncated: last && options.truncated === true,
      ...(ends && options.reward !== undefined
        ? { verdict: { reward: options.reward, reason: "" }, reward: options.reward }
        : {}),
    });
  }
  if (options.closed) {
    events.push({ type: "end", t: at(options.steps + 1), session: id, reason: options.closed });
  }
  return events;
}

Deno.test("episodesOf() and runStats() count outcomes, errors by kind, groups and bins", () => {
  const episodes = [
    session("a", { group: "g1", steps: 2, reward: 1 }),
    session("b", {
      group: "g1",
      steps: 4,
      reward: 0,
      statuses: { 2: ["action_error", "stale-id"] },
    }),
    session("c", { group: "g2", steps: 1, reward: 0 }),
    session("d", {
      group: "g2",
      steps: 3,
      reward: 0,
      statuses: { 1: ["env_error", "browser-gone"] },
    }),
    session("e", { task: "blog/post/9000000", steps: 5, truncated: true }),
    session("f", { steps: 1, closed: "idle" }),
  ].flatMap((events) => episodesOf(events, false));
  assertEquals(episodes.map((e) => e.outcome), [
    "success",
    "failure",
    "failure",
    "failure",
    "truncated",
    "unfinished",
  ]);
  const stats = runStats(episodes, { live: 2 }, { expired: 1, closed: 3 }, { now: T0 + 30_000 });
  assertEquals(stats.lifecycle, {
    opening: 0,
    live: 2,
    failed: 0,
    done: 0,
    expired: 1,
    closed: 3,
  });
  assertEquals(stats.errors, { agent: { "stale-id": 1 }, infrastructure: { "browser-gone": 1 } });
  assertEquals(stats.templates, [{ key: "shop/find", episodes: 4, successes: 1, rate: 0.25 }]);
  assertEquals(stats.groups.map((g) => [g.group, g.noSignal, g.spread, g.std]), [
    ["g2", true, 0, 0],
    ["g1", false, 1, 0.5],
  ]);
  // Lengths 1, 2, 3, 4 of the finished episodes: one integer bin each.
  assertEquals(stats.lengths.map((b) => [b.from, b.to, b.count]), [
    [1, 1, 1],
    [2, 2, 1],
    [3, 3, 1],
    [4, 4, 1],
  ]);
  assertEquals(stats.rewards.map((b) => b.count).filter((n) => n > 0), [3, 1]);
  // 16 steps within the last minute (all at T0+1..5 s).
  assertEquals(stats.steps, 16);
  assertEquals(stats.stepsPerSecond, Math.round(16 / 60 * 1000) / 1000);
  assertEquals(stats.choices.splits, ["test", "train"]);
  // Filters: the error code, then the split.
  const withError = runStats(episodes, {}, { expired: 0, closed: 0 }, {
    filter: { error: "browser-gone" },
  });
  assertEquals(withError.episodes, 1);
  assertEquals(
    runStats(episodes, {}, { expired: 0, closed: 0 }, { filter: { split: "test" } })
      .episodes,
    1,
  );
});

Deno.test("runStats() does not flag a group whose episodes are still running", () => {
  const episodes = [
    ...episodesOf(session("a", { group: "g", steps: 1, reward: 0 }), true),
    ...episodesOf(session("b", { group: "g", steps: 1 }), true),
  ];
  const [group] = runStats(episodes, {}, { expired: 0, closed: 0 }).groups;
  assertEquals(group?.rewards, [0]);
  assertEquals(group?.noSignal, false);
});
