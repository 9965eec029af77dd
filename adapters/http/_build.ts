/**
 * From a session spec to a running env: the spec's placement (a task or
 * site of the catalog, or a bare URL the server allows), the browser, the
 * sandbox instance and the `Env` on them; and the spec a reset asks for.
 *
 * @module
 */
import { type Browser, Env, EnvError } from "../../mod.ts";
import { logFailure } from "../../engine/log.ts";
import type { Instance, Sandbox, Site } from "../../sandboxes/mod.ts";
import type { Catalog, Placement } from "./catalog.ts";
import { HttpError } from "./http_error.ts";
import { observeOptionsOf, type ResetRequest, type SessionSpec } from "./protocol.ts";
import { messageOf, refusal } from "./_failures.ts";
import type { Session } from "./_session.ts";

/** Where sessions are built from: the manager's options, in part. */
export interface SessionSources {
  /** Gives the current browser, launching a new one when the last is gone. */
  browser(): Promise<Browser>;
  /** Gives the sandbox backend of a site, on a placement target when the spec names one. */
  sandbox(site: Site, target?: string): Promise<Sandbox>;
  /** Resolves a task, or a site with template and seed, to its placement. */
  readonly catalog: Pick<Catalog, "resolve">;
  /** Whether a spec may name a placement `target`; not when absent. */
  readonly placementTargets?: boolean;
  /** Origins a bare-URL spec may not open; none when absent. */
  readonly blockedOrigins?: () => string[];
}

/** What a session runs on, built from its spec. */
export type Built = Pick<Session, "placement" | "browser" | "instance" | "env" | "task">;

/**
 * Places a spec, gets the browser and builds the instance and env on them.
 *
 * @param spec what the session runs
 * @param sources the catalog, browser and sandboxes
 * @param timeoutMs the deadline of the env's calls
 * @returns what the session runs on; nothing is left open on failure
 * @throws {HttpError} 400 for a bad spec, 404 for an unknown task, 422 for a
 * bare URL that does not load, 503 when the browser or sandbox fails
 */
export async function build(
  spec: SessionSpec,
  sources: SessionSources,
  timeoutMs: number,
): Promise<Built> {
  const placement = await place(spec, sources);
  const browser = await browserOf(sources);
  let instance: Instance | undefined;
  try {
    if (placement) {
      const sandbox = await sources.sandbox(placement.site, spec.target);
      instance = await sandbox.create({ seed: placement.seed });
    }
    const task = instance && placement?.bind?.(instance);
    const url = spec.url === undefined ? undefined : new URL(spec.url);
    const env = await Env.create(browser, {
      ...(instance ? { site: instance } : {}),
      ...(task ? { task } : {}),
      ...(url ? { startUrl: url.href, onlyOrigins: [url.origin] } : {}),
      observe: {
        ...(spec.observation === "diff" ? { mode: "diff" as const } : {}),
        ...observeOptionsOf(spec.observation_options ?? {}),
      },
      ...(spec.viewport ? { viewport: spec.viewport } : {}),
      timeoutMs,
    });
    return { placement, browser, instance, env, task };
  } catch (error) {
    await instance?.destroy().catch((error) => logFailure("destroy the instance", error));
    // A bare URL that does not load is the caller's input, not our failure.
    const timedOut = error instanceof EnvError && error.code === "timeout";
    if (
      spec.url !== undefined && browser.connected && !timedOut && !(error instanceof HttpError)
    ) {
      throw new HttpError(
        422,
        "url-unreachable",
        `URL "${spec.url}" did not load: ${messageOf(error)}`,
      );
    }
    throw refusal(error);
  }
}

/**
 * The spec a reset runs: a new task replaces the task, site, template, seed
 * and URL; a new seed keeps the task's site and template; `max_steps`,
 * `observation` and `viewport` replace the session's.
 *
 * @param spec the session's spec
 * @param request the reset's new seed or task
 * @returns the new spec
 */
export function respec(spec: SessionSpec, request: ResetRequest): SessionSpec {
  const next: SessionSpec = { ...spec };
  if (request.task !== undefined) {
    // The task id carries its seed; an earlier seed no longer counts.
    delete next.site, delete next.template, delete next.url, delete next.seed;
    next.task = request.task;
  }
  if (request.seed !== undefined) {
    if (next.task !== undefined) {
      const [site, template] = next.task.split("/");
      delete next.task;
      next.site = site ?? "";
      if (template !== undefined) next.template = template;
    }
    next.seed = request.seed;
  }
  if (request.max_steps !== undefined) next.max_steps = request.max_steps;
  if (request.observation !== undefined) next.observation = request.observation;
  if (request.observation_options !== undefined) {
    next.observation_options = request.observation_options;
  }
  if (request.viewport !== undefined) next.viewport = request.viewport;
  return next;
}

async function place(spec: SessionSpec, sources: SessionSources): Promise<Placement | null> {
  const count = [spec.task, spec.site, spec.url].filter((x) => x !== undefined).length;
  if (count !== 1) {
    throw new HttpError(
      400,
      "bad-spec",
      'A session needs exactly one of "task", "site" (with "template" and "seed") or "url"',
    );
  }
  if (spec.target !== undefined && (!sources.placementTargets || spec.url !== undefined)) {
    throw new HttpError(
      400,
      "bad-spec",
      spec.url !== undefined
        ? 'A bare-URL session has no instance to place on target "' + spec.target + '"'
        : `Placement target "${spec.target}" needs the incus backend`,
    );
  }
  if (spec.url !== undefined) {
    const url = new URL(spec.url);
    if (!["http:", "https:"].includes(url.protocol)) {
      throw new HttpError(400, "bad-url", `URL "${spec.url}" is not http or https`);
    }
    if ((sources.blockedOrigins?.() ?? []).includes(url.origin)) {
      throw new HttpError(400, "bad-url", `URL "${spec.url}" is the server itself`);
    }
    return null;
  }
  // A task with a seed runs the task's site and template on that seed, as a
  // reset with a seed does (the seed is not dropped for the task id's).
  const { seed: given, ...unseeded } = spec;
  const placed = spec.task !== undefined && given !== undefined
    ? respec(unseeded, { seed: given })
    : spec;
  return await sources.catalog.resolve({
    ...(placed.task !== undefined ? { task: placed.task } : {}),
    ...(placed.site !== undefined ? { site: placed.site } : {}),
    ...(placed.template !== undefined ? { template: placed.template } : {}),
    ...(placed.seed !== undefined ? { seed: placed.seed } : {}),
  });
}

async function browserOf(sources: SessionSources): Promise<Browser> {
  try {
    return await sources.browser();
  } catch (error) {
    throw new HttpError(503, "browser-gone", `No browser: ${messageOf(error)}`, {
      "Retry-After": "5",
    });
  }
}
