/**
 * `deno task site:blind <site> [--train N] [--test M]`: the blind controls of
 * a site's answer and page templates (`fixtures/sites/kit/blind.ts`): the most
 * frequent train truth per template, the instruction's format example and a
 * seed-only predictor, learned on train seeds `0..N-1` and scored on test
 * seeds `1000..1000+M-1`; each must win at most 5% of a template's test tasks.
 * Prints one line per template and exits 1 when a control wins more.
 *
 * @module
 */
import { parseArgs } from "node:util";
import { BLIND_LIMIT, blindControls } from "../fixtures/sites/kit/blind.ts";
import { TEST_SEED_START } from "../fixtures/sites/kit/task.ts";
import { siteByName } from "../fixtures/sites/registry.ts";

export { BLIND_LIMIT };

if (import.meta.main) {
  const { values, positionals } = parseArgs({
    args: Deno.args,
    allowPositionals: true,
    options: { train: { type: "string", default: "40" }, test: { type: "string", default: "40" } },
  });
  const site = siteByName(positionals[0] ?? "");
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
