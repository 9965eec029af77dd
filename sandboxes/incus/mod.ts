/**
 * The Incus backend: a REST client (unix socket or HTTPS with a client
 * certificate) and a sandbox of copy-on-write containers.
 * Its sandbox is used as the example of the `./sandboxes` entry point shows.
 *
 * @module
 */
export { INCUS_SOCKET, IncusClient } from "./client.ts";
export type {
  ClusterMember,
  IncusClientOptions,
  IncusRequestOptions,
  InstanceState,
  InstanceSummary,
  Operation,
} from "./client.ts";
export { IncusSandbox } from "./incus_sandbox.ts";
export { ContainerInstance } from "../_container_instance.ts";
export type { IncusSandboxOptions } from "./incus_sandbox.ts";
export { SharedRuntimeInstance, SharedRuntimeSandbox } from "./shared_runtime_sandbox.ts";
export type {
  ForkPath,
  ForkRecord,
  RuntimeHealth,
  ServerSource,
  SharedRuntimeSandboxOptions,
} from "./shared_runtime_sandbox.ts";
export type { ContainerLimits } from "../_container_limits.ts";

// The sandbox contract and gateway these classes implement and take, so this
// entry point's documentation stands alone.
export type { Gateway, GatewayRoute, GatewayTarget, SpareRoute } from "../gateway.ts";
export type * from "../types.ts";
