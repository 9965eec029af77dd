/**
 * `deno task site:blind <site> [--train N] [--test M] [--keyed]`: the blind controls of
 * a site's answer and page templates (`fixtures/sites/kit/blind.ts`): the most
 * frequent train truth per template, the instruction's format example and a
 * seed-only predictor, learned on train seeds `0..N-1` and scored on test
 * seeds `1000..1000+M-1`; each must win at most 5% of a template's test tasks.
 * With `--keyed`, the test seeds are those of a private split (the
 * operator's `WEBSERV_TEST_SPLIT_KEY`, or a key drawn for the run): their data
 * and parameters come from keyed seeds. `bench/sites_blind.ts` runs both
 * splits over every site and writes `bench/results/sites_blind.md`.
 * Prints one line per template and exits 1 when a control wins more.
 *
 * @module
 */
import { parseArgs } from "node:util";
import { BLIND_LIMIT, blindControls } from "../fixtures/sites/kit/blind.ts";
import { TEST_SEED_START } from "../fixtures/sites/kit/task.ts";
import { TEST_SPLIT_KEY_ENV, testSplitKey } from "../fixtures/sites/kit/private_split.ts";
import { siteByName } from "../fixtures/sites/registry.ts";

export { BLIND_LIMIT };

if (import.meta.main) {
  const { values, positionals } = parseArgs({
    args: Deno.args,
    allowPositionals: true,
    options: {
      train: { type: "string", default: "40" },
      test: { type: "string", default: "40" },
      keyed: { type: "boolean", default: false },
    },
  });
  const site = siteByName(positionals[0] ?? "");
  if (values.keyed && testSplitKey() === undefined) {
    Deno.env.set(TEST_SPLIT_KEY_ENV, crypto.randomUUID());
  }
  const train = Array.from({ length: Number(values.train) }, (_, i) => i);
  const test = Array.from({ length: Number(values.test) }, (_, i) => TEST_SEED_START + i);
  let ok = true;
  for (const report of blindControls(site, train, test)) {
    const worst = Math.max(...Object.values(report.rates));
    ok &&= worst <= BLIND_LIMIT;
    const rates = Object.entries(report.rates).map(([name, rate]) =>
      `${name} ${(rate * 100).toFixed(0)}%`
    ).join(" · ");
    console.log(
      `${site.name}/${report.template}: ${rates}${worst > BLIND_LIMIT ? "  ABOVE 5%" : ""}`,
    );
  }
  Deno.exit(ok ? 0 : 1);
}
