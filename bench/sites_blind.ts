/**
 * `deno run -A bench/sites_blind.ts [--test N] [--sites a,b] [--splits public,keyed] [--out FILE]`: the blind
 * controls (`fixtures/sites/kit/blind.ts`) of every answer and page template
 * of the recreated sites and the real applications' task mirrors, on the
 * public test split and on a private (keyed) one: learned on train seeds
 * 0-39, scored on test seeds 1000 to 1000+N-1 (400 by default). The keyed
 * split uses a key drawn for the run, as an operator's would be. Writes
 * `bench/results/sites_blind.md` after every site, so a long run leaves what
 * it measured.
 *
 * @module
 */
import { parseArgs } from "node:util";
import {
  BLIND_CONTROLS,
  BLIND_LIMIT,
  BLIND_TRAIN_SEEDS,
  blindControls,
  type BlindReport,
} from "../fixtures/sites/kit/blind.ts";
import { TEST_SPLIT_KEY_ENV } from "../fixtures/sites/kit/private_split.ts";
import { TEST_SEED_START } from "../fixtures/sites/kit/task.ts";
import { APPS, SITES } from "../fixtures/sites/registry.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: {
    test: { type: "string", default: "400" },
    sites: { type: "string" },
    out: { type: "string" },
    splits: { type: "string", default: "public,keyed" },
  },
});
const testSeeds = Array.from({ length: Number(values.test) }, (_, i) => TEST_SEED_START + i);
const all = { ...SITES, ...APPS };
const names = values.sites ? values.sites.split(",") : Object.keys(all);
const key = crypto.randomUUID();
// A run over some sites (`--sites`) may write elsewhere (`--out`), to be merged.
const out = values.out ?? new URL("./results/sites_blind.md", import.meta.url);

const rows: { site: string; split: "public" | "keyed"; report: BlindReport }[] = [];
const pct = (rate: number) => `${(rate * 100).toFixed(1)}%`;

function write(done: boolean): void {
  const worst = (split: string) =>
    Math.max(
      0,
      ...rows.filter((r) => r.split === split).flatMap((r) => Object.values(r.report.rates)),
    );
  const table = rows.map(({ site, split, report }) =>
    `| ${site}/${report.template} | ${split} | ${report.tasks} | ${
      BLIND_CONTROLS.map((c) => pct(report.rates[c])).join(" | ")
    } |${Math.max(...Object.values(report.rates)) > BLIND_LIMIT ? " above 5%" : ""}`
  );
  const text = `# Blind controls

\`deno run -A bench/sites_blind.ts --test ${testSeeds.length}\`${
    done ? "" : " (still running when written: the sites listed so far)"
  }: per answer and page template, the most frequent train truth (\`constant\`), the
instruction's format example (\`example\`) and a seed-only predictor (\`seed\`), learned on the
train seeds ${BLIND_TRAIN_SEEDS[0]}-${
    BLIND_TRAIN_SEEDS.at(-1)
  } and scored with the task's own evaluator on the test seeds
${TEST_SEED_START}-${TEST_SEED_START + testSeeds.length - 1} of two splits: \`public\` (no key: the
test tasks anyone can generate) and \`keyed\` (a key drawn for the run, set as
\`${TEST_SPLIT_KEY_ENV}\`: the test tasks' data and parameters come from keyed seeds). Target: at
most ${BLIND_LIMIT * 100}% on every control. Worst share: public ${pct(worst("public"))}, keyed
${pct(worst("keyed"))}. State templates are left out (a blind answer changes no state).

| template | split | tasks | constant | example | seed |
| --- | --- | ---: | ---: | ---: | ---: |
${table.join("\n")}
`;
  Deno.writeTextFileSync(out, text);
}

for (const name of names) {
  const site = all[name];
  if (!site) throw new TypeError(`No site "${name}"`);
  for (const split of values.splits.split(",") as ("public" | "keyed")[]) {
    if (split === "keyed") Deno.env.set(TEST_SPLIT_KEY_ENV, key);
    else Deno.env.delete(TEST_SPLIT_KEY_ENV);
    const started = performance.now();
    for (const report of blindControls(site, BLIND_TRAIN_SEEDS, testSeeds)) {
      rows.push({ site: name, split, report });
    }
    console.log(`${name} ${split}: ${((performance.now() - started) / 1000).toFixed(0)} s`);
    write(false);
  }
}
Deno.env.delete(TEST_SPLIT_KEY_ENV);
write(true);
