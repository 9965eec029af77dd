/**
 * One share of `bench/sites_blind.ts`'s work, in a process of its own so
 * that shares run side by side and each split's key stays in its own
 * environment: `learn SITE SEEDS` prints the blind models learned on those
 * train seeds; `score SITE SEEDS MODELS_FILE` prints the counts scored on
 * those test seeds (the split is the environment's: keyed when
 * `WEBSERV_TEST_SPLIT_KEY` is set). SEEDS is `FROM-TO`, both included.
 *
 * @module
 */
import { type BlindTemplateModel, learnBlind, scoreBlind } from "../fixtures/sites/kit/blind.ts";
import { siteByName } from "../fixtures/sites/registry.ts";

const [mode, name = "", range = "", modelsFile] = Deno.args;
const [from, to] = range.split("-").map(Number);
if (from === undefined || to === undefined || !(to >= from)) {
  throw new TypeError(`Expected seeds as FROM-TO: got "${range}"`);
}
const seeds = Array.from({ length: to - from + 1 }, (_, i) => from + i);
const site = siteByName(name);
if (mode === "learn") {
  console.log(JSON.stringify(learnBlind(site, seeds)));
} else if (mode === "score" && modelsFile !== undefined) {
  const models = JSON.parse(Deno.readTextFileSync(modelsFile)) as BlindTemplateModel[];
  console.log(JSON.stringify(scoreBlind(site, models, seeds)));
} else {
  throw new TypeError(
    `Expected "learn SITE SEEDS" or "score SITE SEEDS MODELS_FILE": got "${mode}"`,
  );
}
