/**
 * WebServ: a web environment for training and evaluating LLM web agents.
 *
 * The engine talks raw Chrome DevTools Protocol to Chromium: launch or
 * connect to a browser, open isolated contexts and pages, and send typed CDP
 * commands.
 *
 * @example Launch a browser and evaluate in a page
 * ```ts ignore
 * import { Browser } from "@webserv/webserv";
 * await using browser = await Browser.launch();
 * const context = await browser.newContext();
 * const page = await context.newPage("data:text/html,<title>Hi</title>");
 * const { result } = await page.session.send("Runtime.evaluate", { expression: "document.title" });
 * console.log(result.value); // "Hi"
 * ```
 *
 * @module
 */
// The public surface, named one by one: what is not listed here is internal.
// Each engine folder's mod.ts lists its own public names.

// CDP client
export {
  CdpSession,
  CdpTimeoutError,
  Connection,
  ConnectionClosedError,
  ProtocolError,
  TargetClosedError,
  TcpTransport,
  WebSocketTransport,
} from "./engine/cdp/mod.ts";
export type {
  CdpClient,
  CdpCommandMap,
  CdpErrorOptions,
  CdpEventMap,
  CommandName,
  CommandParams,
  CommandParamsTuple,
  CommandResult,
  ConnectionOptions,
  EventListener,
  EventName,
  EventParams,
  OutgoingMessage,
  SendArgs,
  SendOptions,
  TcpConn,
  TcpConnect,
  TcpTransportOptions,
  Transport,
} from "./engine/cdp/mod.ts";

// Best-effort calls (for transports and other code built on the engine)
export { bestEffort, logFailure } from "./engine/log.ts";

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

// Observation
export { findElement, findElements, Observer } from "./engine/observe/mod.ts";
export type {
  Box,
  ElementHandle,
  ElementQuery,
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

// Actions and tools for LLM function calling
export {
  ACTION_NAMES,
  ACTION_SCHEMA,
  ActionError,
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
  ActionToolsOptions,
  ActorOptions,
  ActResult,
  PressOutcome,
  AnthropicTool,
  DialogAnswer,
  DialogInfo,
  DialogType,
  ElementLocation,
  ElementRef,
  ElementResolver,
  Modifier,
  OpenAiTool,
  ToolSchema,
} from "./engine/act/mod.ts";

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
