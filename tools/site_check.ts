/**
 * `deno task site:check <site> [--seeds N] [--from S] [--backend fixture|incus|shared]
 * [--templates a,b] [--concurrency K] [--chunk C] [--json FILE] [--md FILE]
 * [--resume] [--spares S] [--image NAME]`: runs the
 * site checker (`fixtures/sites/kit/check.ts`) on a shipped site over N
 * seeds, printing a line per template and seed while it runs and a table per
 * template at the end. `--concurrency K` runs K episodes at once, each on its
 * own instance. `--chunk C` runs the seeds C at a time and rewrites the
 * results files after every chunk, so a long run that is stopped keeps the
 * seeds it finished; `--resume` then goes on from the site's entry in the
 * `--json` file: the seeds it holds are not run again, and the new seeds'
 * counts and solver samples are added to it. `--spares S` (Incus) keeps S
 * ready copies of the seed launched ahead, so that each episode's reset takes
 * one instead of waiting for a copy and the application's start; each chunk
 * gets its own sandbox, so a finished seed's spares do not outlive it.
 * `--image NAME` (Incus) opens that image instead of `webserv-<site>`: a
 * private build (`deno task image:apps --alias=NAME APP`) of a checkout whose
 * seeding differs from the one other checkers on the machine use.
 * `--backend shared` runs a real application's seeds on its shared runtime
 * (one container per seed serves every env, each env with a database of its
 * own, `SharedRuntimeSandbox`): the same image and verifiers, with resets in
 * milliseconds instead of seconds; `--spares S` is then the database servers
 * started ahead. A run on one Incus mode may be resumed on the other: the
 * results name every backend their seeds ran on.
 * Exits with status 1 on any
 * failure, 2 on bad arguments.
 *
 * The Incus backend needs the site's image (`deno task image
 * fixtures/sites/<site>/mod.ts`, or `deno task image:apps wordpress` for
 * WordPress, which only runs there) and a storage pool (`WEBSERV_INCUS_POOL`,
 * default `webserv-btrfs`).
 *
 * @module
 */
import { parseArgs } from "node:util";
import { join, resolve } from "node:path";
import { Browser } from "../engine/browser/browser.ts";
import { checkSite, formatReport, solverMedians } from "../fixtures/sites/kit/check.ts";
import type {
  MutationReport,
  SiteReport,
  TemplateReport,
} from "../fixtures/sites/kit/check_types.ts";
import { mutationScore } from "../fixtures/sites/kit/mutations.ts";
import { siteByName } from "../fixtures/sites/registry.ts";
import { FixtureSandbox } from "../sandboxes/fixture/fixture_sandbox.ts";
import { Gateway } from "../sandboxes/gateway.ts";
import { IncusSandbox } from "../sandboxes/incus/incus_sandbox.ts";
import { SharedRuntimeSandbox } from "../sandboxes/incus/shared_runtime_sandbox.ts";
import type { Sandbox } from "../sandboxes/types.ts";

/** The sandbox kind each `--backend` opens (the name its reports carry). */
const BACKENDS = { fixture: "fixture", incus: "incus", shared: "incus-shared" } as const;

/**
 * Backends whose seeds one report may hold: the two Incus modes run the
 * same image with the same verifiers, one container per env or one per seed.
 */
const FAMILIES: readonly (readonly string[])[] = [["fixture"], ["incus", "incus-shared"]];

const USAGE =
  "usage: deno task site:check <site> [--seeds N] [--from S] [--backend fixture|incus|shared] [--templates a,b] [--concurrency K] [--chunk C] [--json FILE] [--md FILE] [--resume] [--spares S] [--image NAME]";

/**
 * Runs the checker as the command line asks.
 *
 * @param args the command-line arguments
 * @returns the report
 * @throws {TypeError} when the arguments are wrong
 */
export async function main(args: string[]): Promise<SiteReport> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      seeds: { type: "string", default: "3" },
      from: { type: "string", default: "0" },
      backend: { type: "string", default: "fixture" },
      templates: { type: "string" },
      concurrency: { type: "string", default: "1" },
      chunk: { type: "string" },
      json: { type: "string" },
      md: { type: "string" },
      resume: { type: "boolean", default: false },
      spares: { type: "string", default: "0" },
      image: { type: "string" },
    },
  });
  const [name, ...rest] = positionals;
  if (name === undefined || rest.length > 0) throw new TypeError(USAGE);
  const count = Number(values.seeds);
  const from = Number(values.from);
  if (!Number.isInteger(count) || count < 1) {
    throw new TypeError(`Invalid --seeds "${values.seeds}": expected an integer >= 1`);
  }
  if (!Number.isInteger(from) || from < 0) {
    throw new TypeError(`Invalid --from "${values.from}": expected an integer >= 0`);
  }
  const concurrency = Number(values.concurrency);
  if (!Number.isInteger(concurrency) || concurrency < 1) {
    throw new TypeError(
      `Invalid --concurrency "${values.concurrency}": expected an integer >= 1`,
    );
  }
  const chunk = values.chunk === undefined ? count : Number(values.chunk);
  if (!Number.isInteger(chunk) || chunk < 1) {
    throw new TypeError(`Invalid --chunk "${values.chunk}": expected an integer >= 1`);
  }
  const spares = Number(values.spares);
  if (!Number.isInteger(spares) || spares < 0) {
    throw new TypeError(`Invalid --spares "${values.spares}": expected an integer >= 0`);
  }
  if (!Object.hasOwn(BACKENDS, values.backend)) {
    throw new TypeError(
      `Invalid --backend "${values.backend}": expected one of ${Object.keys(BACKENDS).join(", ")}`,
    );
  }
  const kind = BACKENDS[values.backend as keyof typeof BACKENDS];
  if (spares > 0 && kind === "fixture") {
    throw new TypeError("--spares keeps Incus containers ready: give --backend incus or shared");
  }
  if (values.image !== undefined && kind === "fixture") {
    throw new TypeError("--image names an Incus image: give --backend incus or shared");
  }
  const site = siteByName(name);
  if (values.resume && values.json === undefined) {
    throw new TypeError(
      "--resume goes on from the site's entry in the --json file: give --json FILE",
    );
  }
  const templates = values.templates?.split(",").map((t) => t.trim()).filter(Boolean);
  const previous = values.resume
    ? await previousEntry(values.json ?? "", site.name, {
      backend: kind,
      templates: templates ?? site.templates.map((template) => template.id),
    })
    : undefined;
  const seeds = Array.from({ length: count }, (_, i) => from + i)
    .filter((seed) => !previous?.seeds.includes(seed));
  await using gateway = new Gateway();
  const image = values.image ?? `webserv-${site.name}`;
  const pool = Deno.env.get("WEBSERV_INCUS_POOL") ?? "webserv-btrfs";
  // Several checkers may share one Incus: WEBSERV_INCUS_PREFIX keeps their instances apart.
  const prefix = Deno.env.get("WEBSERV_INCUS_PREFIX") ?? "wsc-";
  // A real application starts its database and web server in each env, and the base of a
  // seed imports its content at its first start (MediaWiki's wiki: minutes under load).
  const readyTimeoutMs = 600_000;
  const openSandbox = async (): Promise<Sandbox> =>
    kind === "fixture"
      ? new FixtureSandbox(site, { gateway })
      : kind === "incus"
      ? await IncusSandbox.open({
        gateway,
        image,
        pool,
        prefix,
        readyTimeoutMs,
        spares,
        // Each seed's base holds its seeded database (hundreds of MiB for an application): a run
        // over 20 seeds keeping them all fills the pool, so each chunk's sandbox removes its own.
        removeBases: true,
      })
      : await SharedRuntimeSandbox.open({
        gateway,
        image,
        pool,
        prefix,
        readyTimeoutMs,
        ...(spares > 0 ? { spares } : {}),
        removeBases: true,
      });
  // Opened once before the browser starts, so a wrong backend or a missing image fails at once.
  await (await openSandbox())[Symbol.asyncDispose]();
  await using browser = await Browser.launch();
  const started = performance.now();
  console.error(
    `site:check ${site.name}: ${
      templates?.length ?? site.templates.length
    } templates × ${seeds.length} seeds (${
      seeds.length > 0 ? `${seeds[0]}–${seeds.at(-1)}` : "none left"
    }) on the ${values.backend} backend${
      previous ? `, going on from ${previous.seeds.length} seeds in ${values.json}` : ""
    }`,
  );
  const parts: SiteReport[] = previous ? [previous] : [];
  let report: SiteReport | undefined = previous;
  for (let at = 0; at < seeds.length; at += chunk) {
    // A sandbox per chunk: closing it removes the spares of the seeds it ran.
    await using sandbox = await openSandbox();
    parts.push(
      await checkSite(browser, site, {
        sandbox,
        seeds: seeds.slice(at, at + chunk),
        concurrency,
        // Isolation is the site's, not the seeds': the first chunk checks it
        // (the resumed run's first chunk did).
        isolation: at === 0 && !previous,
        ...(templates ? { templates } : {}),
        onProgress: (line) =>
          console.error(
            `[${((performance.now() - started) / 1000).toFixed(0).padStart(4)} s] ${line}`,
          ),
      }),
    );
    report = mergeReports(parts);
    await writeResults(report, values.json, values.md);
  }
  if (!report) throw new TypeError(USAGE);
  console.log(formatReport(report));
  return report;
}

/**
 * Writes a report into the results files: the JSON holds one entry per site
 * (this report replaces its site's), the Markdown a table per site.
 *
 * @param report the report
 * @param json the JSON file, if any
 * @param md the Markdown file, if any
 */
async function writeResults(
  report: SiteReport,
  json: string | undefined,
  md: string | undefined,
): Promise<void> {
  const { episodes: _episodes, ...summary } = report;
  let sites: Record<string, Omit<SiteReport, "episodes">> = { [report.site]: summary };
  if (!json && !md) return;
  // Runs of several sites at once share the files: one writes at a time,
  // under a lock file in the temporary directory named after the files.
  const name = encodeURIComponent(resolve(json ?? md ?? "")).replaceAll("%", "_");
  await using lock = await Deno.open(
    join(Deno.env.get("TMPDIR") ?? "/tmp", `webserv-site-check-${name}.lock`),
    { create: true, write: true },
  );
  await lock.lock(true);
  if (json) {
    // One results file for every site: this run replaces its site's entry.
    try {
      const old: unknown = JSON.parse(await Deno.readTextFile(json));
      if (typeof old === "object" && old !== null && "sites" in old) {
        sites = { ...(old.sites as typeof sites), [report.site]: summary };
      }
    } catch (error) {
      if (!(error instanceof Deno.errors.NotFound || error instanceof SyntaxError)) throw error;
    }
    await Deno.writeTextFile(json, JSON.stringify({ version: 1, sites }, null, 2) + "\n");
  }
  if (md) {
    const body = Object.values(sites).map((site) => formatReport(site)).join("\n\n");
    await Deno.writeTextFile(
      md,
      `# Site checker results\n\nWritten by \`deno task site:check SITE --json ${
        json ?? "FILE"
      } --md ${md}\`: per template, the distinct tasks over the first seed's data, solver wins, negative controls at 0 (do nothing, claim only, random), resets that restored the seeded hash exactly, and the median steps and seconds of a solver episode.\n\n${body}\n`,
    );
  }
}

/**
 * Merges the reports of runs of one site over disjoint seeds into one, as if
 * one run had covered every seed: counts add up, medians are taken over
 * every solver episode, the isolation checks pass only when each run's did.
 *
 * @param parts the reports, in seed order
 * @returns the merged report
 * @throws {TypeError} when there is no report
 */
export function mergeReports(parts: readonly SiteReport[]): SiteReport {
  const [first] = parts;
  if (!first) throw new TypeError("No report to merge");
  if (parts.length === 1) return first;
  const episodes = parts.flatMap((part) => part.episodes);
  const templates = first.templates.map((head): TemplateReport => {
    const all = parts.flatMap((part) => part.templates.filter((t) => t.id === head.id));
    const sum = (of: (t: TemplateReport) => number) => all.reduce((n, t) => n + of(t), 0);
    const samples = {
      solverSteps: all.flatMap((t) => t.solverSteps),
      solverSeconds: all.flatMap((t) => t.solverSeconds),
    };
    return {
      ...head,
      runs: sum((t) => t.runs),
      solved: sum((t) => t.solved),
      negatives: {
        nothing: sum((t) => t.negatives.nothing),
        claim: sum((t) => t.negatives.claim),
        random: sum((t) => t.negatives.random),
      },
      resetExact: sum((t) => t.resetExact),
      rejected: sum((t) => t.rejected),
      adversaries: {
        runs: sum((t) => t.adversaries.runs),
        held: sum((t) => t.adversaries.held),
      },
      equivalents: {
        runs: sum((t) => t.equivalents.runs),
        held: sum((t) => t.equivalents.held),
      },
      // Each run guessed on its own first seed's data.
      wordGuesses: {
        runs: sum((t) => t.wordGuesses?.runs ?? 0),
        won: sum((t) => t.wordGuesses?.won ?? 0),
      },
      ...samples,
      ...solverMedians(samples),
      failures: all.flatMap((t) => t.failures),
    };
  });
  const isolation = {
    stateChannel: parts.every((part) => part.isolation.stateChannel),
    otherEnv: parts.every((part) => part.isolation.otherEnv),
    neighbour: parts.every((part) => part.isolation.neighbour),
    failures: parts.flatMap((part) => part.isolation.failures),
  };
  return {
    site: first.site,
    // A run resumed on another mode of the same family names both, in the order they ran.
    backend: [...new Set(parts.flatMap((part) => part.backend.split("+")))].join("+"),
    seeds: parts.flatMap((part) => part.seeds),
    templates,
    isolation,
    mutations: mergeMutations(parts.map((part) => part.mutations)),
    episodes,
    ok: parts.every((part) => part.ok),
  };
}

/**
 * The mutation checks of runs over disjoint seeds as one: a mutant killed in
 * any run is killed; a survivor survives every run that it reached.
 *
 * @param parts each run's mutation check
 * @returns the merged check
 */
function mergeMutations(parts: readonly MutationReport[]): MutationReport {
  const ran = parts.filter((part) => part.reached > 0);
  const survived = (ran[0]?.survived ?? []).filter((id) =>
    ran.every((part) => part.survived.includes(id))
  );
  const reached = Math.max(0, ...parts.map((part) => part.reached));
  const survivors = (ran[0]?.survivors ?? []).filter((line) =>
    survived.some((id) => line.startsWith(`mutant ${id} `))
  );
  const killed = reached - survived.length;
  return {
    reached,
    killed,
    survived,
    baseline: parts.flatMap((part) => part.baseline),
    survivors,
    score: mutationScore(killed, reached),
  };
}

/**
 * The site's entry in a results file, as a report to go on from: its seeds
 * are not run again. A `TypeError` when the entry was made otherwise (another
 * backend, other templates, before solver samples were kept).
 *
 * @param json the results file
 * @param site the site's name
 * @param run the backend and templates of the run that goes on
 * @returns the entry (with no episodes), or `undefined` when the file or the entry is missing
 */
async function previousEntry(
  json: string,
  site: string,
  run: { backend: string; templates: readonly string[] },
): Promise<SiteReport | undefined> {
  let text: string;
  try {
    text = await Deno.readTextFile(json);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return undefined;
    throw error;
  }
  const file = JSON.parse(text) as { sites?: Record<string, Omit<SiteReport, "episodes">> };
  const entry = file.sites?.[site];
  if (!entry) return undefined;
  const refuse = (why: string) =>
    new TypeError(`Cannot --resume from ${json}: its "${site}" entry ${why}; run without --resume`);
  const family = FAMILIES.find((members) => members.includes(run.backend)) ?? [run.backend];
  if (!entry.backend.split("+").every((backend) => family.includes(backend))) {
    throw refuse(`was run on the ${entry.backend} backend`);
  }
  const ids = entry.templates.map((template) => template.id);
  if (ids.join(",") !== run.templates.join(",")) {
    throw refuse(`holds the templates ${ids.join(", ")}`);
  }
  if (entry.templates.some((template) => !Array.isArray(template.solverSteps))) {
    throw refuse("was written before solver samples were kept");
  }
  // An entry written before the mutation check counts as a run that reached no mutant.
  const mutations: MutationReport = entry.mutations ??
    { reached: 0, killed: 0, survived: [], baseline: [], survivors: [], score: 100 };
  return { ...entry, mutations, episodes: [] };
}

if (import.meta.main) {
  try {
    const report = await main(Deno.args);
    Deno.exit(report.ok ? 0 : 1);
  } catch (error) {
    console.error(error instanceof TypeError ? error.message : error);
    Deno.exit(2);
  }
}
