/**
 * The raw CDP client: connection, sessions, transports and errors.
 *
 * @module
 */
export * from "./connection.ts";
export * from "./errors.ts";
export type * from "./protocol.ts";
export type * from "./transport.ts";
export * from "./websocket_transport.ts";
