/**
 * `deno run -A bench/sites_blind.ts [--test N] [--sites a,b] [--splits public,keyed] [--jobs J] [--render]`:
 * the blind controls (`fixtures/sites/kit/blind.ts`) of every answer and page
 * template of the recreated sites and the real applications' task mirrors,
 * and the hedge control beside them, on the public test split and on a
 * private (keyed) one: learned on train seeds 0-39, scored on test seeds
 * 1000 to 1000+N-1 (400 by default). The keyed split uses a key drawn for the
 * run, as an operator's would be.
 *
 * Drawing a task seeds its data (about 1 to 3 s a seed on the largest sites),
 * so the work runs in J processes at once (`bench/_blind_part.ts`; 2 by
 * default): one learns a site's train seeds, then each scores a range of test
 * seeds of one split. Counts are kept per site and split in
 * `bench/results/sites_blind.json` (a run over some sites replaces only
 * theirs), and `bench/results/sites_blind.md` is written from all of them
 * after every site.
 *
 * @module
 */
import { parseArgs } from "node:util";
import {
  addBlindCounts,
  BLIND_CONTROLS,
  BLIND_LIMIT,
  BLIND_TRAIN_SEEDS,
  type BlindCounts,
  blindReport,
} from "../fixtures/sites/kit/blind.ts";
import { TEST_SPLIT_KEY_ENV } from "../fixtures/sites/kit/private_split.ts";
import { TEST_SEED_START } from "../fixtures/sites/kit/task.ts";
import { APPS, SITES } from "../fixtures/sites/registry.ts";

type Split = "public" | "keyed";

/** What the results file keeps of one site and split. */
interface Measured {
  site: string;
  split: Split;
  /** Test seeds scored: `TEST_SEED_START` up. */
  seeds: number;
  /** Wall time of the site's run (learning, then both splits' scoring), in seconds. */
  seconds: number;
  counts: BlindCounts[];
}

const { values } = parseArgs({
  args: Deno.args,
  options: {
    test: { type: "string", default: "400" },
    sites: { type: "string" },
    splits: { type: "string", default: "public,keyed" },
    jobs: { type: "string", default: "2" },
    chunk: { type: "string", default: "50" },
    render: { type: "boolean", default: false },
  },
});
const testSeeds = Number(values.test);
const jobs = Math.max(1, Number(values.jobs));
const chunk = Math.max(1, Number(values.chunk));
const all = { ...SITES, ...APPS };
const names = values.sites ? values.sites.split(",") : Object.keys(all);
for (const name of names) if (!all[name]) throw new TypeError(`No site "${name}"`);
const splits = values.splits.split(",") as Split[];
const key = crypto.randomUUID();
// The public split's processes must not inherit an operator's key.
Deno.env.delete(TEST_SPLIT_KEY_ENV);
const jsonFile = new URL("./results/sites_blind.json", import.meta.url);
const mdFile = new URL("./results/sites_blind.md", import.meta.url);
const PART = new URL("./_blind_part.ts", import.meta.url).pathname;

function load(): Measured[] {
  try {
    return JSON.parse(Deno.readTextFileSync(jsonFile)) as Measured[];
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return [];
    throw error;
  }
}

/** Runs one share in its own process and returns what it printed, parsed. */
async function part<T>(args: string[], split: Split | undefined): Promise<T> {
  const env: Record<string, string> = split === "keyed" ? { [TEST_SPLIT_KEY_ENV]: key } : {};
  const command = new Deno.Command(Deno.execPath(), {
    args: ["run", "--allow-all", "--quiet", PART, ...args],
    env,
    clearEnv: false,
    stdout: "piped",
    stderr: "piped",
  });
  const out = await command.output();
  if (!out.success) {
    throw new Error(
      `${args.join(" ")} failed: ${new TextDecoder().decode(out.stderr).slice(-2000)}`,
    );
  }
  return JSON.parse(new TextDecoder().decode(out.stdout)) as T;
}

/** At most `jobs` promises of `tasks` run at once. */
async function pool<T>(tasks: (() => Promise<T>)[]): Promise<T[]> {
  const results: T[] = new Array(tasks.length);
  let next = 0;
  await Promise.all(Array.from({ length: Math.min(jobs, tasks.length) }, async () => {
    while (next < tasks.length) {
      const i = next++;
      results[i] = await tasks[i]!();
    }
  }));
  return results;
}

const pct = (rate: number) => `${(rate * 100).toFixed(1)}%`;

function write(measured: Measured[]): void {
  Deno.writeTextFileSync(jsonFile, JSON.stringify(measured, null, 1) + "\n");
  const rows = measured.flatMap((m) => m.counts.map((c) => ({ ...m, report: blindReport(c) })));
  const worstOf = (r: (typeof rows)[number]) =>
    Math.max(r.report.hedged, ...Object.values(r.report.rates));
  const worst = (split: Split) =>
    pct(Math.max(0, ...rows.filter((r) => r.split === split).map(worstOf)));
  const seeds = [...new Set(measured.map((m) => m.seeds))].join(", ");
  const table = rows.map((r) =>
    `| ${r.site}/${r.report.template} | ${r.split} | ${r.report.tasks} | ${
      BLIND_CONTROLS.map((c) => pct(r.report.rates[c])).join(" | ")
    } | ${pct(r.report.hedged)} |${worstOf(r) > BLIND_LIMIT ? " above 5%" : ""}`
  );
  const times = [...new Map(measured.map((m) => [m.site, m.seconds]))].map(([site, s]) =>
    `${site} ${s.toFixed(0)} s`
  ).join(", ");
  Deno.writeTextFileSync(
    mdFile,
    `# Blind and hedge controls

\`deno run -A bench/sites_blind.ts --test ${seeds}\`: per answer and page template, the most frequent
train truth (\`constant\`), the instruction's format example (\`example\`) and a seed-only predictor
(\`seed\`), learned on the train seeds ${BLIND_TRAIN_SEEDS[0]}-${BLIND_TRAIN_SEEDS.at(-1)}, and the
hedge control (\`hedge\`: the truth beside another candidate or a neighbour, every candidate, the
truth in a page of text, the other shotgun answers of \`answerAdversaries\`; a task counts when any
of them wins), scored with the task's own evaluator on the test seeds from ${TEST_SEED_START} of two
splits: \`public\` (no key: the test tasks anyone can generate) and \`keyed\` (a key drawn for the
run, set as \`${TEST_SPLIT_KEY_ENV}\`: the test tasks' data and parameters come from keyed seeds).
Target: at most ${BLIND_LIMIT * 100}% on every control. Worst share: public ${worst("public")},
keyed ${worst("keyed")}. State templates are left out (a blind answer changes no state).

Wall time of each site's run (learning, then both splits' scoring), ${jobs} processes at once on a
shared 2-core machine: ${times}.

| template | split | tasks | constant | example | seed | hedge |
| --- | --- | ---: | ---: | ---: | ---: | ---: |
${table.join("\n")}
`,
  );
}

let measured = load().filter((m) => all[m.site] !== undefined);
// `--render` rewrites the report from the counts alone (after merging counts measured
// in another tree or on another machine), measuring nothing.
if (values.render) write(measured);
for (const name of values.render ? [] : names) {
  const started = performance.now();
  const trainRange = `${BLIND_TRAIN_SEEDS[0]}-${BLIND_TRAIN_SEEDS.at(-1)}`;
  const models = await part<unknown>(["learn", name, trainRange], undefined);
  const modelsFile = await Deno.makeTempFile({ prefix: `blind-${name}-`, suffix: ".json" });
  Deno.writeTextFileSync(modelsFile, JSON.stringify(models));
  const shares: { split: Split; run: () => Promise<BlindCounts[]> }[] = [];
  for (const split of splits) {
    for (let from = 0; from < testSeeds; from += chunk) {
      const range = `${TEST_SEED_START + from}-${
        TEST_SEED_START + Math.min(testSeeds, from + chunk) - 1
      }`;
      shares.push({
        split,
        run: () => part<BlindCounts[]>(["score", name, range, modelsFile], split),
      });
    }
  }
  const done = await pool(shares.map((s) => s.run));
  Deno.removeSync(modelsFile);
  const seconds = (performance.now() - started) / 1000;
  for (const split of splits) {
    const counts = addBlindCounts(done.filter((_, i) => shares[i]!.split === split));
    measured = measured.filter((m) => !(m.site === name && m.split === split));
    measured.push({ site: name, split, seeds: testSeeds, seconds, counts });
  }
  const order = Object.keys(all);
  measured.sort((a, b) =>
    order.indexOf(a.site) - order.indexOf(b.site) || a.split.localeCompare(b.split)
  );
  write(measured);
  console.log(`${name}: ${seconds.toFixed(0)} s`);
}
