/**
 * `deno task bench:browser`: what the browser costs per episode, full
 * Chromium's headless mode beside the headless shell, on the same work: the
 * site checker on one forum seed (16 templates × 4 episodes: solver, do
 * nothing, claim, random), one lane, the fixture backend.
 *
 * CPU is read from `/proc/<pid>/stat` (user + system) of every process in
 * the browser's process group, sampled every 250 ms and kept per pid at its
 * highest, so a renderer that exits between samples loses at most 250 ms;
 * processes are grouped by their `--type` flag (none: the browser process).
 * The two browsers run alternately, `--rounds` times each (default 2), on
 * seeds 100, 101, …; the report gives medians and the shell-to-full ratios.
 * Linux only. Writes `bench/results/browser_cpu.json` and `.md`.
 *
 * @module
 */
import { Browser, browserInternals } from "../engine/browser/browser.ts";
import { checkSite } from "../fixtures/sites/kit/check.ts";
import forum from "../fixtures/sites/forum/mod.ts";
import { FixtureSandbox } from "../sandboxes/fixture/fixture_sandbox.ts";
import { Gateway } from "../sandboxes/gateway.ts";
import { groupProcesses } from "./_proc.ts";

const ROUNDS = Number(Deno.args.find((a) => a.startsWith("--rounds="))?.slice(9) ?? 2);
const BROWSERS = [
  { name: "chromium (headless mode)", path: "/usr/bin/chromium" },
  { name: "chromium-headless-shell", path: "/usr/bin/chromium-headless-shell" },
];
const TICK = 100; // clock ticks per second on Linux

interface Run {
  browser: string;
  seed: number;
  seconds: number;
  episodes: number;
  ok: boolean;
  cpu: Record<string, number>;
}

/** The process group's processes: pid → [type, CPU seconds]. */
async function sample(group: number, into: Map<number, [string, number]>): Promise<void> {
  for await (const { pid, stat } of groupProcesses(group)) {
    let cmdline: string;
    try {
      cmdline = await Deno.readTextFile(`/proc/${pid}/cmdline`);
    } catch {
      continue; // The process ended meanwhile.
    }
    if (!cmdline.includes("chrom")) continue; // the watchdog shell
    const type = cmdline.match(/--type=([a-z-]+)/)?.[1] ?? "browser";
    const cpu = (Number(stat[11]) + Number(stat[12])) / TICK;
    const known = into.get(pid);
    if (!known || known[1] < cpu) into.set(pid, [type, cpu]);
  }
}

async function runOnce(name: string, path: string, seed: number): Promise<Run> {
  await using gateway = new Gateway();
  await using sandbox = new FixtureSandbox(forum, { gateway });
  await using browser = await Browser.launch({ executablePath: path });
  const group = browserInternals(browser).process?.pid;
  if (!group) throw new Error("Cannot measure: the browser has no process group");
  const seen = new Map<number, [string, number]>();
  await sample(group, seen);
  const before = new Map(seen);
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      await sample(group, seen);
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  })();
  const started = performance.now();
  const report = await checkSite(browser, forum, { sandbox, seeds: [seed], concurrency: 1 });
  const seconds = (performance.now() - started) / 1000;
  sampling = false;
  await sampler;
  await sample(group, seen);
  const cpu: Record<string, number> = {};
  for (const [pid, [type, total]] of seen) {
    cpu[type] = (cpu[type] ?? 0) + total - (before.get(pid)?.[1] ?? 0);
  }
  return { browser: name, seed, seconds, episodes: report.episodes.length, ok: report.ok, cpu };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

const runs: Run[] = [];
for (let round = 0; round < ROUNDS; round++) {
  for (const { name, path } of BROWSERS) {
    const run = await runOnce(name, path, 100 + round);
    runs.push(run);
    console.log(
      `${name} seed ${run.seed}: ${
        run.seconds.toFixed(1)
      } s, ${run.episodes} episodes, ok ${run.ok}, CPU ${
        Object.entries(run.cpu).map(([k, v]) => `${k} ${v.toFixed(1)} s`).join(", ")
      }`,
    );
  }
}

const types = [...new Set(runs.flatMap((run) => Object.keys(run.cpu)))].sort();
const summary = BROWSERS.map(({ name }) => {
  const mine = runs.filter((run) => run.browser === name);
  const perEpisode = (type: string) =>
    median(mine.map((run) => (run.cpu[type] ?? 0) / run.episodes * 1000));
  const total = median(
    mine.map((run) => Object.values(run.cpu).reduce((a, b) => a + b, 0) / run.episodes * 1000),
  );
  return {
    name,
    seconds: median(mine.map((run) => run.seconds)),
    totalMsPerEpisode: total,
    msPerEpisode: Object.fromEntries(types.map((type) => [type, perEpisode(type)])),
  };
});
const [full, shell] = summary as [(typeof summary)[0], (typeof summary)[0]];
const version = new TextDecoder().decode(
  (await new Deno.Command(BROWSERS[0]!.path, { args: ["--version"] }).output()).stdout,
).trim();
const loadAverage = (await Deno.readTextFile("/proc/loadavg")).split(" ").slice(0, 3).join(", ");
const lines = [
  "# Browser CPU per episode: full Chromium's headless mode beside the headless shell",
  "",
  `${
    new Date().toISOString()
  }, ${version}, load average ${loadAverage} at the end. Generated by \`deno task bench:browser\`: the site checker on one forum seed (16 templates × 4 episodes), one lane, each browser ${ROUNDS} times, alternately; CPU from \`/proc\` per process type, medians per episode.`,
  "",
  "| browser | seed run, s | CPU ms/episode | " + types.join(" | ") + " |",
  "| --- | ---: | ---: | " + types.map(() => "---:").join(" | ") + " |",
  ...summary.map((s) =>
    `| ${s.name} | ${s.seconds.toFixed(1)} | ${s.totalMsPerEpisode.toFixed(0)} | ${
      types.map((type) => (s.msPerEpisode[type] ?? 0).toFixed(0)).join(" | ")
    } |`
  ),
  "",
  `Shell against full headless: CPU per episode ×${
    (shell.totalMsPerEpisode / full.totalMsPerEpisode).toFixed(2)
  }, browser process ×${
    ((shell.msPerEpisode["browser"] ?? 0) / (full.msPerEpisode["browser"] ?? 1)).toFixed(2)
  }, renderers ×${
    ((shell.msPerEpisode["renderer"] ?? 0) / (full.msPerEpisode["renderer"] ?? 1)).toFixed(2)
  }, wall time of a seed ×${(shell.seconds / full.seconds).toFixed(2)}.`,
  "",
  `Every run passed the checker: ${runs.every((run) => run.ok) ? "yes" : "no"}.`,
];
await Deno.writeTextFile(
  new URL("./results/browser_cpu.json", import.meta.url),
  JSON.stringify({ rounds: ROUNDS, runs, summary }, null, 2) + "\n",
);
await Deno.writeTextFile(
  new URL("./results/browser_cpu.md", import.meta.url),
  lines.join("\n") + "\n",
);
console.log(lines.join("\n"));
