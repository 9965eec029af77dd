/**
 * CDP method and event types, keyed by name.
 *
 * The map itself is `devtools-protocol`'s generated `ProtocolMapping`, pinned
 * by version in the specifier below; these aliases are the only place the
 * engine names it.
 *
 * @module
 */
// A full specifier, not the import map's bare name: the engine is imported by
// file URL from projects that have no deno.json of ours (test/mod_test.ts).
// deno-lint-ignore no-import-prefix
import type { ProtocolMapping } from "npm:devtools-protocol@0.0.1734725/types/protocol-mapping.d.ts";

/**
 * `devtools-protocol`'s map of every command, by name: its parameters tuple
 * and its result. Reach it through {@linkcode CommandParams} and
 * {@linkcode CommandResult}; its entries are documented upstream.
 *
 * @ignore
 */
export type CdpCommandMap = ProtocolMapping.Commands;

/**
 * `devtools-protocol`'s map of every event, by name: its parameters tuple.
 * Reach it through {@linkcode EventParams}.
 *
 * @ignore
 */
export type CdpEventMap = ProtocolMapping.Events;

/** Every CDP command name, such as `"Page.navigate"`. */
export type CommandName = keyof CdpCommandMap;

/** Every CDP event name, such as `"Page.loadEventFired"`. */
export type EventName = keyof CdpEventMap;

/** The parameters of command `M` as a tuple: empty, optional or required. */
export type CommandParamsTuple<M extends CommandName> = CdpCommandMap[M]["paramsType"];

/** The parameters object of command `M`. */
export type CommandParams<M extends CommandName> = NonNullable<
  CommandParamsTuple<M>[0]
>;

/** The result of command `M`. */
export type CommandResult<M extends CommandName> = CdpCommandMap[M]["returnType"];

/** The parameters of event `E`. */
export type EventParams<E extends EventName> = CdpEventMap[E][0];
