/**
 * Each hedge family's win rate: the share of answer tasks (every answer
 * template of every site and application, seeds 0 to N-1) on which some
 * probe of the family (`kit/hedge_probes.ts`) earns reward 1 from the real
 * evaluator, and how many honest phrasings earn 0. Offline: tasks are
 * generated from the seeds' data, no site is served.
 *
 * `deno run -A tools/hedge_rates.ts [seeds]` prints a markdown table (seeds
 * default to 10); the numbers before and after a change to the evaluator
 * are what a red team reports.
 *
 * @module
 */
import { generateTask } from "../fixtures/sites/kit/generate.ts";
import { evaluate } from "../fixtures/sites/kit/evaluate.ts";
import { HEDGE_FAMILIES, hedgeProbes, honestProbes } from "../fixtures/sites/kit/hedge_probes.ts";
import type { HedgeFamily } from "../fixtures/sites/kit/hedge_probes.ts";
import { APPS, SITES } from "../fixtures/sites/registry.ts";

/** What {@linkcode hedgeRates} counted. */
export interface HedgeRates {
  /** Per family: the tasks it was tried on, and those some probe of it won. */
  families: Record<HedgeFamily, { tasks: number; won: number; examples: string[] }>;
  /** Honest phrasings judged, and those that earned 0, one line each. */
  honest: { runs: number; refused: string[] };
}

/**
 * Judges every hedge family and honest phrasing on every answer template.
 *
 * @param seeds how many seeds (0 to seeds-1) of each template
 * @returns the counts
 */
export function hedgeRates(seeds: number): HedgeRates {
  const families = Object.fromEntries(
    HEDGE_FAMILIES.map((family) => [family, { tasks: 0, won: 0, examples: [] as string[] }]),
  ) as HedgeRates["families"];
  const honest = { runs: 0, refused: [] as string[] };
  for (const site of [...Object.values(SITES), ...Object.values(APPS)]) {
    for (const template of site.templates) {
      for (let seed = 0; seed < seeds; seed++) {
        const task = generateTask(site, template.id, seed);
        const score = (answer: string) =>
          evaluate(task.evaluator, {
            answer,
            instruction: task.instruction,
            url: "http://site.invalid/",
          }).reward;
        const probes = hedgeProbes(task);
        for (const family of new Set(probes.map((probe) => probe.family))) {
          const count = families[family];
          count.tasks++;
          const won = probes.find((probe) => probe.family === family && score(probe.answer) === 1);
          if (won === undefined) continue;
          count.won++;
          if (count.examples.length < 3) {
            count.examples.push(`${task.id}: ${JSON.stringify(won.answer).slice(0, 80)}`);
          }
        }
        for (const probe of honestProbes(task)) {
          honest.runs++;
          if (score(probe.answer) !== 1) {
            honest.refused.push(`${task.id} ${probe.label}: ${JSON.stringify(probe.answer)}`);
          }
        }
      }
    }
  }
  return { families, honest };
}

if (import.meta.main) {
  const seeds = Number(Deno.args[0] ?? 10);
  const { families, honest } = hedgeRates(seeds);
  console.log(`| family | tasks | won | win rate |\n| --- | ---: | ---: | ---: |`);
  for (const family of HEDGE_FAMILIES) {
    const { tasks, won } = families[family];
    const rate = tasks === 0 ? "-" : `${(100 * won / tasks).toFixed(1)}%`;
    console.log(`| ${family} | ${tasks} | ${won} | ${rate} |`);
  }
  console.log(
    `\nHonest phrasings earning 1: ${honest.runs - honest.refused.length}/${honest.runs}`,
  );
  for (const family of HEDGE_FAMILIES) {
    for (const example of families[family].examples) console.log(`- ${family}: ${example}`);
  }
  for (const line of honest.refused.slice(0, 20)) console.log(`- refused: ${line}`);
}
