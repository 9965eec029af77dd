/**
 * `deno task tasks [--site NAME] [--seed S] [--count N] [--split train|test]
 * [--template ID] [--json]`: prints tasks of the shipped sites (and of a real
 * application such as WordPress, named by `--site`) (instruction,
 * start URL, template, evaluator kind), seed by seed from `--seed`, every
 * template for each seed, `--count` in all. `--json` prints the tasks
 * themselves, one JSON array.
 *
 * @module
 */
import { parseArgs } from "node:util";
import { listTasks } from "../fixtures/sites/kit/generate.ts";
import type { Split } from "../fixtures/sites/kit/task.ts";
import type { Evaluator, Task } from "../fixtures/sites/kit/types.ts";
import { APPS, SITES } from "../fixtures/sites/registry.ts";

/**
 * Lists tasks as the command line asks.
 *
 * @param args the command-line arguments
 * @returns the text to print
 * @throws {TypeError} when the arguments are wrong
 */
export function main(args: string[]): string {
  const { values } = parseArgs({
    args,
    options: {
      site: { type: "string" },
      seed: { type: "string" },
      count: { type: "string", default: "10" },
      split: { type: "string" },
      template: { type: "string", multiple: true },
      json: { type: "boolean", default: false },
    },
  });
  const count = Number(values.count);
  if (!Number.isInteger(count) || count < 1) {
    throw new TypeError(`Invalid --count "${values.count}": expected an integer >= 1`);
  }
  const from = values.seed === undefined ? undefined : Number(values.seed);
  if (from !== undefined && (!Number.isInteger(from) || from < 0)) {
    throw new TypeError(`Invalid --seed "${values.seed}": expected an integer >= 0`);
  }
  const split = values.split;
  if (split !== undefined && split !== "train" && split !== "test") {
    throw new TypeError(`Invalid --split "${split}": expected "train" or "test"`);
  }
  // A real application (WordPress) is listed when asked for by name.
  const app = values.site !== undefined && Object.hasOwn(APPS, values.site)
    ? APPS[values.site]
    : undefined;
  const tasks = listTasks(app ? [app] : Object.values(SITES), {
    count,
    ...(values.site !== undefined ? { site: values.site } : {}),
    ...(from !== undefined ? { from } : {}),
    ...(split !== undefined ? { split: split as Split } : {}),
    ...(values.template ? { templates: values.template } : {}),
  });
  if (values.json) return JSON.stringify(tasks, null, 2);
  return tasks.map(describe).join("\n\n");
}

function describe(task: Task): string {
  return [
    `${task.id}  (${task.difficulty}, ${kinds(task.evaluator)})`,
    `  start: ${task.startUrl}`,
    `  ${task.instruction}`,
  ].join("\n");
}

function kinds(evaluator: Evaluator): string {
  if (evaluator.kind === "all") return `all of ${evaluator.of.map(kinds).join(" + ")}`;
  if (evaluator.kind === "answer") return `answer ${evaluator.op}`;
  return evaluator.kind;
}

if (import.meta.main) {
  try {
    console.log(main(Deno.args));
  } catch (error) {
    console.error(error instanceof TypeError ? error.message : error);
    Deno.exit(2);
  }
}
