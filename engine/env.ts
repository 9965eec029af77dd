/**
 * One environment for one agent: an isolated browser context on a site,
 * observed and acted on by id, reset to a fresh episode on demand.
 *
 * The env is handed anything with an origin and a reset (a sandbox
 * `Instance` fits), so the engine never imports `sandboxes/`.
 *
 * @module
 */
import { Actor, type ActorOptions, type ActResult, type DialogInfo } from "./act/actor.ts";
import type { Browser } from "./browser/browser.ts";
import type { BrowserContext } from "./browser/browser_context.ts";
import { type Observation, type ObserveOptions, Observer } from "./observe/observer.ts";
import { Settler, type SettlerOptions } from "./settle/settler.ts";

/** What an env serves: an origin to open and a way back to its first state. */
export interface EnvSite {
  /** The site's origin, such as `"http://env-3.localhost:8800"`. */
  readonly origin: string;
  /** Restores the site's state to where the episode started. */
  reset(): Promise<void>;
}

/** Options of {@linkcode Env.create}. */
export interface EnvOptions {
  /** The site the env serves; without it the env starts on `startUrl` alone. */
  site?: EnvSite;
  /**
   * Where each episode starts: an absolute URL, or a path on the site's origin.
   *
   * @default {"/" on the site, or "about:blank" without one}
   */
  startUrl?: string;
  /** Defaults of every observation. */
  observe?: ObserveOptions;
  /** The settler's waits and caps. */
  settle?: SettlerOptions;
  /** The dialog policy of the actor. */
  dialogs?: ActorOptions["dialogs"];
  /**
   * Timeout of every browser command of an action, in milliseconds.
   *
   * @default {10000}
   */
  timeoutMs?: number;
  /**
   * Which URLs `goto` may open.
   *
   * @default {the site's origin when there is a site, else http: and https: URLs}
   */
  allowUrl?: (url: URL) => boolean;
  /**
   * The only origins the env's pages may reach over the network; every other
   * request fails (see `NewContextOptions.onlyOrigins`).
   *
   * @default {[the site's origin] when there is a site, else every origin}
   */
  onlyOrigins?: string[];
}

/** One tab, as the observation lists it. */
export interface EnvTab {
  /** The tab's index, what `switch_tab` takes. */
  index: number;
  /** The document's title. */
  title: string;
  /** The document's URL. */
  url: string;
  /** Whether this is the active tab. */
  active: boolean;
}

/** An observation of the env: the active tab's page, its tabs and any open dialog. */
export interface EnvObservation extends Observation {
  /** Every open tab. */
  tabs: EnvTab[];
  /** A JavaScript dialog waiting for the agent's answer. */
  dialog?: DialogInfo;
}

/** What one step did, and the env afterwards. */
export interface StepResult {
  /** What the action did and how the page settled. */
  result: ActResult;
  /** The env after the action; absent once the episode has ended with `stop`. */
  observation?: EnvObservation;
  /** Whether the episode ended (`stop`). */
  done: boolean;
}

interface Episode {
  context: BrowserContext;
  observer: Observer;
  actor: Actor;
  last: Observation | undefined;
}

/**
 * An environment: one isolated context on one site, observed and acted on by
 * element id.
 *
 * @example Open an env, look, act
 * ```ts ignore
 * import { Browser, Env } from "@webserv/webserv";
 * await using browser = await Browser.launch();
 * await using env = await Env.create(browser, { startUrl: "data:text/html,<button>Go</button>" });
 * const { text } = await env.observe();   // [1] button "Go"
 * const step = await env.step({ action: "click", id: 1 });
 * ```
 */
export class Env implements AsyncDisposable {
  /** The site the env serves, if any. */
  readonly site: EnvSite | undefined;
  #browser: Browser;
  #options: EnvOptions;
  #startUrl: string;
  #episode: Episode | undefined;
  #closed = false;

  private constructor(browser: Browser, options: EnvOptions, startUrl: string) {
    this.#browser = browser;
    this.#options = options;
    this.site = options.site;
    this.#startUrl = startUrl;
  }

  /**
   * Creates an env and starts its first episode on the start URL.
   *
   * @param browser the browser the env's context lives in
   * @param options the site, start URL and policies
   * @returns the env, its start page loaded and settled
   * @throws {TypeError} when the start URL is not a valid URL
   */
  static async create(browser: Browser, options: EnvOptions = {}): Promise<Env> {
    const env = new Env(browser, options, startUrlOf(options));
    await env.#start();
    return env;
  }

  /** The context of the current episode. */
  get context(): BrowserContext {
    return this.#current().context;
  }

  /** The actor of the current episode (tabs, dialog, answer). */
  get actor(): Actor {
    return this.#current().actor;
  }

  /** The observer of the current episode. */
  get observer(): Observer {
    return this.#current().observer;
  }

  /** The agent's answer once it took `stop`. */
  get answer(): string | undefined {
    return this.#episode?.actor.answer;
  }

  /**
   * Observes the active tab.
   *
   * @param options overrides of the env's observe defaults
   * @returns the page as text and JSON, with the tabs and any open dialog
   * @throws {Error} when no tab is open or the env is closed
   */
  async observe(options: ObserveOptions = {}): Promise<EnvObservation> {
    const episode = this.#current();
    const { actor, observer } = episode;
    const page = actor.page;
    if (!page) throw new Error("Cannot observe: no tab is open");
    const dialog = actor.dialog;
    // A page behind an open dialog runs no script: show the last view and the dialog.
    const observation = dialog && episode.last
      ? { ...episode.last, diff: { added: [], removed: [], changed: [] } }
      : await observer.observe(page, { ...this.#options.observe, ...options });
    if (!dialog) episode.last = observation;
    const tabs = await this.#tabs(observation);
    const text = frameText(observation.text, tabs, dialog);
    return { ...observation, text, tabs, ...(dialog ? { dialog } : {}) };
  }

  /**
   * Executes one action, then observes the env.
   *
   * @param action the action as the agent sent it (validated here)
   * @returns what it did and the observation after it
   * @throws {TypeError} when the action is malformed
   * @throws {ActionError} when it cannot be done (see `engine/act/errors.ts`); the env stays usable
   */
  async step(action: unknown): Promise<StepResult> {
    const result = await this.#current().actor.act(action);
    if (result.action.action === "stop") return { result, done: true };
    return { result, observation: await this.observe(), done: false };
  }

  /**
   * Starts a new episode: the site back to its first state, a fresh context
   * (no cookies, storage or tabs of the last episode) on the start URL. Ids
   * start over with the new observer.
   */
  async reset(): Promise<void> {
    this.#current();
    const old = this.#episode;
    this.#episode = undefined;
    await old?.context.close();
    await this.site?.reset();
    await this.#start();
  }

  /** Closes the env's context; the site and the browser stay up. Safe to call twice. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    const episode = this.#episode;
    this.#episode = undefined;
    await episode?.context.close();
  }

  /** Closes the env. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  async #start(): Promise<void> {
    const onlyOrigins = this.#options.onlyOrigins ?? (this.site ? [this.site.origin] : undefined);
    const context = await this.#browser.newContext(onlyOrigins ? { onlyOrigins } : {});
    try {
      const settler = Settler.install(context, this.#options.settle);
      const observer = Observer.attach(context);
      const site = this.site;
      const allowUrl = this.#options.allowUrl ??
        (site ? (url: URL) => url.origin === new URL(site.origin).origin : undefined);
      const actor = new Actor(context, {
        resolver: observer,
        settler,
        ...(this.#options.dialogs ? { dialogs: this.#options.dialogs } : {}),
        ...(this.#options.timeoutMs ? { timeoutMs: this.#options.timeoutMs } : {}),
        ...(allowUrl ? { allowUrl } : {}),
      });
      const page = await context.newPage(this.#startUrl);
      await settler.settle(page);
      this.#episode = { context, observer, actor, last: undefined };
    } catch (error) {
      await context.close();
      throw error;
    }
  }

  #current(): Episode {
    if (this.#closed) throw new Error("Cannot use the env: it is closed");
    if (!this.#episode) throw new Error("Cannot use the env: it is resetting");
    return this.#episode;
  }

  async #tabs(observation: Observation): Promise<EnvTab[]> {
    const actor = this.#current().actor;
    return await Promise.all(actor.tabs.map(async (page, index): Promise<EnvTab> => {
      const active = index === actor.tab;
      if (active) return { index, title: observation.title, url: observation.url, active };
      const { targetInfo } = await page.session.connection.send("Target.getTargetInfo", {
        targetId: page.targetId,
      }).catch(() => ({ targetInfo: { title: "", url: "" } }));
      return { index, title: targetInfo.title, url: targetInfo.url, active };
    }));
  }
}

function startUrlOf(options: EnvOptions): string {
  const start = options.startUrl ?? (options.site ? "/" : "about:blank");
  try {
    return new URL(start, options.site?.origin).href;
  } catch (cause) {
    throw new TypeError(
      `Cannot create env: start URL "${start}" is not a URL${
        options.site ? "" : " (no site to resolve a path against)"
      }`,
      { cause },
    );
  }
}

/** Adds the tab list (when there is more than one tab) and any dialog under the header line. */
function frameText(text: string, tabs: EnvTab[], dialog: DialogInfo | undefined): string {
  const extra: string[] = [];
  if (tabs.length > 1) {
    extra.push(
      `tabs: ${
        tabs.map((tab) =>
          `[${tab.index}] ${JSON.stringify(tab.title || tab.url)}${tab.active ? " (active)" : ""}`
        )
          .join(" · ")
      }`,
    );
  }
  if (dialog) {
    const prompt = dialog.defaultPrompt ? ` default=${JSON.stringify(dialog.defaultPrompt)}` : "";
    extra.push(
      `dialog ${dialog.type} ${
        JSON.stringify(dialog.message)
      }${prompt}: answer it with the "dialog" action`,
    );
  }
  if (extra.length === 0) return text;
  const newline = text.indexOf("\n");
  return newline === -1
    ? [text, ...extra].join("\n")
    : `${text.slice(0, newline)}\n${extra.join("\n")}${text.slice(newline)}`;
}
