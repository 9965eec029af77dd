/**
 * Sandboxes: the {@linkcode Sandbox} interface, the loopback
 * {@linkcode Gateway} that gives every instance its own origin, and the
 * in-process backend. The Incus and Docker backends have their own entry
 * points, `./sandboxes/incus` and `./sandboxes/docker`.
 *
 * @example Serve a site in-process
 * ```ts ignore
 * import { FixtureSandbox, Gateway } from "@webserv/webserv/sandboxes";
 * import { siteByName } from "@webserv/webserv/sites";
 * const site = siteByName("shop");
 * await using gateway = new Gateway();
 * await using sandbox = new FixtureSandbox(site, { gateway });
 * await using instance = await sandbox.create({ seed: 7 });
 * console.log(instance.origin); // http://env-….localhost:…
 * ```
 *
 * @module
 */
export type {
  Instance,
  InstanceForkOptions,
  InstanceSpec,
  Sandbox,
  Site,
  SiteHandler,
  StateClient,
} from "./types.ts";
export {
  DaemonUnavailableError,
  InstanceGoneError,
  SandboxError,
  SandboxTimeoutError,
  SocketTamperedError,
} from "./errors.ts";
export type { SandboxErrorOptions } from "./errors.ts";
export { DEFAULT_LIMITS, SHARED_RUNTIME_LIMITS } from "./_container_limits.ts";
export type { ContainerLimits } from "./_container_limits.ts";
export { Gateway } from "./gateway.ts";
export type { GatewayOptions, GatewayRoute, GatewayTarget, SpareRoute } from "./gateway.ts";
export { WarmPool } from "./warm_pool.ts";
export type { InstanceFactory, WarmPoolOptions } from "./warm_pool.ts";
export { FixtureSandbox } from "./fixture/fixture_sandbox.ts";
export type { FixtureSandboxOptions } from "./fixture/fixture_sandbox.ts";
