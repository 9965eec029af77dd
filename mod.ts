/**
 * WebServ: a web environment for training and evaluating LLM web agents.
 *
 * The root entry point holds what an agent loop and a server embedder use:
 * an {@linkcode Env} on a site and its options and results, the browser it
 * runs in ({@linkcode Browser}), the actions an agent takes
 * ({@linkcode Action}, {@linkcode parseAction}, tool schemas for LLM function
 * calling) and the observations it gets, the task an agent sees, and the two
 * error families ({@linkcode ActionError}, the agent's; {@linkcode EnvError},
 * ours). The rest has named entry points: `./engine` (observer, actor,
 * settler, element queries, browser internals), `./cdp` (the raw Chrome
 * DevTools Protocol layer), `./sandboxes`, `./sites`, `./server` (the rollout
 * server) and `./client`.
 *
 * @example Validate an agent's action and derive its tools
 * ```ts
 * import { actionTools, parseAction } from "@webserv/webserv";
 * const action = parseAction({ action: "click", id: 3 });
 * const tools = actionTools("openai");
 * console.assert(action.action === "click" && tools.length > 0);
 * ```
 *
 * @example Open an env on a page, look, act
 * ```ts ignore
 * import { Browser, Env } from "@webserv/webserv";
 * await using browser = await Browser.launch();
 * await using env = await Env.create(browser, { startUrl: "data:text/html,<button>Go</button>" });
 * const { text } = await env.observe(); // [1] button Go
 * await env.step({ action: "click", id: 1 });
 * ```
 *
 * @module
 */
// The curated surface, named one by one (at most 30 names, a test counts
// them): the engine's full surface is `./engine/mod.ts`.

// Env, its options and results
export { Env } from "./engine/env.ts";
export type {
  EnvBranch,
  EnvCallOptions,
  EnvObservation,
  EnvOptions,
  EnvSite,
  ResetOptions,
  StepResult,
} from "./engine/env_types.ts";

// Infrastructure errors (ours) and the task an agent sees
export { EnvError } from "./engine/env_error.ts";
export type { EnvErrorCode } from "./engine/env_error.ts";
export type { EnvTask, EpisodeOutcome, Verdict } from "./engine/task.ts";

// Actions (the agent's errors) and tools for LLM function calling
export {
  ACTION_NAMES,
  ActionError,
  actionTools,
  parseAction,
  parseToolCall,
} from "./engine/act/mod.ts";
export type {
  Action,
  ActionErrorCode,
  ActionName,
  ActionToolsOptions,
  ToolSchema,
} from "./engine/act/mod.ts";

// Observation
export type { Observation, ObservedElement } from "./engine/observe/mod.ts";

// Launching or connecting a browser
export { Browser } from "./engine/browser/mod.ts";
export type { ConnectOptions, LaunchOptions } from "./engine/browser/mod.ts";
