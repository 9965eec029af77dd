/**
 * An env's episode: what it holds, how it starts (the task's `begin()`, a
 * fresh context on the start URL, loaded and settled), how its context
 * closes, and the checks that it is still usable (now, and while an
 * operation runs).
 *
 * @module
 */
import { Actor } from "./act/actor.ts";
import type { Browser, Viewport } from "./browser/browser.ts";
import type { BrowserContext } from "./browser/browser_context.ts";
import type { Page } from "./browser/page.ts";
import type { Connection } from "./cdp/connection.ts";
import { EnvError } from "./env_error.ts";
import { observed } from "./log.ts";
import type { Observer } from "./observe/observer.ts";
import type { Observation } from "./observe/observation.ts";
import type { Settler } from "./settle/settler.ts";
import type { EnvTask, EpisodeOutcome } from "./task.ts";
import { readPageSignals } from "./page_signals.ts";
import type { EnvOptions } from "./env_types.ts";
import { siteCall } from "./_env_failures.ts";
import { startUrlOf } from "./_env_options.ts";
import {
  type BrowserState,
  prepareStorage,
  restoreCookies,
  restorePage,
} from "./_browser_state.ts";
import { browserInternals } from "./browser/browser.ts";
import { ContextPool } from "./context_pool.ts";
import {
  closeContext,
  openReadyPage,
  readyKey,
  type ReadyPage,
  type ReadySpec,
} from "./_ready_page.ts";

export { closeContext };

/** One episode of an env: its context and the parts that observe and act on it. */
export interface Episode {
  /** The episode's own context: no cookies, storage or tabs of another. */
  context: BrowserContext;
  /** The browser's connection when the episode started, to tell that it is gone. */
  connection: Connection;
  /** Settles the episode's pages. */
  settler: Settler;
  /** Observes the episode's pages; its ids are the episode's. */
  observer: Observer;
  /** Acts on the episode's tabs. */
  actor: Actor;
  /** The last observation taken with no dialog open, shown again while one is. */
  last: Observation | undefined;
  /** How many steps the agent took, failed ones included. */
  steps: number;
  /** When the episode started (`performance.now()`). */
  startedAt: number;
}

/** The actor's per-command timeout, when the env's deadline is longer. */
const COMMAND_TIMEOUT_MS = 10_000;

/** The viewport of an env's pages unless `EnvOptions.viewport` says otherwise. */
const DEFAULT_VIEWPORT: Viewport = { width: 1280, height: 720 };

/** What {@linkcode startEpisode} starts from. */
export interface EpisodeStart {
  /** The env's options. */
  options: EnvOptions;
  /** The task of the episode, if any. */
  task: EnvTask | undefined;
  /** The env's deadline of one operation, which bounds the actor's commands and the load. */
  timeoutMs: number;
  /** The signal of the operation that starts the episode. */
  signal: AbortSignal;
  /**
   * Takes the started episode, in the same turn as the last abort check, so
   * that an env closed from then on finds it and closes its context.
   */
  adopt(episode: Episode): void;
  /**
   * A fork's start: the parent's browser state (on this env's origin), its
   * step count and start time, instead of `task.begin()` and the start URL.
   */
  restore?: EpisodeRestore;
  /**
   * The context and blank tab to start on, made for this episode's spec
   * (a fork's, on its copy's origin); taken from the pool or made when absent.
   */
  ready?: ReadyPage;
}

/** Where a fork's first episode starts: the parent's episode at the fork. */
export interface EpisodeRestore {
  /** The parent's browser state, moved to the fork's origin. */
  state: BrowserState;
  /** The parent's step count. */
  steps: number;
  /** When the parent's episode started (`performance.now()`). */
  startedAt: number;
}

/**
 * Starts an episode: `task.begin()` if there is one, then a fresh context
 * on the start URL, loaded and settled, handed to `start.adopt`. When it
 * fails, the context it created is closed.
 *
 * @param browser the browser the context lives in
 * @param start the options, task, deadline, signal and the taker of the episode
 * @throws {EnvError} when the task, the site, the browser or the signal fails it
 */
export async function startEpisode(browser: Browser, start: EpisodeStart): Promise<void> {
  const { options, task, timeoutMs, signal, restore } = start;
  // A fork's task carries the parent's mark: its episode began there.
  if (task?.begin && !restore) {
    try {
      await siteCall("begin the task", () => task.begin!());
    } catch (error) {
      if (start.ready) await closeContext(start.ready.context);
      throw error;
    }
  }
  const site = options.site;
  const startUrl = startUrlOf(options, task);
  const connection = browserInternals(browser).connection;
  const ready = start.ready ?? await takeReadyPage(browser, readySpecOf(options));
  const { context, settler, observer, page } = ready;
  try {
    signal.throwIfAborted();
    const allowUrl = options.allowUrl ??
      (site ? (url: URL) => url.origin === new URL(site.origin).origin : undefined);
    const actor = new Actor(context, {
      resolver: observer,
      settler,
      timeoutMs: Math.min(COMMAND_TIMEOUT_MS, timeoutMs),
      ...(options.dialogs ? { dialogs: options.dialogs } : {}),
      ...(allowUrl ? { allowUrl } : {}),
      ...(options.uploadDir !== undefined ? { uploadDir: options.uploadDir } : {}),
    });
    if (restore) {
      // The cookies and the storage go in before the blank tab navigates.
      const [, script] = await Promise.all([
        restoreCookies(browser, context, restore.state.cookies),
        prepareStorage(page, restore.state),
      ]);
      const since = performance.now();
      await open(page, restore.state.url, timeoutMs);
      if (script !== undefined) {
        await page.session.send("Page.removeScriptToEvaluateOnNewDocument", { identifier: script });
      }
      // Typed fields go back as soon as the page loaded (its scripts ran), and
      // what their input events start settles with the page. Once it is quiet
      // they are put back again where the page's own scripts undid them or
      // rendered them late (a client-side form): only then is a second settle
      // due, so a server-rendered page settles once.
      await restorePage(page, restore.state);
      await settler.settle(page, { signal, since });
      if (restore.state.fields.length > 0) {
        const again = await restorePage(page, restore.state);
        if (again.set > 0) await settler.settle(page, { signal });
      }
    } else {
      // The quiet window runs from the page's last activity since the load
      // began, as after an action that navigates: a page quiet since before
      // its load event is not waited on for a whole window more.
      const since = performance.now();
      await open(page, startUrl, timeoutMs);
      await settler.settle(page, { signal, since });
    }
    signal.throwIfAborted();
    start.adopt({
      context,
      connection,
      settler,
      observer,
      actor,
      last: undefined,
      steps: restore?.steps ?? 0,
      startedAt: restore?.startedAt ?? performance.now(),
    });
  } catch (error) {
    await closeContext(context);
    throw error;
  }
}

/**
 * What an env's ready pages are made from: the origin policy (its own
 * `onlyOrigins`, else its site's origin), the viewport and the settle options.
 *
 * @param options the env's options
 * @returns the spec
 */
export function readySpecOf(options: EnvOptions): ReadySpec {
  const site = options.site;
  const onlyOrigins = options.onlyOrigins ?? (site ? [site.origin] : undefined);
  return {
    ...(onlyOrigins ? { onlyOrigins } : {}),
    viewport: options.viewport ?? DEFAULT_VIEWPORT,
    ...(options.settle ? { settle: options.settle } : {}),
  };
}

/** A ready page of the spec from the browser's pool, or a new one when none waits. */
async function takeReadyPage(browser: Browser, spec: ReadySpec): Promise<ReadyPage> {
  return ContextPool.of(browser).take(readyKey(spec)) ?? await openReadyPage(browser, spec);
}

/** Loads the start URL; a failed load is the site's. */
async function open(page: Page, url: string, timeoutMs: number): Promise<void> {
  if (url === "about:blank") return;
  const loaded = page.session.waitForEvent("Page.loadEventFired", { timeoutMs });
  // Handled now: when navigate fails, nothing awaits `loaded`.
  observed(loaded);
  const { errorText } = await page.session.send("Page.navigate", { url });
  if (errorText) {
    throw new EnvError("site-unreachable", `Cannot open "${url}": ${errorText}`);
  }
  await loaded;
}

/**
 * The episode, when its browser and active tab are alive.
 *
 * @throws {EnvError} `browser-gone` or `renderer-crashed` when they are not
 */
export function liveEpisode(episode: Episode): Episode {
  const gone = episode.connection.closeReason;
  if (gone !== undefined) {
    throw new EnvError(
      "browser-gone",
      `Cannot use the env: the browser is gone (${gone}); relaunch it and reset the env`,
    );
  }
  const crash = episode.actor.page?.crash;
  if (crash) {
    throw new EnvError(
      "renderer-crashed",
      `Cannot use the env: the renderer of the active tab crashed ("${crash.status}"); reset the env`,
    );
  }
  return episode;
}

/** Why an env has no episode: its last reset's `failure` (with its code), or none. */
export function noEpisode(failure: EnvError | undefined): EnvError {
  if (!failure) return new EnvError("internal", "Cannot use the env: it has no episode");
  return new EnvError(
    failure.code,
    `Cannot use the env: its last reset failed (${failure.message}); reset it again`,
    { cause: failure },
  );
}

/** What {@linkcode watchAlive} watches, and what it calls when either dies. */
export interface Watched {
  /** The browser, watched for its going away. */
  browser: Browser;
  /** The active tab, watched for its renderer crashing; none when it is not watched. */
  page: Page | undefined;
  /** Aborts the operation with the failure. */
  abort(error: EnvError): void;
}

/**
 * Aborts an operation when the browser goes away or the watched tab crashes.
 *
 * @param what what the operation does, for the message
 * @param watched the browser, the tab and the abort
 * @returns the unwatch
 */
export function watchAlive(what: string, watched: Watched): () => void {
  const { browser, page, abort } = watched;
  const onGone = ({ reason }: { reason: string }) =>
    abort(new EnvError("browser-gone", `Cannot ${what}: the browser is gone (${reason})`));
  browser.on("disconnected", onGone);
  const onCrash = ({ status }: { status: string }) =>
    abort(
      new EnvError(
        "renderer-crashed",
        `Cannot ${what}: the renderer of the active tab crashed ("${status}")`,
      ),
    );
  page?.on("crash", onCrash);
  return () => {
    browser.off("disconnected", onGone);
    page?.off("crash", onCrash);
  };
}

/**
 * The episode's active tab.
 *
 * @throws {EnvError} `internal` when no tab is open
 */
export function activePage(episode: Episode): Page {
  const page = episode.actor.page;
  if (!page) throw new EnvError("internal", "Cannot use the env: no tab is open");
  return page;
}

/**
 * What the verifier judges besides the site's state: the active tab's URL,
 * what the page says it is, and the agent's answer.
 *
 * @param episode the episode
 * @returns the outcome
 */
export async function episodeOutcome(episode: Episode): Promise<EpisodeOutcome> {
  const page = episode.actor.page;
  const url = page
    ? (await page.session.connection.send("Target.getTargetInfo", {
      targetId: page.targetId,
    })).targetInfo.url
    : "";
  // What the page says it is, for a verifier that judges the page shown, not its URL.
  const signals = page ? await readPageSignals(page) : undefined;
  const answer = episode.actor.answer;
  return {
    url,
    ...(answer === undefined ? {} : { answer }),
    ...(signals ? { page: signals } : {}),
  };
}
