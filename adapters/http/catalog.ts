/**
 * Where sessions come from: the sites the server serves and the tasks it
 * lists. Everything about tasks goes through {@linkcode defaultCatalog}, so
 * the recreated sites (`fixtures/sites/mod.ts`: `SITES`, `generateTask`,
 * `bindTask`, `listTasks`) replace the demo catalog in one function.
 *
 * @module
 */
import type { EnvTask } from "../../mod.ts";
import type { Instance, Site } from "../../sandboxes/mod.ts";
import demoSite from "../../fixtures/sites/demo/mod.ts";
import { HttpError } from "./http_error.ts";
import type { TaskBody } from "./protocol.ts";

/** What a session is placed on: a site and seed, and a task bound to the instance. */
export interface Placement {
  /** The site, served by the backend. */
  site: Site;
  /** The seed of its data. */
  seed: number;
  /** The task as listed; `null` when the session has no task. */
  task: TaskBody | null;
  /** Binds the task to an instance, once it runs; absent without a task. */
  bind?: (instance: Instance) => EnvTask;
}

/** The sites and tasks a server offers. */
export interface Catalog {
  /** The sites by name. */
  readonly sites: ReadonlyMap<string, Site>;
  /**
   * Lists tasks (a few seeds of every template).
   *
   * @returns the tasks
   */
  list(): TaskBody[];
  /**
   * Resolves a task id, or a site with template and seed.
   *
   * @param spec the request's fields
   * @returns the placement
   * @throws {HttpError} 404 for an unknown task, site or template; 400 for a bad id
   */
  resolve(spec: { task?: string; site?: string; template?: string; seed?: number }): Placement;
}

interface Template {
  id: string;
  instruction(seed: number): string;
  bind(task: TaskBody, instance: Instance): EnvTask;
}

const WORDS = ["apples", "bread", "coffee", "dates", "eggs", "flour", "grapes", "honey"];

// The demo site's one task: add a note with a given text; verified from the
// site's state alone.
const ADD_NOTE: Template = {
  id: "add-note",
  instruction: (seed) => `Add a note that says "buy ${WORDS[seed % WORDS.length]} ${seed}"`,
  bind(task, instance) {
    const text = `buy ${WORDS[task.seed % WORDS.length]} ${task.seed}`;
    return {
      id: task.id,
      instruction: task.instruction,
      startUrl: "/",
      async verify() {
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
  },
};

/**
 * The catalog `deno task serve` uses: today the demo site with its one task
 * template; the recreated sites plug in here when they land.
 *
 * @returns the catalog
 */
export function defaultCatalog(): Catalog {
  const templates = new Map<string, Map<string, Template>>([
    ["demo", new Map([[ADD_NOTE.id, ADD_NOTE]])],
  ]);
  const sites = new Map<string, Site>([["demo", demoSite]]);
  function describe(site: string, template: Template, seed: number): TaskBody {
    return {
      id: `${site}/${template.id}/${seed}`,
      site,
      template: template.id,
      seed,
      instruction: template.instruction(seed),
    };
  }
  return {
    sites,
    list() {
      return [...templates].flatMap(([site, byId]) =>
        [...byId.values()].flatMap((template) =>
          [0, 1, 2].map((seed) => describe(site, template, seed))
        )
      );
    },
    resolve(spec) {
      let { site: siteName, template: templateId, seed } = spec;
      if (spec.task !== undefined) {
        const parts = spec.task.split("/");
        const seedText = parts[2] ?? "";
        if (parts.length !== 3 || !/^\d{1,9}$/.test(seedText)) {
          throw new HttpError(
            400,
            "bad-task-id",
            `Task id "${spec.task}" is not of the form "site/template/seed"`,
          );
        }
        [siteName, templateId] = parts;
        seed = Number(seedText);
      }
      const site = siteName === undefined ? undefined : sites.get(siteName);
      if (!site) throw new HttpError(404, "unknown-site", `No site "${siteName}"`);
      const finalSeed = seed ?? 0;
      if (templateId === undefined) return { site, seed: finalSeed, task: null };
      const template = templates.get(site.name)?.get(templateId);
      if (!template) {
        throw new HttpError(
          404,
          "unknown-template",
          `No template "${templateId}" on "${site.name}"`,
        );
      }
      const task = describe(site.name, template, finalSeed);
      return { site, seed: finalSeed, task, bind: (instance) => template.bind(task, instance) };
    },
  };
}
