/**
 * The run at a glance, computed from its episodes (`_run_episodes.ts`) and
 * the live sessions' phases: sessions by lifecycle state, throughput over
 * time, success by template and by site, reward and length distributions,
 * errors by kind, and GRPO groups with their reward spread (a group whose
 * finished rewards are all equal carries no training signal). Filters
 * apply to episodes before anything is counted.
 *
 * @module
 */
import type { EpisodeSummary, ErrorKind, Outcome } from "./_run_episodes.ts";

/** What the dashboard filters episodes by; an absent field lets every episode through. */
export interface RunFilter {
  /** The site. */
  site?: string;
  /** The template. */
  template?: string;
  /** The split (`train`, `test`). */
  split?: string;
  /** The outcome. */
  outcome?: Outcome;
  /** An error code the episode met (`stale-id`, `timeout`…). */
  error?: string;
}

/** Successes among finished task episodes, for one template or site. */
export interface SuccessRow {
  /** The template (`site/template`) or site. */
  key: string;
  /** Finished episodes. */
  episodes: number;
  /** Those with a positive reward. */
  successes: number;
  /** `successes / episodes`. */
  rate: number;
}

/** One bar of a distribution: values in `[from, to)` (the last bar includes `to`). */
export interface Bin {
  /** Lower bound. */
  from: number;
  /** Upper bound. */
  to: number;
  /** How many. */
  count: number;
}

/** A GRPO group's rewards. */
export interface GroupRow {
  /** The group's id. */
  group: string;
  /** Its task. */
  task: string | null;
  /** Its episodes. */
  episodes: number;
  /** The rewards of its finished episodes. */
  rewards: number[];
  /** Their mean. */
  mean: number | null;
  /** Their population standard deviation. */
  std: number | null;
  /** Max minus min. */
  spread: number | null;
  /** Whether every episode finished with the same reward: no signal for GRPO. */
  noSignal: boolean;
}

/** One throughput bucket. */
export interface RatePoint {
  /** The bucket's start (ms since the epoch). */
  t: number;
  /** Steps per second in it. */
  stepsPerSecond: number;
  /** Episodes finished per minute in it. */
  episodesPerMinute: number;
}

/** What `/dashboard/stats` answers. */
export interface RunStats {
  /** Sessions by lifecycle state: the live ones' phases, and the closed ones by how. */
  lifecycle: Record<"opening" | "live" | "failed" | "done" | "expired" | "closed", number>;
  /** Episodes after the filter. */
  episodes: number;
  /** Steps after the filter. */
  steps: number;
  /** Steps per second over the last minute. */
  stepsPerSecond: number;
  /** Episodes finished per minute over the last five minutes. */
  episodesPerMinute: number;
  /** Throughput over time, oldest first. */
  rate: RatePoint[];
  /** Episodes by outcome. */
  outcomes: Record<Outcome, number>;
  /** Success per template (`site/template`), most episodes first. */
  templates: SuccessRow[];
  /** Success per site. */
  sites: SuccessRow[];
  /** Final rewards of finished episodes. */
  rewards: Bin[];
  /** Steps per finished episode. */
  lengths: Bin[];
  /** Errors by kind, then code: the agent's actions apart from our infrastructure. */
  errors: Record<ErrorKind, Record<string, number>>;
  /** GRPO groups. */
  groups: GroupRow[];
  /** The values each filter can take, over every episode (not only the filtered ones). */
  choices: { sites: string[]; templates: string[]; splits: string[]; errors: string[] };
}

/** Phases of live sessions, as `SessionManager.phases()` counts them. */
export type LivePhases = Partial<Record<"opening" | "live" | "failed" | "done", number>>;

/**
 * Whether an episode passes a filter.
 *
 * @param episode the episode
 * @param filter the filter
 * @returns whether it passes
 */
export function passes(episode: EpisodeSummary, filter: RunFilter): boolean {
  return (filter.site === undefined || episode.site === filter.site) &&
    (filter.template === undefined || episode.template === filter.template) &&
    (filter.split === undefined || episode.split === filter.split) &&
    (filter.outcome === undefined || episode.outcome === filter.outcome) &&
    (filter.error === undefined || episode.errors.some((e) => e.code === filter.error));
}

/**
 * Computes the figures.
 *
 * @param all every episode of the run
 * @param phases the live sessions' phases
 * @param closed the closed sessions by how they closed (`expired` or `closed`)
 * @param options the filter, and the time now (ms) for the recent rates
 * @returns the figures
 */
export function runStats(
  all: readonly EpisodeSummary[],
  phases: LivePhases,
  closed: { expired: number; closed: number },
  options: { filter?: RunFilter; now?: number } = {},
): RunStats {
  const now = options.now ?? Date.now();
  const episodes = all.filter((e) => passes(e, options.filter ?? {}));
  const finished = episodes.filter((e) => e.outcome === "success" || e.outcome === "failure");
  const outcomes: Record<Outcome, number> = {
    success: 0,
    failure: 0,
    truncated: 0,
    unfinished: 0,
    running: 0,
  };
  const errors: Record<ErrorKind, Record<string, number>> = { agent: {}, infrastructure: {} };
  const stepTimes: number[] = [];
  for (const episode of episodes) {
    outcomes[episode.outcome]++;
    for (const error of episode.errors) {
      errors[error.kind][error.code] = (errors[error.kind][error.code] ?? 0) + 1;
    }
    for (const t of episode.stepTimes) stepTimes.push(t);
  }
  const ends = episodes.flatMap((e) =>
    e.ended !== null && e.outcome !== "running" ? [e.ended] : []
  );
  return {
    lifecycle: {
      opening: phases.opening ?? 0,
      live: phases.live ?? 0,
      failed: phases.failed ?? 0,
      done: phases.done ?? 0,
      expired: closed.expired,
      closed: closed.closed,
    },
    episodes: episodes.length,
    steps: stepTimes.length,
    stepsPerSecond: round(stepTimes.filter((t) => t > now - 60_000).length / 60),
    episodesPerMinute: round(ends.filter((t) => t > now - 300_000).length / 5),
    rate: rateSeries(stepTimes, ends),
    outcomes,
    templates: successRows(finished, (e) => e.template && `${e.site}/${e.template}`),
    sites: successRows(finished, (e) => e.site),
    rewards: bins(finished.map((e) => e.reward ?? 0), 10),
    lengths: bins(finished.map((e) => e.steps), 10),
    errors,
    groups: groupRows(episodes),
    choices: {
      sites: distinct(all.map((e) => e.site)),
      templates: distinct(all.map((e) => e.template)),
      splits: distinct(all.map((e) => e.split)),
      errors: distinct(all.flatMap((e) => e.errors.map((error) => error.code))),
    },
  };
}

function successRows(
  finished: readonly EpisodeSummary[],
  keyOf: (e: EpisodeSummary) => string | null,
): SuccessRow[] {
  const rows = new Map<string, SuccessRow>();
  for (const episode of finished) {
    const key = keyOf(episode);
    if (!key) continue;
    const row = rows.get(key) ?? { key, episodes: 0, successes: 0, rate: 0 };
    row.episodes++;
    if (episode.outcome === "success") row.successes++;
    row.rate = round(row.successes / row.episodes);
    rows.set(key, row);
  }
  return [...rows.values()].sort((a, b) => b.episodes - a.episodes || a.key.localeCompare(b.key));
}

function groupRows(episodes: readonly EpisodeSummary[]): GroupRow[] {
  const groups = new Map<string, EpisodeSummary[]>();
  for (const episode of episodes) {
    if (episode.group === null) continue;
    groups.set(episode.group, [...(groups.get(episode.group) ?? []), episode]);
  }
  return [...groups].map(([group, members]) => {
    const rewards = members.flatMap((e) =>
      (e.outcome === "success" || e.outcome === "failure") && e.reward !== null ? [e.reward] : []
    );
    const mean = rewards.length ? rewards.reduce((a, b) => a + b, 0) / rewards.length : null;
    const std = mean === null
      ? null
      : Math.sqrt(rewards.reduce((a, r) => a + (r - mean) ** 2, 0) / rewards.length);
    const spread = rewards.length ? Math.max(...rewards) - Math.min(...rewards) : null;
    return {
      group,
      task: members[0]?.task ?? null,
      episodes: members.length,
      rewards,
      mean: mean === null ? null : round(mean),
      std: std === null ? null : round(std),
      spread: spread === null ? null : round(spread),
      // Judged once every member finished: a group still running may yet differ.
      noSignal: rewards.length === members.length && rewards.length > 1 && spread === 0,
    };
  }).sort((a, b) => Number(b.noSignal) - Number(a.noSignal) || a.group.localeCompare(b.group));
}

/** Up to 60 buckets over the run's span, at least 10 s wide. */
function rateSeries(stepTimes: readonly number[], ends: readonly number[]): RatePoint[] {
  if (stepTimes.length === 0) return [];
  let first = Infinity;
  let last = -Infinity;
  for (const t of stepTimes) {
    if (t < first) first = t;
    if (t > last) last = t;
  }
  const width = Math.max(10_000, Math.ceil((last - first + 1) / 60));
  const n = Math.floor((last - first) / width) + 1;
  const steps = new Array<number>(n).fill(0);
  const done = new Array<number>(n).fill(0);
  for (const t of stepTimes) steps[Math.floor((t - first) / width)]!++;
  for (const t of ends) {
    const i = Math.floor((t - first) / width);
    if (i >= 0 && i < n) done[i]!++;
  }
  return steps.map((count, i) => ({
    t: first + i * width,
    stepsPerSecond: round(count / (width / 1000)),
    episodesPerMinute: round(done[i]! / (width / 60_000)),
  }));
}

function bins(values: readonly number[], most: number): Bin[] {
  if (values.length === 0) return [];
  const low = Math.min(...values);
  const high = Math.max(...values);
  if (low === high) return [{ from: low, to: high, count: values.length }];
  const integers = values.every(Number.isInteger);
  const n = integers ? Math.min(most, high - low + 1) : most;
  const width = integers ? Math.ceil((high - low + 1) / n) : (high - low) / n;
  const out: Bin[] = Array.from({ length: n }, (_, i) => ({
    from: round(low + i * width),
    to: round(integers ? low + (i + 1) * width - 1 : low + (i + 1) * width),
    count: 0,
  }));
  for (const value of values) {
    out[Math.min(n - 1, Math.floor((value - low) / width))]!.count++;
  }
  return out;
}

function distinct(values: readonly (string | null)[]): string[] {
  return [...new Set(values.filter((v): v is string => v !== null))].sort();
}

function round(value: number): number {
  return Math.round(value * 1000) / 1000;
}
