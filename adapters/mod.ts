/**
 * How the engine meets the world: CDP transports over chrome-remote-interface
 * and puppeteer-core, for code that already holds one of those clients.
 *
 * @example Connect the engine through chrome-remote-interface
 * ```ts ignore
 * import { Browser } from "@webserv/webserv";
 * import { CriTransport } from "@webserv/webserv/adapters";
 * const browser = await Browser.connect(await CriTransport.connect("ws://…"));
 * ```
 *
 * @module
 */
export * from "./cri_transport.ts";
export * from "./puppeteer_transport.ts";
