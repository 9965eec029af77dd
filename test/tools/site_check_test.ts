// `site:check --resume`: a long run stopped part-way goes on from its results file, running only
// the seeds it lacks and adding them to the site's entry (counts and the solver samples its
// medians are taken over), and refuses an entry that was made otherwise.
import { assertEquals, assertRejects } from "@std/assert";
import { main } from "../../tools/site_check.ts";
import type { SiteReport } from "../../fixtures/sites/kit/check_types.ts";

const TEMPLATES = "entry-views";

async function entry(json: string): Promise<Omit<SiteReport, "episodes">> {
  const file = JSON.parse(await Deno.readTextFile(json)) as {
    sites: Record<string, Omit<SiteReport, "episodes">>;
  };
  return file.sites.wiki as Omit<SiteReport, "episodes">;
}

Deno.test("site:check --resume runs only the seeds the results file lacks, and adds them", async () => {
  const dir = await Deno.makeTempDir();
  const json = `${dir}/sites.json`;
  try {
    const first = await main(["wiki", "--seeds", "1", "--templates", TEMPLATES, "--json", json]);
    assertEquals(first.seeds, [0]);
    const [head] = (await entry(json)).templates;
    assertEquals(head?.runs, 1);
    assertEquals(head?.solverSteps.length, 1);

    const resumed = await main(
      ["wiki", "--seeds", "2", "--templates", TEMPLATES, "--json", json, "--resume"],
    );
    // Only seed 1 ran: the episodes are this run's, the counts the sum of both.
    assertEquals([...new Set(resumed.episodes.map((e) => e.task))], ["wiki/entry-views/1"]);
    assertEquals(resumed.seeds, [0, 1]);
    const merged = await entry(json);
    assertEquals(merged.seeds, [0, 1]);
    const [template] = merged.templates;
    assertEquals(template?.runs, 2);
    assertEquals(template?.solved, 2);
    assertEquals(template?.solverSteps.length, 2);
    assertEquals(template?.solverSeconds.length, 2);
    assertEquals(merged.ok, true);

    // Nothing left to run: the entry stays as it was.
    const again = await main(
      ["wiki", "--seeds", "2", "--templates", TEMPLATES, "--json", json, "--resume"],
    );
    assertEquals(again.episodes.length, 0);
    assertEquals((await entry(json)).templates[0]?.runs, 2);

    await assertRejects(
      () => main(["wiki", "--seeds", "3", "--json", json, "--resume"]),
      TypeError,
      "holds the templates entry-views",
    );
    await assertRejects(
      () => main(["wiki", "--seeds", "3", "--templates", TEMPLATES, "--resume"]),
      TypeError,
      "give --json FILE",
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("site:check refuses --spares that are not a count, or without Incus", async () => {
  await assertRejects(() => main(["wiki", "--spares=-1"]), TypeError, 'Invalid --spares "-1"');
  await assertRejects(() => main(["wiki", "--spares", "two"]), TypeError, 'Invalid --spares "two"');
  await assertRejects(
    () => main(["wiki", "--spares", "1"]),
    TypeError,
    "--spares keeps Incus containers ready: give --backend incus",
  );
});

Deno.test("site:check refuses --image without Incus", async () => {
  await assertRejects(
    () => main(["wiki", "--image", "webserv-wiki-private"]),
    TypeError,
    "--image names an Incus image: give --backend incus",
  );
});
