/**
 * The raw CDP client: connection, sessions, transports and errors.
 *
 * @module
 */
export { CdpSession, Connection } from "./connection.ts";
export type {
  CdpClient,
  ConnectionOptions,
  EventListener,
  SendArgs,
  SendOptions,
} from "./connection.ts";
export {
  CdpTimeoutError,
  ConnectionClosedError,
  ProtocolError,
  TargetClosedError,
} from "./errors.ts";
export type { CdpErrorOptions, ConnectionClosedErrorOptions } from "./errors.ts";
export type {
  CdpCommandMap,
  CdpEventMap,
  CommandName,
  CommandParams,
  CommandParamsTuple,
  CommandResult,
  EventName,
  EventParams,
} from "./protocol.ts";
export type { OutgoingMessage, Transport } from "./transport.ts";
export { WebSocketTransport } from "./websocket_transport.ts";
export {
  type TcpConn,
  type TcpConnect,
  TcpTransport,
  type TcpTransportOptions,
} from "./tcp_transport.ts";
// For transports built on this layer: a best-effort call logged and counted, never thrown.
export { bestEffort } from "../log.ts";
