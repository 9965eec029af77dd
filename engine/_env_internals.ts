/**
 * The engine beneath an env's current episode, reached from outside the
 * class: the interface, and the accessor that `Env`'s static block sets (it
 * alone reaches the env's private state).
 *
 * @module
 */
import type { Actor } from "./act/actor.ts";
import type { BrowserContext } from "./browser/browser_context.ts";
import type { Page } from "./browser/page.ts";
import type { Observer } from "./observe/observer.ts";
import type { Env } from "./env.ts";
import type { EnvCallOptions } from "./env_types.ts";

/**
 * The engine beneath an {@linkcode Env}'s current episode, for code that
 * drives it below the agent's actions (the rollout server's screenshots,
 * tests, benches): kept off the class so the root entry point, which exports
 * `Env`, documents an agent loop's surface without the engine's types.
 */
export interface EnvInternals {
  /** The context of the current episode. */
  readonly context: BrowserContext;
  /** The actor of the current episode (tabs, dialog, answer). */
  readonly actor: Actor;
  /** The observer of the current episode. */
  readonly observer: Observer;
  /**
   * The active tab, for raw CDP. Commands sent through it directly are not
   * serialized with the env's operations: inside {@linkcode EnvInternals.withPage}
   * they are, and they honour its deadline.
   *
   * @throws {EnvError} when the env is closed or has no episode
   */
  readonly page: Page;
  /**
   * Runs `fn` with the active tab as one serialized operation: CDP commands
   * it sends through the page honour the deadline and are refused once it
   * passed.
   *
   * @param fn what to do with the page
   * @param options the deadline and signal
   * @returns what `fn` returns
   * @throws {EnvError} when the env fails it or the deadline passes; what
   *   `fn` throws goes through the same mapping as the env's own errors (an
   *   `ActionError` passes, an unknown error, a `TypeError` included, becomes
   *   `EnvError("internal")`)
   */
  withPage<T>(fn: (page: Page) => Promise<T>, options?: EnvCallOptions): Promise<T>;
}

/** Set by `Env`'s static block, which alone reaches its private state. */
let internalsOf: (env: Env) => EnvInternals;

/**
 * Sets how {@linkcode envInternals} reaches an env's episode; called once, by
 * `Env`'s static block.
 *
 * @param of the accessor
 */
export function setInternalsOf(of: (env: Env) => EnvInternals): void {
  internalsOf = of;
}

/**
 * The engine beneath an env's current episode: its context, actor, observer
 * and active tab, and a serialized operation on that tab.
 *
 * @param env the env
 * @returns its internals; each getter reads the current episode when called
 * @throws {EnvError} from a getter when the env is closed or has no episode
 *
 * @example Read the active tab's title through raw CDP
 * ```ts ignore
 * import { Browser, Env, envInternals } from "@webserv/webserv/engine";
 * await using browser = await Browser.launch();
 * await using env = await Env.create(browser, { startUrl: "data:text/html,<title>Hi</title>" });
 * const title = await envInternals(env).withPage(async (page) =>
 *   (await page.session.send("Runtime.evaluate", { expression: "document.title" })).result.value
 * );
 * ```
 */
export function envInternals(env: Env): EnvInternals {
  return internalsOf(env);
}
