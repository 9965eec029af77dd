/**
 * `deno task site:mutate [site...] [--seeds N]`: the mutation check
 * (`fixtures/sites/kit/mutations.ts`) alone, without a browser: the tasks of
 * N seeds of each site are generated, every mutant of the evaluators that
 * reaches them is judged by the checker's controls, and the score per site
 * is printed with its survivors. `site:check` runs the same check over the
 * tasks it ran. Exits with status 1 when a mutant survives or a control
 * fails on the site's own evaluators, 2 on bad arguments.
 *
 * @module
 */
import { parseArgs } from "node:util";
import { generateTask } from "../fixtures/sites/kit/generate.ts";
import { mutationCheck, type MutationReport } from "../fixtures/sites/kit/mutations.ts";
import { APPS, siteByName, SITES } from "../fixtures/sites/registry.ts";

const USAGE = "usage: deno task site:mutate [site...] [--seeds N]";

/**
 * Runs the mutation check as the command line asks.
 *
 * @param args the command-line arguments
 * @returns each site's report
 * @throws {TypeError} when the arguments are wrong
 */
export function main(args: string[]): Record<string, MutationReport> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: { seeds: { type: "string", default: "3" } },
  });
  const count = Number(values.seeds);
  if (!Number.isInteger(count) || count < 2) {
    throw new TypeError(
      `Invalid --seeds "${values.seeds}": expected an integer >= 2 (siblings need two seeds)\n${USAGE}`,
    );
  }
  const sites = positionals.length > 0
    ? positionals.map(siteByName)
    : [...Object.values(SITES), ...Object.values(APPS)];
  const out: Record<string, MutationReport> = {};
  for (const site of sites) {
    const tasks = site.templates.flatMap((template) =>
      Array.from({ length: count }, (_, seed) => generateTask(site, template.id, seed))
    );
    const report = mutationCheck(site, tasks);
    out[site.name] = report;
    console.log(
      `${site.name}: ${report.score}% (${report.killed}/${report.reached} mutants killed)`,
    );
    for (const line of [...report.baseline, ...report.survivors]) console.log(`  - ${line}`);
  }
  return out;
}

if (import.meta.main) {
  try {
    const reports = main(Deno.args);
    const bad = Object.values(reports).some((r) => r.survivors.length + r.baseline.length > 0);
    Deno.exit(bad ? 1 : 0);
  } catch (error) {
    console.error(error instanceof TypeError ? error.message : error);
    Deno.exit(2);
  }
}
