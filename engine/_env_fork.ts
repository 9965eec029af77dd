/**
 * An env's fork: the live episode copied `k` ways, each copy a new env on
 * its own copy of the site and of the browser state.
 *
 * Invariants:
 * - the site copies are made while the parent's browser state is read (both
 *   wait on other processes: the sandbox, the renderer);
 * - a fork takes a ready page from the browser's pool when one fits (one on
 *   a spare origin its site copy then takes, or one of the parent's own
 *   spec), and every ready page taken and not handed to a fork is discarded;
 * - on failure no fork is left open and every branch made is released;
 * - the pool is refilled once the forks are made, so that the fill's
 *   renderers do not slow them.
 *
 * The env's private state stays in `env.ts`: this module reaches it through
 * {@linkcode ForkParent}.
 *
 * @module
 */
import type { Browser } from "./browser/browser.ts";
import { ActionError } from "./act/errors.ts";
import { logFailure } from "./log.ts";
import type { EnvBranch, EnvOptions, EnvSite, ForkOptions } from "./env_types.ts";
import {
  activePage,
  closeContext,
  type Episode,
  type EpisodeRestore,
  readySpecOf,
} from "./_env_episode.ts";
import { siteCall } from "./_env_failures.ts";
import { captureBrowserState, moveBrowserState } from "./_browser_state.ts";
import { ContextPool, discard, type OriginReserve } from "./context_pool.ts";
import { readyKey, type ReadyPage, type ReadySpec } from "./_ready_page.ts";

/** What a fork of an env asks of the env, which alone reaches its private state. */
export interface ForkParent<E extends { close(): Promise<void> }> {
  /** The browser the parent and its forks live in. */
  readonly browser: Browser;
  /** The parent's options, which each fork inherits. */
  readonly options: EnvOptions;
  /** The parent's site, whose origin the copied browser state moves from. */
  readonly site: EnvSite | undefined;
  /** The parent's live episode. */
  readonly episode: Episode;
  /**
   * Makes a new env on `options` (not started yet).
   *
   * @param options the fork's options
   * @returns the env, and how to start its first episode from the parent's:
   *   `start` calls `taken` once the episode has the ready page (from then
   *   on the episode closes it on failure)
   */
  open(options: EnvOptions): {
    env: E;
    start(
      restore: EpisodeRestore,
      signal: AbortSignal,
      ready: ReadyPage | undefined,
      taken: () => void,
    ): Promise<void>;
  };
}

/** The kind of ready page a fork takes from the pool. */
export interface ForkKind {
  /** The kind's key in the pool. */
  key: string;
  /** What its ready pages are made from. */
  spec: ReadySpec;
  /** The site's spare origins they are made on, if any. */
  spares?: OriginReserve;
}

/**
 * The kind of ready page a fork of an env with these options takes. A fork's
 * context may reach its copy's origin alone (unless the env names its own
 * origins): made ahead on a spare origin when the site reserves them; with
 * no spares the pool cannot know that origin, and forks make their own.
 *
 * @param pool the browser's pool
 * @param options the parent's options
 * @returns the kind, or undefined when a fork cannot use the pool
 */
export function forkKind(pool: ContextPool, options: EnvOptions): ForkKind | undefined {
  const spec = readySpecOf(options);
  const ownOrigin = options.site !== undefined && options.onlyOrigins === undefined;
  const spares = ownOrigin ? options.site?.spares : undefined;
  if (spares) {
    const onSpare = { viewport: spec.viewport, ...(spec.settle ? { settle: spec.settle } : {}) };
    return { key: pool.kindOf(readyKey(onSpare), spares), spec: onSpare, spares };
  }
  return ownOrigin ? undefined : { key: pool.kindOf(readyKey(spec)), spec };
}

/**
 * Copies the parent's live episode `k` ways, inside the parent's `fork`
 * operation (its arguments are checked there).
 *
 * @param parent the env being forked
 * @param k how many forks
 * @param branch the site's copier; absent when the env has no site
 * @param signal the operation's signal
 * @returns the forks, each settled on the parent's page
 * @throws {ActionError} `not-allowed` while a dialog is open
 * @throws what capturing the state, a site copy or a fork's start throws,
 *   after closing every fork made and releasing every branch
 */
export async function forkEpisode<E extends { close(): Promise<void> }>(
  parent: ForkParent<E>,
  k: number,
  branch: ForkOptions["branch"],
  signal: AbortSignal,
): Promise<E[]> {
  const { browser, episode, site } = parent;
  // A page behind a dialog runs no script: its state cannot be read.
  if (episode.actor.dialog) {
    throw new ActionError("not-allowed", "Cannot fork: a dialog is open; answer it first");
  }
  // Ready pages from the pool: on spare origins the fork's copies take,
  // when the site reserves them; else of the parent's own spec.
  const pool = ContextPool.of(browser);
  const kind = forkKind(pool, parent.options);
  const pooled = Array.from({ length: k }, () => kind ? pool.take(kind.key) : undefined);
  const branches: EnvBranch[] = [];
  const forks: E[] = [];
  try {
    // The copies are made while the parent's state is read: both wait on
    // other processes (the sandbox, the renderer).
    const copying = (async () => {
      for (const ready of pooled) {
        const at = ready?.spare ? { origin: ready.spare.origin } : undefined;
        branches.push(branch ? await siteCall("copy the site", () => branch(at)) : {});
      }
    })();
    const [captured, copied] = await Promise.allSettled([
      captureBrowserState(browser, episode.context, activePage(episode)),
      copying,
    ]);
    if (captured.status === "rejected") throw captured.reason;
    if (copied.status === "rejected") throw copied.reason;
    const state = captured.value;
    const made = await Promise.allSettled(branches.map((b, i) => {
      const forkSite = b.site;
      const moved = site && forkSite
        ? moveBrowserState(state, site.origin, forkSite.origin)
        : state;
      // A ready page fits when its context may reach the copy's origin.
      let ready = pooled[i];
      pooled[i] = undefined;
      if (ready?.spare && ready.spare.origin !== forkSite?.origin) {
        discard(ready);
        ready = undefined;
      }
      const restore = { state: moved, steps: episode.steps, startedAt: episode.startedAt };
      return forkOne(parent, b, restore, signal, ready);
    }));
    for (const result of made) if (result.status === "fulfilled") forks.push(result.value);
    const failed = made.find((r): r is PromiseRejectedResult => r.status === "rejected");
    if (failed) throw failed.reason;
    return forks;
  } catch (error) {
    await Promise.all(forks.map((f) => f.close()));
    await Promise.all(
      branches.map((b) =>
        b.release?.().catch((cause: unknown) => logFailure("release a fork's site", cause))
      ),
    );
    throw error;
  } finally {
    for (const ready of pooled) if (ready) discard(ready);
    // Refilled once the forks are made: the fill's renderers do not slow them.
    if (kind) pool.warm(kind.key, kind.spec, kind.spares);
  }
}

/** One fork: a new env on the branch, started from the parent's episode. */
async function forkOne<E extends { close(): Promise<void> }>(
  parent: ForkParent<E>,
  branch: EnvBranch,
  restore: EpisodeRestore,
  signal: AbortSignal,
  ready: ReadyPage | undefined,
): Promise<E> {
  const { signal: _created, ...options } = parent.options;
  const { env, start } = parent.open({
    ...options,
    ...(branch.site ? { site: branch.site } : {}),
    ...(branch.task ? { task: branch.task } : {}),
  });
  // The ready page is the episode's once `startEpisode` has it (it closes
  // it on failure); until then it is this call's to close.
  let handed = false;
  try {
    signal.throwIfAborted();
    await start(restore, signal, ready, () => {
      handed = true;
    });
  } catch (error) {
    if (ready && !handed) await closeContext(ready.context);
    await env.close();
    throw error;
  }
  return env;
}
