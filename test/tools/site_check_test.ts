// `site:check --resume`: a long run stopped part-way goes on from its results file, running only
// the seeds it lacks and adding them to the site's entry (counts and the solver samples its
// medians are taken over), and refuses an entry that was made otherwise.
import { assertEquals, assertRejects } from "@std/assert";
import { main, mergeReports } from "../../tools/site_check.ts";
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
    "--spares keeps Incus containers ready: give --backend incus or shared",
  );
});

Deno.test("site:check refuses --image without Incus", async () => {
  await assertRejects(
    () => main(["wiki", "--image", "webserv-wiki-private"]),
    TypeError,
    "--image names an Incus image: give --backend incus or shared",
  );
});

Deno.test("site:check refuses a backend it does not know, naming those it does", async () => {
  await assertRejects(
    () => main(["wiki", "--backend", "docker"]),
    TypeError,
    'Invalid --backend "docker": expected one of fixture, incus, shared',
  );
});

Deno.test("site:check resumes across the Incus modes only, and the results name each mode", async () => {
  const dir = await Deno.makeTempDir();
  const json = `${dir}/sites.json`;
  try {
    // The same seeds as if run on Incus, then resumed on its shared runtime: one report.
    const incus = report("incus", [0]);
    const shared = report("incus-shared", [1]);
    const merged = mergeReports([incus, shared]);
    assertEquals(merged.backend, "incus+incus-shared");
    assertEquals(merged.seeds, [0, 1]);
    assertEquals(merged.templates[0]?.runs, 2);
    assertEquals(mergeReports([merged, report("incus-shared", [2])]).backend, "incus+incus-shared");
    assertEquals(mergeReports([incus, report("incus", [1])]).backend, "incus");

    // A fixture run cannot go on from seeds that ran in Incus.
    const { episodes: _episodes, ...summary } = merged;
    await Deno.writeTextFile(json, JSON.stringify({ version: 1, sites: { wiki: summary } }));
    await assertRejects(
      () => main(["wiki", "--seeds", "3", "--templates", TEMPLATES, "--json", json, "--resume"]),
      TypeError,
      'its "wiki" entry was run on the incus+incus-shared backend',
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

/** A passing one-template report of the wiki, as a run on `backend` over `seeds` writes it. */
function report(backend: string, seeds: number[]): SiteReport {
  return {
    site: "wiki",
    backend,
    seeds,
    templates: [{
      id: TEMPLATES,
      kind: "information",
      difficulty: "easy",
      distinct: 40,
      runs: seeds.length,
      solved: seeds.length,
      negatives: { nothing: seeds.length, claim: seeds.length, random: seeds.length },
      resetExact: seeds.length,
      adversaries: { runs: 0, held: 0 },
      equivalents: { runs: 0, held: 0 },
      wordGuesses: { runs: 0, won: 0 },
      rejected: 0,
      solverSteps: seeds.map(() => 2),
      solverSeconds: seeds.map(() => 0.4),
      medianSteps: 2,
      medianSeconds: 0.4,
      failures: [],
    }],
    isolation: { stateChannel: true, otherEnv: true, neighbour: true, failures: [] },
    mutations: { reached: 0, killed: 0, survived: [], baseline: [], survivors: [], score: 100 },
    episodes: [],
    ok: true,
  };
}
