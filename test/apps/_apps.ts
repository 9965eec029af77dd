/**
 * What the real-application tests share: opening an application's image on
 * Incus (TCP or unix socket) or Docker, failing with the command that builds
 * it when it is missing, reading the instance's state API, and running a
 * site's tasks in envs on an instance (a solver's win, a blind stop's loss).
 *
 * @module
 */
import { assertEquals, assertNotEquals } from "@std/assert";
import { Browser } from "../../engine/browser/browser.ts";
import { Env } from "../../engine/env.ts";
import { bindTask, type BoundTask } from "../../fixtures/sites/kit/bind.ts";
import { generateTask } from "../../fixtures/sites/kit/generate.ts";
import { StateSdk } from "../../fixtures/sites/kit/state_client.ts";
import { SandboxError } from "../../sandboxes/errors.ts";
import { Gateway } from "../../sandboxes/gateway.ts";
import { IncusClient } from "../../sandboxes/incus/client.ts";
import { IncusSandbox } from "../../sandboxes/incus/incus_sandbox.ts";
import { DockerClient } from "../../sandboxes/docker/client.ts";
import { DockerSandbox } from "../../sandboxes/docker/docker_sandbox.ts";
import type { Instance, Sandbox } from "../../sandboxes/types.ts";
import type {
  Row,
  SiteModule,
  StateDiff,
  StateHash,
  Task,
} from "../../fixtures/sites/kit/types.ts";

/** Opens a sandbox of an application's image behind a gateway. */
export type OpenApp = (gateway: Gateway) => Promise<Sandbox>;

/** An application's image, and how long its instances take. */
export interface AppImage {
  /** `webserv-NAME`, as `deno task image:apps NAME` imports it. */
  image: string;
  /** How the missing image is built, for the error message. */
  build: string;
  /** How long an instance (and the base, while it seeds) may take to answer. */
  readyMs: number;
  /**
   * The prefix of the Incus instances the test makes (its bases are its own).
   *
   * @default {"wsapp-"}
   */
  prefix?: string;
}

/** Options of {@linkcode appImage}. */
export interface AppImageOptions {
  /** How long an instance (and the base, while it seeds) may take to answer. */
  readyMs: number;
  /**
   * The image, when not `webserv-NAME` (a private build, `image:apps --alias`).
   *
   * @default {"webserv-NAME"}
   */
  image?: string;
  /**
   * How long the image takes to build, as the missing image's message says it ("5 minutes").
   *
   * @default {unsaid}
   */
  buildTime?: string;
  /**
   * The prefix of the Incus instances the test makes (its bases are its own).
   *
   * @default {"wsapp-"}
   */
  prefix?: string;
}

/**
 * An application's image `webserv-NAME`, as `deno task image:apps NAME`
 * imports it, with that command in the message of its absence.
 *
 * @param name the application's name
 * @param options the readiness limit, and the image, build time and prefix when not the defaults
 * @returns the image
 */
export function appImage(name: string, options: AppImageOptions): AppImage {
  const took = options.buildTime === undefined ? "" : ` (about ${options.buildTime})`;
  return {
    image: options.image ?? `webserv-${name}`,
    build: `build it with "deno task image:apps ${name}"${took}`,
    readyMs: options.readyMs,
    ...(options.prefix === undefined ? {} : { prefix: options.prefix }),
  };
}

/** The Incus storage pool the tests use (`WEBSERV_INCUS_POOL`). */
export const POOL = Deno.env.get("WEBSERV_INCUS_POOL") ?? "webserv-btrfs";

/**
 * Fails with the command that builds the image when Incus does not have it.
 *
 * @param app the image
 * @throws {Error} when the image is missing
 */
export async function requireIncusImage(app: AppImage): Promise<void> {
  using client = new IncusClient();
  try {
    await client.imageFingerprint(app.image);
  } catch (error) {
    if (error instanceof SandboxError && error.status === 404) {
      throw new Error(`Incus has no image "${app.image}": ${app.build}`);
    }
    throw error;
  }
}

/**
 * Opens the image on Incus.
 *
 * @param app the image
 * @param siteTransport how the gateway reaches the site
 * @returns the opener
 */
export function openIncus(app: AppImage, siteTransport: "tcp" | "unix"): OpenApp {
  return async (gateway) => {
    await requireIncusImage(app);
    return await IncusSandbox.open({
      gateway,
      image: app.image,
      pool: POOL,
      prefix: app.prefix ?? "wsapp-",
      siteTransport,
      readyTimeoutMs: app.readyMs,
    });
  };
}

/**
 * Opens the image on Docker.
 *
 * @param app the image
 * @returns the opener
 */
export function openDocker(app: AppImage): OpenApp {
  return async (gateway) => {
    using client = new DockerClient();
    if (!(await client.hasImage(`${app.image}:latest`))) {
      throw new Error(`Docker has no image "${app.image}:latest": ${app.build}`);
    }
    return await DockerSandbox.open({
      gateway,
      image: app.image,
      prefix: "wsapp-",
      readyTimeoutMs: app.readyMs,
    });
  };
}

/**
 * A reader of an instance's state API that checks each answer is a 200.
 *
 * @param instance the instance
 * @returns `state(path, init)`, the parsed JSON
 */
export function stateReader(
  instance: Instance,
): <T>(path: string, init?: RequestInit) => Promise<T> {
  const channel = instance.state;
  if (channel === undefined) throw new Error("the instance has no state channel");
  return async <T>(path: string, init?: RequestInit): Promise<T> => {
    const response = await channel.fetch(path, init);
    const body = await response.text();
    assertEquals(response.status, 200, `state ${path}: ${body}`);
    return JSON.parse(body) as T;
  };
}

/**
 * Every row of one of the instance's tracked tables.
 *
 * @param instance the instance
 * @param name the table
 * @returns its rows
 */
export async function tableRows(instance: Instance, name: string): Promise<Row[]> {
  return await new StateSdk(instance.state!).rows(name, {}, 100_000);
}

/**
 * Every row of a diff, as `table kind`, to compare with what one change should make.
 *
 * @param diff the diff
 * @returns one entry a row, such as `"time_entries added"`
 */
export function diffRows(diff: StateDiff): string[] {
  return Object.entries(diff.tables).flatMap(([table, changes]) => [
    ...changes.added.map(() => `${table} added`),
    ...changes.removed.map(() => `${table} removed`),
    ...changes.changed.map(() => `${table} changed`),
  ]);
}

/** What {@linkcode withInstance} gives a check. */
export interface AppInstance {
  /** The gateway the instance is routed through. */
  gateway: Gateway;
  /** The instance, made from seed 1. */
  instance: Instance;
  /** Reads its state API. */
  state: <T>(path: string, init?: RequestInit) => Promise<T>;
}

/** Options of {@linkcode withInstance}. */
export interface WithInstanceOptions {
  /**
   * The instance's seed.
   *
   * @default {1}
   */
  seed?: number;
}

/**
 * Opens a sandbox behind a new gateway, creates an instance of a seed, runs
 * the check, and closes everything (closing the sandbox destroys the
 * instance).
 *
 * @param open how the sandbox is opened
 * @param check what is checked on the instance
 * @param options the seed
 */
export async function withInstance(
  open: OpenApp,
  check: (app: AppInstance) => Promise<void>,
  options: WithInstanceOptions = {},
): Promise<void> {
  await using gateway = new Gateway();
  const sandbox = await open(gateway);
  await using _closed = { [Symbol.asyncDispose]: () => sandbox.close() };
  const instance = await sandbox.create({ seed: options.seed ?? 1 });
  await check({ gateway, instance, state: stateReader(instance) });
}

/** What {@linkcode testEveryBackend} registers: a check of a seeded instance. */
export interface BackendTest {
  /** The application, as the tests' names start: `"WordPress"`. */
  name: string;
  /** What the check shows, as the tests' names end: `"serves its seeded posts, …"`. */
  does: string;
  /** The check, on an instance of seed 1. */
  check: (app: AppInstance) => Promise<void>;
}

/**
 * Registers one check of an image three times: on Incus with the site over
 * TCP, on Incus over its unix socket relay, and on Docker.
 *
 * @param app the image
 * @param test the application's name, what the check shows, and the check
 */
export function testEveryBackend(app: AppImage, test: BackendTest): void {
  Deno.test(`${test.name} on Incus ${test.does}`, async () => {
    await withInstance(openIncus(app, "tcp"), test.check);
  });
  Deno.test(
    `${test.name} on Incus serves through its unix socket relay when siteTransport is unix`,
    async () => {
      await withInstance(openIncus(app, "unix"), test.check);
    },
  );
  Deno.test(`${test.name} on Docker ${test.does}`, async () => {
    await withInstance(openDocker(app), test.check);
  });
}

/** A site's seed on one image: what {@linkcode withSession} opens. */
export interface AppSite {
  /** How the sandbox is opened. */
  open: OpenApp;
  /** The site whose tasks run on the instance. */
  site: SiteModule;
  /** The instance's seed, and the tasks'. */
  seed: number;
}

/** Options of {@linkcode incusSite}. */
export interface IncusSiteOptions {
  /** The instances' seed, and the tasks'. */
  seed: number;
  /** How long an instance (and the base, while it seeds) may take to answer. */
  readyMs: number;
  /**
   * The prefix of the Incus instances the test makes.
   *
   * @default {"wsapp-"}
   */
  prefix?: string;
}

/**
 * A site on its image `webserv-NAME` on Incus (the site over a unix socket),
 * failing with `deno task image:apps NAME` when the image is missing;
 * `WEBSERV_NAME_IMAGE` names another (a private build, `image:apps --alias`).
 *
 * @param site the site
 * @param options the seed, the readiness limit and the instances' prefix
 * @returns what {@linkcode withSession} and {@linkcode withInstance} open
 */
export function incusSite(site: SiteModule, options: IncusSiteOptions): AppSite {
  const other = Deno.env.get(`WEBSERV_${site.name.toUpperCase()}_IMAGE`);
  const image = appImage(site.name, {
    readyMs: options.readyMs,
    ...(other === undefined ? {} : { image: other }),
    ...(options.prefix === undefined ? {} : { prefix: options.prefix }),
  });
  return { open: openIncus(image, "unix"), site, seed: options.seed };
}

/** What {@linkcode withSession} gives a check. */
export interface AppSession extends AppInstance, AppSite {
  /** A browser for the envs. */
  browser: Browser;
  /**
   * Opens an env on the instance with the task bound to it, runs `run`, and
   * closes the env.
   */
  inEnv(task: Task, run: (env: Env, bound: BoundTask) => Promise<void>): Promise<void>;
}

/**
 * Opens a sandbox, an instance of the site's seed and a browser, runs the
 * check, and closes everything.
 *
 * @param app the image, the site and the seed
 * @param check what is checked
 */
export async function withSession(
  app: AppSite,
  check: (session: AppSession) => Promise<void>,
): Promise<void> {
  await withInstance(app.open, async (instance) => {
    await using browser = await Browser.launch();
    await check({
      ...app,
      ...instance,
      browser,
      async inEnv(task, run) {
        const bound = bindTask(task, app.site, instance.instance.state!, {
          origin: instance.instance.origin,
        });
        const env = await Env.create(browser, { site: instance.instance, task: bound });
        try {
          await run(env, bound);
        } finally {
          await env.close();
        }
      },
    });
  }, { seed: app.seed });
}

/** Options of {@linkcode assertSolverWins}. */
export interface SolverWinsOptions {
  /**
   * What the blind env answers as it stops where the task starts.
   *
   * @default {"done"}
   */
  answer?: string;
}

/**
 * Runs a template's task of the session's seed twice: its solver earns 1;
 * after a reset, a stop where the task starts earns 0. The instance is left
 * as the stop left it.
 *
 * @param session the session
 * @param template the template's id
 * @param options the blind stop's answer
 */
export async function assertSolverWins(
  session: AppSession,
  template: string,
  options: SolverWinsOptions = {},
): Promise<void> {
  const task = generateTask(session.site, template, session.seed);
  const solver = session.site.templates.find((t) => t.id === template);
  if (!solver) throw new Error(`No template "${template}" on ${session.site.name}`);
  await session.inEnv(task, async (env) => {
    await solver.solve(env, task);
    const verdict = await env.verify();
    assertEquals(verdict.reward, 1, `${template}: ${verdict.reason}`);
  });
  await session.instance.reset();
  await session.inEnv(task, async (env) => {
    await env.step({ action: "stop", answer: options.answer ?? "done" });
    const verdict = await env.verify();
    assertEquals(verdict.reward, 0, `${template}: ${verdict.reason}`);
  });
}

/**
 * Checks that the gateway never routes to the state API: `/hash` through it
 * is the application's own page, without the state API's header.
 *
 * @param app the instance
 */
export async function assertStateNotRouted(app: AppInstance): Promise<void> {
  const probe = await app.gateway.request(app.instance.origin, "/hash");
  await probe.body?.cancel();
  assertEquals(probe.headers.get("x-webserv-state"), null);
}

/**
 * Checks that the state changed, resets the instance, and checks that the
 * state hash is the seeded one again.
 *
 * @param app the instance
 * @param seeded the hash before the change
 */
export async function assertResetRestores(app: AppInstance, seeded: StateHash): Promise<void> {
  assertNotEquals((await app.state<StateHash>("/hash")).hash, seeded.hash);
  await app.instance.reset();
  assertEquals(
    (await app.state<StateHash>("/hash")).hash,
    seeded.hash,
    "reset did not restore the seeded state",
  );
}
