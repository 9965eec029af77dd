// `export --reverify` judges a recorded episode as the live step did: the recorded
// evaluator and its whole input (the instruction whose numbers are echoes, the harmless
// changes, the history rules) through `evaluatePlain` with the site's view reader, so the
// verdict is the live one with or without the private split's key.
import { assertEquals } from "@std/assert";
import { type JudgedOutcome, reverify } from "../../../adapters/http/catalog.ts";
import { bindTask } from "../../../fixtures/sites/kit/bind.ts";
import { generateTask, seededDatabase } from "../../../fixtures/sites/kit/generate.ts";
import { drawSeed, TEST_SPLIT_KEY_ENV } from "../../../fixtures/sites/kit/private_split.ts";
import { siteByName } from "../../../fixtures/sites/registry.ts";
import { inProcessState } from "../../fixtures/sites/_episode.ts";

Deno.test("reverify() gives the live verdict of a keyed test episode, with or without the key", async () => {
  const shop = siteByName("shop");
  const seeds = [1000, 1001, 1002];
  const records: { id: string; live: number; judged: JudgedOutcome }[] = [];
  Deno.env.set(TEST_SPLIT_KEY_ENV, "operator secret");
  try {
    for (const seed of seeds) {
      const task = generateTask(shop, "order-total", seed);
      // The instance runs on the keyed seed's data, as the server's catalog seeds it.
      const state = inProcessState(shop, seededDatabase(shop, drawSeed(seed)));
      const bound = bindTask(task, shop, state, { origin: "http://env-1.localhost" });
      await bound.begin?.();
      const truth = task.evaluator.kind === "answer" ? Number(task.evaluator.expected) : NaN;
      const order = task.instruction.match(/#(\d+)/u)?.[1] ?? "";
      // A right answer that restates the order number: an echo only the instruction tells.
      for (const answer of [`Order #${order} came to $${truth.toFixed(2)}.`, `${truth + 1}`]) {
        const verdict = await bound.verify({ answer, url: "http://env-1.localhost/orders" });
        const last = bound.lastJudged!;
        records.push({
          id: task.id,
          live: verdict.reward,
          judged: { ...last.input, evaluator: last.evaluator },
        });
      }
      assertEquals(records.at(-2)?.live, 1, `${task.id}: the right answer wins live`);
      assertEquals(records.at(-1)?.live, 0, `${task.id}: a wrong one loses live`);
    }
    for (const { id, live, judged } of records) {
      assertEquals(reverify(id, judged)?.reward, live, `${id} with the key`);
    }
  } finally {
    Deno.env.delete(TEST_SPLIT_KEY_ENV);
  }
  for (const { id, live, judged } of records) {
    assertEquals(reverify(id, judged)?.reward, live, `${id} without the key`);
  }
});

Deno.test("reverify() of a record without its evaluator reads the instruction as the live step did", async () => {
  const shop = siteByName("shop");
  const task = generateTask(shop, "order-total", 4);
  const bound = bindTask(task, shop, inProcessState(shop, seededDatabase(shop, 4)));
  await bound.begin?.();
  const truth = task.evaluator.kind === "answer" ? Number(task.evaluator.expected) : NaN;
  const order = task.instruction.match(/#(\d+)/u)?.[1] ?? "";
  const answer = `Order #${order} came to $${truth.toFixed(2)}.`;
  const live = await bound.verify({ answer, url: "http://x/" });
  assertEquals(live.reward, 1);
  // What records held before the evaluator's whole input was recorded.
  const old: JudgedOutcome = { answer, url: "http://x/", diff: bound.lastDiff! };
  assertEquals(reverify(task.id, old)?.reward, 1);
});
