/**
 * WebServ: a web environment for training and evaluating LLM web agents.
 *
 * The entry point leads with what an agent loop uses: an {@linkcode Env} on
 * a site, the actions it takes ({@linkcode Action}, {@linkcode parseAction},
 * tool schemas for LLM function calling) and the observations it gets, the
 * two error families ({@linkcode ActionError}, the agent's; {@linkcode EnvError},
 * ours), then the browser, observer, actor and settler beneath. The raw
 * Chrome DevTools Protocol layer is `@webserv/webserv/cdp`; the rollout
 * server is `@webserv/webserv/server`.
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
 * const { text } = await env.observe(); // [1] button "Go"
 * await env.step({ action: "click", id: 1 });
 * ```
 *
 * @module
 */
// The public surface, named one by one: what is not listed here is internal.
// Each engine folder's mod.ts lists its own public names.

// Env
export { Env } from "./engine/env.ts";
export type {
  EnvCallOptions,
  EnvObservation,
  EnvObserveOptions,
  EnvOptions,
  EnvSettleOptions,
  EnvSite,
  EnvTab,
  ResetOptions,
  StepResult,
} from "./engine/env_types.ts";

// Contracts: infrastructure errors and tasks
export * from "./engine/env_error.ts";
export type * from "./engine/task.ts";

// Actions and tools for LLM function calling
export {
  ACTION_NAMES,
  ACTION_SCHEMA,
  ActionError,
  ACTIONS,
  actionTools,
  Actor,
  parseAction,
  parseToolCall,
} from "./engine/act/mod.ts";
export type {
  Action,
  ActionErrorCode,
  ActionErrorOptions,
  ActionName,
  ActionSchemaOf,
  ActionToolsOptions,
  ActorOptions,
  ActResult,
  AnthropicTool,
  DialogAnswer,
  DialogInfo,
  DialogType,
  ElementLocation,
  ElementRef,
  ElementResolver,
  Modifier,
  OpenAiTool,
  PressOutcome,
  ToolSchema,
} from "./engine/act/mod.ts";

// Observation
export { findElement, findElements, Observer } from "./engine/observe/mod.ts";
export type {
  Box,
  ElementHandle,
  ElementQuery,
  FrameVeto,
  Observation,
  ObservationDiff,
  ObservedElement,
  ObserveOptions,
  ScrollState,
  SetOfMarks,
  TreeElement,
  TreeFrame,
  TreeMore,
  TreeNode,
  TreeText,
} from "./engine/observe/mod.ts";

// Browser
export {
  Browser,
  BrowserContext,
  BrowserLaunchError,
  BrowserNotFoundError,
  BrowserProcess,
  findChrome,
  Page,
} from "./engine/browser/mod.ts";
export type {
  AttachedTarget,
  BrowserContextEvents,
  BrowserEvents,
  BrowserExit,
  BrowserProcessOptions,
  BrowserSandbox,
  ConnectOptions,
  FindChromeOptions,
  LaunchOptions,
  NewContextOptions,
  PageCrash,
  PageEvents,
  TargetInitializer,
  Viewport,
} from "./engine/browser/mod.ts";

// Settling
export { Settler } from "./engine/settle/mod.ts";
export type {
  SettleOptions,
  SettleResult,
  SettlerOptions,
  SettleSignal,
} from "./engine/settle/mod.ts";

// The CDP types the browser's pages and sessions show (the layer itself: `./cdp`)
export type {
  CdpClient,
  CdpCommandMap,
  CdpEventMap,
  CdpSession,
  CommandName,
  CommandParams,
  CommandParamsTuple,
  CommandResult,
  Connection,
  ConnectionOptions,
  EventListener,
  EventName,
  EventParams,
  OutgoingMessage,
  SendArgs,
  SendOptions,
  Transport,
} from "./engine/cdp/mod.ts";
