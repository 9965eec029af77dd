/**
 * A thin stand-in for the planned Env API (deadlines, `reset()` returning
 * the observation, `StepResult.truncated`, `verify()`, tasks) and for
 * `actionTools()`, over the `Env` this branch has. Everything the server
 * needs from the engine beyond `mod.ts` goes through this one file, so it can
 * be deleted when the robust Env lands: `openEnv` becomes `Env.create`,
 * `toEnvError` becomes `instanceof EnvError`, `actionTools` comes from
 * `mod.ts`.
 *
 * @module
 */
import {
  ACTION_SCHEMA,
  ActionError,
  type ActResult,
  type Browser,
  ConnectionClosedError,
  Env,
  EnvError,
  type EnvObservation,
  type EnvSite,
  type EnvTask,
  type ObserveOptions,
  type Page,
  TargetClosedError,
  type Verdict,
} from "../../mod.ts";

/** A viewport in CSS pixels. */
export interface Viewport {
  /** Width in CSS pixels. */
  width: number;
  /** Height in CSS pixels. */
  height: number;
}

/** Options of {@linkcode openEnv}: the planned `Env.create` options the server uses. */
export interface ServedEnvOptions {
  /** The site the env serves. */
  site?: EnvSite;
  /** The task, whose `begin()` runs at each episode start and whose verifier scores it. */
  task?: EnvTask;
  /** Where episodes start when there is no task. */
  startUrl?: string;
  /** The only origins the env's pages may reach. */
  onlyOrigins?: string[];
  /** Defaults of every observation. */
  observe?: ObserveOptions;
  /** The viewport of the env's first tab. */
  viewport?: Viewport;
  /**
   * Deadline of each operation, in milliseconds.
   *
   * @default {30000}
   */
  timeoutMs?: number;
  /** Steps after which the episode is truncated; unlimited when absent. */
  maxSteps?: number;
}

/** What one step did: the planned `StepResult`. */
export interface ServedStep {
  /** What the action did and how the page settled. */
  result: ActResult;
  /** The env afterwards; absent once the episode ended with `stop`. */
  observation?: EnvObservation;
  /** Whether the episode ended with `stop`. */
  done: boolean;
  /** Whether the episode was cut off by the step limit. */
  truncated: boolean;
}

/** Per-call options: a deadline. */
export interface CallOptions {
  /** Deadline of this call in milliseconds; the env's default when absent. */
  timeoutMs?: number;
}

/** The env as the server drives it (the planned Env API). */
export interface ServedEnv extends AsyncDisposable {
  /** The task, if any. */
  readonly task: EnvTask | undefined;
  /** Steps taken in this episode. */
  readonly steps: number;
  /** The active tab's URL as last observed. */
  readonly url: string;
  /** The agent's `stop` answer, if any. */
  readonly answer: string | undefined;
  /** The active tab, if one is open. */
  readonly page: Page | undefined;
  /**
   * Starts a new episode.
   *
   * @param options a new task, a deadline
   * @returns the first observation
   */
  reset(options?: CallOptions & { task?: EnvTask }): Promise<EnvObservation>;
  /**
   * Takes one action.
   *
   * @param action the agent's action (validated by the engine)
   * @param options a deadline
   * @returns the step's result
   */
  step(action: unknown, options?: CallOptions): Promise<ServedStep>;
  /**
   * Observes the active tab.
   *
   * @param options observe options and a deadline
   * @returns the observation
   */
  observe(options?: ObserveOptions & CallOptions): Promise<EnvObservation>;
  /**
   * Scores the episode with the task's verifier.
   *
   * @returns the verdict
   */
  verify(): Promise<Verdict>;
  /**
   * A set-of-marks PNG (or a plain screenshot) of the active tab.
   *
   * @param marks whether to draw the id boxes
   * @returns the PNG bytes
   */
  screenshot(marks: boolean): Promise<Uint8Array>;
  /** Closes the env's context. */
  close(): Promise<void>;
}

/**
 * Opens an env with the planned options (a stand-in for the coming `Env.create`).
 *
 * @param browser the browser
 * @param options the site, task, viewport and deadline
 * @returns the env on its start page
 * @throws {EnvError} when the browser or site fails, or the deadline passes
 */
export async function openEnv(browser: Browser, options: ServedEnvOptions): Promise<ServedEnv> {
  const env = new CompatEnv(browser, options);
  await env.start();
  return env;
}

/**
 * Maps an error thrown by an env operation to the infrastructure family, or
 * `undefined` when it is the agent's (`ActionError`, or `TypeError` for a
 * malformed action).
 *
 * @param error what was thrown
 * @returns the `EnvError`, or `undefined` for the agent's errors
 */
export function toEnvError(error: unknown): EnvError | undefined {
  if (error instanceof ActionError || error instanceof TypeError) return undefined;
  if (error instanceof EnvError) return error;
  const message = error instanceof Error ? error.message : String(error);
  if (error instanceof ConnectionClosedError) {
    return new EnvError("browser-gone", `The browser is gone: ${message}`, { cause: error });
  }
  if (error instanceof TargetClosedError) {
    return new EnvError("renderer-crashed", `The tab is gone: ${message}`, { cause: error });
  }
  if (error instanceof Error && error.name === "InstanceGoneError") {
    return new EnvError("sandbox-lost", message, { cause: error });
  }
  if (error instanceof Error && error.name === "CdpTimeoutError") {
    return new EnvError("timeout", message, { cause: error });
  }
  return new EnvError("internal", message, { cause: error });
}

/** One tool definition in OpenAI's function-calling shape. */
export interface OpenAiTool {
  /** Always `"function"`. */
  type: "function";
  /** The function. */
  function: { name: string; description: string; parameters: Record<string, unknown> };
}

/** One tool definition in Anthropic's tool-use shape. */
export interface AnthropicTool {
  /** The tool's name, the action's name. */
  name: string;
  /** What it does. */
  description: string;
  /** The JSON Schema of its arguments. */
  input_schema: Record<string, unknown>;
}

/**
 * The action space as tool definitions, one tool per action, its arguments
 * the action's fields without `action` (a stand-in for the coming
 * `actionTools` of `engine/act/tools.ts`).
 *
 * @param flavor the provider's shape
 * @returns the tools
 */
export function actionTools(flavor: "openai"): OpenAiTool[];
export function actionTools(flavor: "anthropic"): AnthropicTool[];
export function actionTools(flavor: "openai" | "anthropic"): OpenAiTool[] | AnthropicTool[];
export function actionTools(flavor: "openai" | "anthropic"): OpenAiTool[] | AnthropicTool[] {
  const variants = (ACTION_SCHEMA.oneOf ?? []) as Record<string, unknown>[];
  const tools = variants.map((variant) => {
    const properties = { ...(variant.properties as Record<string, unknown>) };
    const name = (properties.action as { const: string }).const;
    delete properties.action;
    const required = (variant.required as string[]).filter((field) => field !== "action");
    const schema = { type: "object", properties, required, additionalProperties: false };
    return { name, description: String(variant.description), schema };
  });
  return flavor === "openai"
    ? tools.map((tool): OpenAiTool => ({
      type: "function",
      function: { name: tool.name, description: tool.description, parameters: tool.schema },
    }))
    : tools.map((tool): AnthropicTool => ({
      name: tool.name,
      description: tool.description,
      input_schema: tool.schema,
    }));
}

class CompatEnv implements ServedEnv {
  #browser: Browser;
  #options: ServedEnvOptions;
  #task: EnvTask | undefined;
  #env: Env | undefined;
  #steps = 0;
  #url = "";
  #crashed = new WeakSet<Page>();
  #watched = new WeakSet<Page>();
  #chain: Promise<unknown> = Promise.resolve();
  #crashWaiters = new Set<(error: EnvError) => void>();

  constructor(browser: Browser, options: ServedEnvOptions) {
    this.#browser = browser;
    this.#options = options;
    this.#task = options.task;
  }

  get task(): EnvTask | undefined {
    return this.#task;
  }

  get steps(): number {
    return this.#steps;
  }

  get url(): string {
    return this.#url;
  }

  get answer(): string | undefined {
    return this.#env?.answer;
  }

  get page(): Page | undefined {
    try {
      return this.#env?.actor.page;
    } catch {
      return undefined;
    }
  }

  async start(): Promise<void> {
    const operation = (async () => {
      await this.#task?.begin?.();
      const site = this.#options.site;
      const task = (): EnvTask | undefined => this.#task;
      // The task's setup runs after every site reset, before the start page opens.
      const wrapped: EnvSite | undefined = site && {
        origin: site.origin,
        async reset() {
          await site.reset();
          await task()?.begin?.();
        },
      };
      this.#env = await Env.create(this.#browser, {
        ...(wrapped ? { site: wrapped } : {}),
        startUrl: this.#task?.startUrl ?? this.#options.startUrl ?? "/",
        ...(this.#options.onlyOrigins ? { onlyOrigins: this.#options.onlyOrigins } : {}),
        ...(this.#options.observe ? { observe: this.#options.observe } : {}),
      });
      await this.#prepare();
    })();
    try {
      await this.#race(this.#options.timeoutMs ?? 30_000, operation);
    } catch (error) {
      // An env that opens after its deadline has nobody to close it but us.
      operation.then(() => this.close(), () => {});
      throw error;
    }
  }

  reset(options: CallOptions & { task?: EnvTask } = {}): Promise<EnvObservation> {
    return this.#serial(options.timeoutMs, async () => {
      const env = this.#require();
      if (options.task) this.#task = options.task;
      await env.reset();
      this.#steps = 0;
      await this.#prepare();
      return this.#observe({});
    });
  }

  step(action: unknown, options: CallOptions = {}): Promise<ServedStep> {
    return this.#serial(options.timeoutMs, async () => {
      const crashed = this.#crash();
      const env = this.#require();
      this.#check();
      const step = await Promise.race([env.step(action), crashed.promise]).catch((error) => {
        this.#check();
        throw error;
      }).finally(crashed.done);
      this.#steps++;
      this.#watch();
      if (step.observation) this.#url = step.observation.url;
      const max = this.#options.maxSteps;
      const truncated = !step.done && max !== undefined && this.#steps >= max;
      return { ...step, truncated };
    });
  }

  observe(options: ObserveOptions & CallOptions = {}): Promise<EnvObservation> {
    const { timeoutMs, ...observe } = options;
    return this.#serial(timeoutMs, () => this.#observe(observe));
  }

  verify(): Promise<Verdict> {
    return this.#serial(undefined, async () => {
      const task = this.#task;
      if (!task) throw new TypeError("Cannot verify: the session has no task");
      const answer = this.answer;
      return await task.verify({ url: this.#url, ...(answer !== undefined ? { answer } : {}) });
    });
  }

  screenshot(marks: boolean): Promise<Uint8Array> {
    return this.#serial(undefined, async () => {
      const env = this.#require();
      this.#check();
      const page = env.actor.page;
      if (!page) throw new EnvError("internal", "Cannot take a screenshot: no tab is open");
      if (marks) return (await env.observer.setOfMarks(page)).png;
      const shot = await page.session.send("Page.captureScreenshot", { format: "png" });
      return Uint8Array.from(atob(shot.data), (c) => c.charCodeAt(0));
    });
  }

  async close(): Promise<void> {
    const env = this.#env;
    this.#env = undefined;
    await env?.close().catch(() => {});
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  async #observe(options: ObserveOptions): Promise<EnvObservation> {
    const env = this.#require();
    this.#check();
    const crashed = this.#crash();
    const observation = await Promise.race([env.observe(options), crashed.promise])
      .catch((error) => {
        this.#check();
        throw error;
      }).finally(crashed.done);
    this.#url = observation.url;
    return observation;
  }

  async #prepare(): Promise<void> {
    this.#watch();
    const viewport = this.#options.viewport;
    const page = this.page;
    if (viewport && page) {
      await page.session.send("Emulation.setDeviceMetricsOverride", {
        width: viewport.width,
        height: viewport.height,
        deviceScaleFactor: 1,
        mobile: false,
      });
    }
  }

  #watch(): void {
    const env = this.#env;
    if (!env) return;
    for (const page of env.actor.tabs) {
      if (this.#watched.has(page)) continue;
      this.#watched.add(page);
      page.on("crash", () => {
        this.#crashed.add(page);
        const error = new EnvError(
          "renderer-crashed",
          "The tab's renderer crashed: reset the session",
        );
        for (const reject of this.#crashWaiters) reject(error);
      });
    }
  }

  /** A promise that rejects when a tab of the env crashes, until `done()`. */
  #crash(): { promise: Promise<never>; done: () => void } {
    let reject!: (error: EnvError) => void;
    const promise = new Promise<never>((_, fail) => reject = fail);
    promise.catch(() => {});
    this.#crashWaiters.add(reject);
    return { promise, done: () => this.#crashWaiters.delete(reject) };
  }

  #check(): void {
    if (!this.#browser.connected) throw new EnvError("browser-gone", "The browser is gone");
    const page = this.page;
    if (page && this.#crashed.has(page)) {
      throw new EnvError("renderer-crashed", "The tab's renderer crashed: reset the session");
    }
  }

  #require(): Env {
    if (!this.#env) throw new EnvError("closed", "The env is closed");
    return this.#env;
  }

  /**
   * Runs operations one at a time. A deadline ends the caller's wait; the
   * next operation still waits for the late one, up to one more deadline.
   */
  #serial<T>(timeoutMs: number | undefined, run: () => Promise<T>): Promise<T> {
    const ms = timeoutMs ?? this.#options.timeoutMs ?? 30_000;
    let operation: Promise<T> | undefined;
    const result = this.#chain.then(() => {
      operation = run();
      return this.#race(ms, operation);
    });
    this.#chain = result.then(() => {}, async () => {
      if (!operation) return;
      let timer: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([
        operation.catch(() => {}),
        new Promise((resolve) => timer = setTimeout(resolve, ms)),
      ]);
      clearTimeout(timer);
    });
    return result;
  }

  #deadline<T>(timeoutMs: number | undefined, run: () => Promise<T>): Promise<T> {
    return this.#race(timeoutMs ?? this.#options.timeoutMs ?? 30_000, run());
  }

  async #race<T>(ms: number, operation: Promise<T>): Promise<T> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const expiry = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new EnvError("timeout", `The operation did not finish within ${ms} ms`)),
        ms,
      );
    });
    try {
      return await Promise.race([operation, expiry]);
    } catch (error) {
      throw error instanceof ActionError || error instanceof TypeError
        ? error
        : toEnvError(error) ?? error;
    } finally {
      clearTimeout(timer);
      operation.catch(() => {});
    }
  }
}
