/**
 * CDP method and event types, keyed by name.
 *
 * The map itself is `devtools-protocol`'s generated `ProtocolMapping`, pinned
 * in `deno.json` and `deno.lock`; these aliases are the only place the engine
 * names it.
 *
 * @module
 */
import type { ProtocolMapping } from "devtools-protocol/types/protocol-mapping.d.ts";

export type { Protocol } from "devtools-protocol/types/protocol.d.ts";

/** Every CDP command name, such as `"Page.navigate"`. */
export type CommandName = keyof ProtocolMapping.Commands;

/** Every CDP event name, such as `"Page.loadEventFired"`. */
export type EventName = keyof ProtocolMapping.Events;

/** The parameters of command `M` as a tuple: empty, optional or required. */
export type CommandParamsTuple<M extends CommandName> = ProtocolMapping.Commands[M]["paramsType"];

/** The parameters object of command `M`. */
export type CommandParams<M extends CommandName> = NonNullable<
  CommandParamsTuple<M>[0]
>;

/** The result of command `M`. */
export type CommandResult<M extends CommandName> = ProtocolMapping.Commands[M]["returnType"];

/** The parameters of event `E`. */
export type EventParams<E extends EventName> = ProtocolMapping.Events[E][0];
