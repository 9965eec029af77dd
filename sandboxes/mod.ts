/**
 * Sandboxes: the {@linkcode Sandbox} interface, the loopback
 * {@linkcode Gateway} that gives every instance its own origin, and the
 * in-process backend. The Incus and Docker backends have their own entry
 * points, `./sandboxes/incus` and `./sandboxes/docker`; their sandboxes are
 * used as below, opened with `IncusSandbox.open({ gateway, image, pool })`
 * or `DockerSandbox.open({ gateway, image })` in place of `new FixtureSandbox`.
 *
 * @example Serve a site, reach it through the gateway, reset it
 * ```ts
 * import { FixtureSandbox, Gateway } from "@webserv/webserv/sandboxes";
 * import { siteByName } from "@webserv/webserv/sites";
 * await using gateway = new Gateway();
 * await using sandbox = new FixtureSandbox(siteByName("shop"), { gateway });
 * await using instance = await sandbox.create({ seed: 7 });
 * // Each instance has an origin of its own: http://env-….localhost:PORT
 * const page = await gateway.request(instance.origin, "/");
 * console.assert(page.status === 200);
 * await page.body?.cancel();
 * await instance.reset(); // back to the seeded state
 * ```
 *
 * @module
 */
export type * from "./types.ts";
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
