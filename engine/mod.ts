/**
 * The engine beneath an agent loop (`@webserv/webserv/engine`): the browser,
 * its contexts and pages, the {@linkcode Observer} and element queries
 * ({@linkcode findElement}), the {@linkcode Actor}, the {@linkcode Settler},
 * and every option and result type they take and give, beside {@linkcode Env}
 * and the action set the root entry point also exports. The raw Chrome
 * DevTools Protocol layer is `@webserv/webserv/cdp`.
 *
 * @example Observe a page without an env
 * ```ts ignore
 * import { Browser, newContext, Observer } from "@webserv/webserv/engine";
 * await using browser = await Browser.launch();
 * const context = await newContext(browser);
 * const observer = Observer.attach(context);
 * const page = await context.newPage("data:text/html,<button>Go</button>");
 * console.log((await observer.observe(page)).text); // … [1] button Go
 * ```
 *
 * @module
 */
// The engine's surface, named one by one: what is not listed here is internal.
// Each engine folder's mod.ts lists its own public names.

// Env
export { Env, envInternals } from "./env.ts";
export type { EnvInternals } from "./env.ts";
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
} from "./env_types.ts";

// The warm pool of ready contexts
export { ContextPool, DEFAULT_POOL_SIZE, MAX_KINDS } from "./context_pool.ts";
export type { OriginReserve, PooledPage, SpareOrigin } from "./context_pool.ts";
export type { ReadyPage, ReadySpec } from "./_ready_page.ts";

// Contracts: infrastructure errors and tasks
export * from "./env_error.ts";
export type * from "./task.ts";

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
} from "./act/mod.ts";
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
  DialogPolicy,
  DialogType,
  ElementLocation,
  ElementRef,
  ElementResolver,
  Modifier,
  OpenAiTool,
  PressOutcome,
  ToolSchema,
} from "./act/mod.ts";

// Observation
export { findElement, findElements, Observer, parseElements } from "./observe/mod.ts";
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
  TextElement,
  TreeElement,
  TreeFrame,
  TreeMore,
  TreeNode,
  TreeText,
} from "./observe/mod.ts";

// Browser
export {
  Browser,
  BrowserContext,
  browserInternals,
  BrowserLaunchError,
  BrowserNotFoundError,
  BrowserProcess,
  findChrome,
  newContext,
  Page,
} from "./browser/mod.ts";
export type {
  AttachedTarget,
  BrowserContextEvents,
  BrowserEvents,
  BrowserExit,
  BrowserInternals,
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
} from "./browser/mod.ts";

// Settling
export { Settler } from "./settle/mod.ts";
export type { SettleOptions, SettleResult, SettlerOptions, SettleSignal } from "./settle/mod.ts";

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
} from "./cdp/mod.ts";
