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
// The curated surface, named one by one (a test caps the count): the
// engine's full surface is `./engine/mod.ts`. Besides what an agent loop
// calls, the root names every type the signatures of its classes and
// functions reference, so that its documentation stands alone (`deno doc
// --lint mod.ts`, JSR's page of this entry point); the engine's classes
// beneath an `Env` or a `Browser` are reached through `envInternals` and
// `browserInternals` in `./engine`, which keeps them and the CDP types out.

// Env, its options and results
export { Env } from "./engine/env.ts";
export type {
  BranchAt,
  EnvBranch,
  EnvCallOptions,
  EnvObservation,
  EnvObserveOptions,
  EnvOptions,
  EnvSettleOptions,
  EnvSite,
  EnvTab,
  ForkOptions,
  ResetOptions,
  StepResult,
} from "./engine/env_types.ts";

export type { OriginReserve, SpareOrigin } from "./engine/context_pool.ts";

// Infrastructure errors (ours) and the task an agent sees
export { EnvError } from "./engine/env_error.ts";
export type { EnvErrorCode } from "./engine/env_error.ts";
export type { EnvTask, EpisodeOutcome, PageSignals, Verdict } from "./engine/task.ts";

// Actions (the agent's errors), their results and dialogs, and tools for LLM function calling
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
  ActResult,
  AnthropicTool,
  DialogAnswer,
  DialogInfo,
  DialogPolicy,
  DialogType,
  Modifier,
  OpenAiTool,
  PressOutcome,
  ToolSchema,
} from "./engine/act/mod.ts";

// Observation
export type {
  Box,
  FrameVeto,
  Observation,
  ObservationDiff,
  ObservedElement,
  ObserveOptions,
  ScrollState,
  TreeElement,
  TreeFrame,
  TreeMore,
  TreeNode,
  TreeText,
} from "./engine/observe/mod.ts";

// Settling
export type {
  SettleOptions,
  SettleResult,
  SettlerOptions,
  SettleSignal,
} from "./engine/settle/mod.ts";

// Launching or connecting a browser
export { Browser } from "./engine/browser/mod.ts";
export type {
  BrowserEvents,
  BrowserExit,
  BrowserProcessOptions,
  ConnectOptions,
  LaunchOptions,
  Viewport,
} from "./engine/browser/mod.ts";
export type { ConnectionOptions } from "./engine/cdp/mod.ts";
