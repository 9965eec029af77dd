/**
 * Where sessions come from: the recreated sites (`SITES`: shop, forum,
 * admin) with their task templates, and the demo site with one small task
 * the server's own tests use. A task is generated from its id
 * (`site/template/seed`) by the site kit and bound, per session, to the
 * state of that session's own sandbox instance (`bindTask`).
 *
 * Listing describes a task from its template alone (id, site, template,
 * seed, split, difficulty, kind): no database is seeded for a page of tasks,
 * so a listing carries no `instruction` for a kit site's task (it is drawn
 * from the seed's data); a session opened on the task has it. Generating the
 * task when a session opens, and judging its episode, run in the kit's
 * workers ({@linkcode CatalogOptions.workers}), off the server's event loop.
 *
 * What the verifier judged at the end of an episode (the answer, the final
 * URL, the state diff) is kept on the served task ({@linkcode ServedTask}),
 * so the trajectory can record it and `deno task export --reverify` can
 * score it again with the kit's `evaluate()`.
 *
 * @module
 */
import type { EnvTask, EpisodeOutcome, Verdict } from "../../mod.ts";
import type { Instance, Site } from "../../sandboxes/mod.ts";
import {
  bindTask,
  type Evaluator,
  generateTask,
  type Judge,
  parseTaskId,
  SeedError,
  type SiteModule,
  SITES,
  type Split,
  splitOf,
  type StateDiff,
  type StateSdk,
  type Task,
  taskId,
  TEST_SEED_START,
} from "../../fixtures/sites/mod.ts";
import {
  acceptedProposal,
  drawSeed,
  evaluatePlain,
  isProposalTemplate,
  isSeed,
  KitWorkers,
  MAX_SEED,
  OffloadError,
  type PlainEvaluationInput,
} from "../../fixtures/sites/kit/mod.ts";
import demoSite from "../../fixtures/sites/demo/mod.ts";
import { HttpError } from "./http_error.ts";
import type { ListedTask, TaskBody } from "./protocol.ts";

/**
 * What the verifier judged at the end of an episode: the evaluator's whole
 * input (the answer, the final URL, the origin, the state diff, the
 * instruction whose numbers are echoes, the changes the site declares
 * harmless, its history rules, the rows a reason names) and the evaluator
 * itself, so that judging it again needs neither the private split's key
 * nor the task regenerated. Records written before the input was whole hold
 * only `answer`, `url`, `origin` and `diff`.
 */
export interface JudgedOutcome extends PlainEvaluationInput {
  /** The agent's answer, when it gave one. */
  answer?: string | undefined;
  /** The active tab's URL when the episode was judged. */
  url: string;
  /** The instance's origin the `url` evaluator compares against. */
  origin?: string;
  /** The state diff since the episode's mark, when the evaluator judges state. */
  diff?: StateDiff;
  /** The task's evaluator as the episode ran it (its truth included). */
  evaluator?: Evaluator;
}

/** A task bound to one instance, as a session runs it. */
export interface ServedTask extends EnvTask {
  /** What the last `verify()` judged; absent before the first. */
  readonly judged: JudgedOutcome | undefined;
  /**
   * Binds the same task to a copy of the instance taken mid-episode,
   * carrying what the episode's start recorded (the state mark); without
   * it, a fork binds the task afresh.
   *
   * @param copy the fork's instance
   * @returns the task on the copy
   */
  fork?(copy: Instance): Promise<ServedTask>;
}

/** What a session is placed on: a site and seed, and a task bound to the instance. */
export interface Placement {
  /** The site, served by the backend. */
  site: Site;
  /** The seed of its data. */
  seed: number;
  /** The task as listed; `null` when the session has no task. */
  task: TaskBody | null;
  /** Binds the task to an instance, once it runs; absent without a task. */
  bind?: (instance: Instance) => ServedTask;
}

/** Which tasks {@linkcode Catalog.list} lists. */
export interface TaskQuery {
  /** Only this site's tasks. */
  site?: string;
  /** Only this template's tasks. */
  template?: string;
  /**
   * Only seeds of this split.
   *
   * @default {"train"}
   */
  split?: Split;
  /**
   * How many tasks to skip.
   *
   * @default {0}
   */
  offset?: number;
  /**
   * The most tasks listed.
   *
   * @default {50}
   */
  limit?: number;
}

/** A page of tasks. */
export interface TaskPage {
  /** The tasks, seed by seed, every chosen template for each seed. */
  tasks: ListedTask[];
  /** The offset of the next page; `null` on the last. */
  next_offset: number | null;
}

/** The sites and tasks a server offers. */
export interface Catalog {
  /** The sites by name. */
  readonly sites: ReadonlyMap<string, Site>;
  /** The workers its tasks are generated and judged in, when it has them. */
  readonly workers?: KitWorkers;
  /**
   * Lists tasks, a page at a time.
   *
   * @param query the site, template, split and page
   * @returns the page
   * @throws {HttpError} 404 for an unknown site or template
   */
  list(query?: TaskQuery): TaskPage;
  /**
   * How many tasks {@linkcode Catalog.list} pages through for a query.
   *
   * @param query the site, template and split (offset and limit do not count)
   * @returns the number of tasks
   * @throws {HttpError} 404 for an unknown site or template
   */
  count(query?: TaskQuery): number;
  /**
   * The ids of the tasks {@linkcode Catalog.list} lists, without generating
   * them (cheap: a task is only made when a session opens on it).
   *
   * @param query the site, template, split and page
   * @returns the ids
   * @throws {HttpError} 404 for an unknown site or template
   */
  ids(query?: TaskQuery): string[];
  /**
   * Resolves a task id, or a site with template and seed.
   *
   * @param spec the request's fields
   * @returns the placement, its task generated (in a worker when the catalog has them)
   * @throws {HttpError} 404 for an unknown task, site or template; 400 for a
   * bad id or a seed out of range; 503 when generation fails or overruns
   */
  resolve(
    spec: { task?: string; site?: string; template?: string; seed?: number },
  ): Promise<Placement>;
}

interface Source {
  site: Site;
  templates: readonly string[];
  /** Whether the site's accepted task proposals run as tasks (kit sites). */
  proposals?: boolean;
  /** The task as listed: from the template alone, nothing seeded. */
  describe(template: string, seed: number): ListedTask;
  /** The task generated, as a session shows it, and how to bind it to an instance. */
  place(
    template: string,
    seed: number,
  ): Promise<{ task: TaskBody; bind: (instance: Instance) => ServedTask }>;
}

/** Options of {@linkcode defaultCatalog}. */
export interface CatalogOptions {
  /**
   * Whether the demo site is in it (the shared backend serves the real
   * applications alone).
   *
   * @default {true}
   */
  demo?: boolean;
  /**
   * The workers that generate tasks and judge episodes of the shipped sites;
   * without them (or for a site not shipped) both run in this thread.
   */
  workers?: KitWorkers;
}

/**
 * The catalog `deno task serve` uses: the recreated sites of `SITES` and
 * the demo site.
 *
 * @param sites the recreated sites
 * @param options whether the demo site is in it, and the kit's workers
 * @returns the catalog
 */
export function defaultCatalog(
  sites: readonly SiteModule[] = Object.values(SITES),
  options: CatalogOptions = {},
): Catalog {
  const sources = new Map<string, Source>();
  for (const site of sites) sources.set(site.name, kitSource(site, options.workers));
  if (options.demo ?? true) sources.set(demoSite.name, DEMO);
  const siteMap = new Map([...sources].map(([name, source]) => [name, source.site]));
  function source(name: string | undefined): Source {
    const found = name === undefined ? undefined : sources.get(name);
    if (!found) {
      throw new HttpError(
        404,
        "unknown-site",
        `No site "${name}": the sites are ${[...sources.keys()].map((n) => `"${n}"`).join(", ")}`,
      );
    }
    return found;
  }
  function template(from: Source, id: string): string {
    if (!from.templates.includes(id)) {
      throw new HttpError(404, "unknown-template", `No template "${id}" on "${from.site.name}"`);
    }
    return id;
  }
  // An accepted task proposal runs like a template's task; it is not one of
  // the site's templates, so it is looked up among the accepted ones.
  function proposal(from: Source, id: string, seed: number): string {
    const task = `${from.site.name}/${id}/${seed}`;
    if (!acceptedProposal(task)) {
      throw new HttpError(
        404,
        "unknown-proposal",
        `No accepted task proposal "${task}": GET /v1/tasks/proposals lists them, POST /v1/tasks/proposals proposes one`,
      );
    }
    return id;
  }
  function chosen(query: TaskQuery) {
    const from = query.site === undefined ? [...sources.values()] : [source(query.site)];
    const pairs = from.flatMap((site) =>
      (query.template === undefined ? site.templates : [template(site, query.template)])
        .map((id) => ({ from: site, id }))
    );
    const split = query.split ?? "train";
    const first = split === "train" ? 0 : TEST_SEED_START;
    const last = split === "train" ? TEST_SEED_START - 1 : MAX_SEED;
    return { pairs, first, last };
  }
  return {
    sites: siteMap,
    ...(options.workers ? { workers: options.workers } : {}),
    count(query = {}) {
      const { pairs, first, last } = chosen(query);
      return pairs.length * (last - first + 1);
    },
    ids(query = {}) {
      const { pairs, first, last } = chosen(query);
      const ids: string[] = [];
      const end = Math.min(
        (query.offset ?? 0) + (query.limit ?? 50),
        pairs.length * (last - first + 1),
      );
      for (let index = query.offset ?? 0; index < end; index++) {
        const { from, id } = pairs[index % pairs.length]!;
        ids.push(`${from.site.name}/${id}/${first + Math.floor(index / pairs.length)}`);
      }
      return ids;
    },
    list(query = {}) {
      const { pairs, first, last } = chosen(query);
      const offset = query.offset ?? 0;
      const limit = query.limit ?? 50;
      const tasks: ListedTask[] = [];
      if (pairs.length === 0) return { tasks, next_offset: null };
      let index = offset;
      for (; tasks.length < limit; index++) {
        const seed = first + Math.floor(index / pairs.length);
        if (seed > last) break;
        const { from, id } = pairs[index % pairs.length]!;
        tasks.push(from.describe(id, seed));
      }
      const more = first + Math.floor(index / pairs.length) <= last;
      return { tasks, next_offset: more ? index : null };
    },
    async resolve(spec) {
      let { site: siteName, template: templateId, seed } = spec;
      if (spec.task !== undefined) {
        try {
          ({ site: siteName, template: templateId, seed } = parseTaskId(spec.task));
        } catch (error) {
          if (error instanceof SeedError) throw badSeed(spec.task.split("/")[2]);
          throw new HttpError(400, "bad-task-id", (error as Error).message);
        }
      }
      if (seed !== undefined && !isSeed(seed)) throw badSeed(seed);
      const from = source(siteName);
      const finalSeed = seed ?? 0;
      if (templateId === undefined) return { site: from.site, seed: finalSeed, task: null };
      const id = from.proposals && isProposalTemplate(templateId)
        ? proposal(from, templateId, finalSeed)
        : template(from, templateId);
      const { task, bind } = await from.place(id, finalSeed);
      // A kit site's task of a private test split (kit sources are those that run
      // proposals) runs on its keyed seed's data, the data it was generated from
      // (`private_split.ts`); that seed is never shown to the client.
      const dataSeed = from.proposals ? drawSeed(finalSeed) : finalSeed;
      return { site: from.site, seed: dataSeed, task, bind };
    },
  };
}

/**
 * The refusal of a seed out of range, wherever it entered.
 *
 * @param seed the seed as given
 * @returns a 400 `bad-seed`
 */
export function badSeed(seed: unknown): HttpError {
  return new HttpError(
    400,
    "bad-seed",
    `Seed ${String(seed)} is out of range: a seed is an integer from 0 to ${MAX_SEED}`,
  );
}

function kitSource(site: SiteModule, workers: KitWorkers | undefined): Source {
  const offloaded = workers && KitWorkers.serves(site) ? workers : undefined;
  const generate = async (template: string, seed: number): Promise<Task> => {
    try {
      // An accepted proposal is kept in this process, already generated.
      return offloaded && !isProposalTemplate(template)
        ? await offloaded.generateTask(site.name, template, seed)
        : generateTask(site, template, seed);
    } catch (error) {
      if (error instanceof SeedError || (error as Error).name === "SeedError") throw badSeed(seed);
      if (error instanceof OffloadError) {
        throw new HttpError(503, error.failure === "busy" ? "busy" : error.code, error.message, {
          "Retry-After": "1",
        });
      }
      // A template that cannot make this task is our fault, not the caller's.
      throw new HttpError(503, "bad-template", (error as Error).message);
    }
  };
  const judge: Judge | undefined = offloaded &&
    ((evaluator, input) => offloaded.evaluate(site.name, evaluator, input));
  return {
    site,
    templates: site.templates.map((t) => t.id),
    proposals: true,
    describe(template, seed) {
      const made = site.templates.find((t) => t.id === template);
      return {
        id: taskId(site.name, template, seed),
        site: site.name,
        template,
        seed,
        split: splitOf(seed),
        ...(made ? { difficulty: made.difficulty, kind: made.kind } : {}),
      };
    },
    async place(template, seed) {
      const task = await generate(template, seed);
      const body = isProposalTemplate(template)
        // A proposal is an information task no solver has won.
        ? { ...describe(task, "information"), proven: false as const }
        : describe(task, site.templates.find((t) => t.id === template)?.kind);
      const bind = (instance: Instance): ServedTask => {
        if (!instance.state) {
          throw new HttpError(
            503,
            "no-state",
            `The instance of "${site.name}" has no state channel to verify with`,
          );
        }
        const bound = bindTask(task, site, instance.state, {
          origin: instance.origin,
          ...(judge ? { judge } : {}),
        });
        let judged: JudgedOutcome | undefined;
        const served: ServedTask & { sdk: StateSdk } = {
          id: bound.id,
          instruction: bound.instruction,
          startUrl: bound.startUrl,
          sdk: bound.sdk,
          get judged() {
            return judged;
          },
          begin: () => bound.begin!(),
          async fork(copy: Instance): Promise<ServedTask> {
            const child = bind(copy) as ServedTask & { sdk: StateSdk };
            // The fork's episode began with the parent's: it diffs against the same mark.
            await bound.sdk.copyMark(child.sdk);
            return child;
          },
          async verify(outcome: EpisodeOutcome): Promise<Verdict> {
            const verdict = await bound.verify(outcome);
            const last = bound.lastJudged;
            const diff = bound.lastDiff;
            judged = last ? { ...last.input, evaluator: last.evaluator } : {
              ...(outcome.answer !== undefined ? { answer: outcome.answer } : {}),
              url: outcome.url,
              origin: instance.origin,
              ...(diff ? { diff } : {}),
            };
            return verdict;
          },
        };
        return served;
      };
      return { task: body, bind };
    },
  };
}

function describe(task: Task, kind: string | undefined): TaskBody {
  return {
    id: task.id,
    site: task.site,
    template: task.template,
    seed: task.seed,
    instruction: task.instruction,
    split: splitOf(task.seed),
    difficulty: task.difficulty,
    ...(kind ? { kind } : {}),
  };
}

/**
 * Scores a recorded outcome again with the kit's evaluator: what `deno task
 * export --reverify` runs. The path is the live step's: `evaluatePlain` with
 * the site's view reader on the recorded input and the recorded evaluator,
 * so the verdict is the live one with or without the private split's key.
 * A record that holds no evaluator (written before it was recorded) is
 * judged with the task regenerated from its id, the instruction and the
 * site's harmless changes and history rules filled in as the live step had
 * them.
 *
 * @param taskId the task id, such as `"shop/add-to-cart/7"`
 * @param judged what the verifier judged
 * @param sites the recreated sites
 * @returns the verdict, or `undefined` when the task is not a kit task (the demo's)
 * @throws {TypeError} when the id is malformed or names an unknown template
 */
export function reverify(
  taskId: string,
  judged: JudgedOutcome,
  sites: Readonly<Record<string, SiteModule>> = SITES,
): Verdict | undefined {
  const { site: name, template, seed } = parseTaskId(taskId);
  const site = Object.hasOwn(sites, name) ? sites[name] : undefined;
  if (!site) return undefined;
  const { evaluator: recorded, ...input } = judged;
  if (recorded) return evaluatePlain(recorded, input, site.view);
  const task = generateTask(site, template, seed);
  return evaluatePlain(task.evaluator, {
    instruction: task.instruction,
    harmless: site.harmless,
    ...(site.tracked.history ? { history: site.tracked.history } : {}),
    ...input,
  }, site.view);
}

const WORDS = ["apples", "bread", "coffee", "dates", "eggs", "flour", "grapes", "honey"];

// The demo site's one task, for the server's own tests: add a note with a
// given text; verified from the site's state alone.
const DEMO: Source = {
  site: demoSite,
  templates: ["add-note"],
  describe: (template, seed) => demoTask(template, seed),
  place: (template, seed) => {
    const task = demoTask(template, seed);
    return Promise.resolve({ task, bind: demoBinding(seed, task) });
  },
};

function demoTask(template: string, seed: number): TaskBody {
  return {
    id: `demo/${template}/${seed}`,
    site: "demo",
    template,
    seed,
    instruction: `Add a note that says "${noteText(seed)}"`,
    split: splitOf(seed),
    difficulty: "easy",
    kind: "state",
  };
}

function demoBinding(seed: number, task: TaskBody): (instance: Instance) => ServedTask {
  return (instance) => {
    const text = noteText(seed);
    let judged: JudgedOutcome | undefined;
    return {
      id: task.id,
      instruction: task.instruction,
      startUrl: "/",
      get judged() {
        return judged;
      },
      async verify(outcome) {
        judged = {
          ...(outcome.answer !== undefined ? { answer: outcome.answer } : {}),
          url: outcome.url,
        };
        const state = instance.state;
        if (!state) return { reward: 0, reason: "The instance has no state channel" };
        const response = await state.fetch("/notes");
        const notes = await response.json() as { text: string }[];
        const found = notes.some((note) => note.text === text);
        return found
          ? { reward: 1, reason: `A note says "${text}"` }
          : { reward: 0, reason: `No note says "${text}"` };
      },
    };
  };
}

function noteText(seed: number): string {
  return `buy ${WORDS[seed % WORDS.length]} ${seed}`;
}
