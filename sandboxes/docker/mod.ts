/**
 * The Docker backend: an Engine API client over the unix socket and a
 * sandbox of containers with no network.
 * Its sandbox is used as the example of the `./sandboxes` entry point shows.
 *
 * @module
 */
export { DOCKER_SOCKET, DockerClient } from "./client.ts";
export type {
  ContainerInspect,
  ContainerSummary,
  CreateContainerOptions,
  DockerClientOptions,
} from "./client.ts";
export { DockerSandbox } from "./docker_sandbox.ts";
export type { DockerSandboxOptions } from "./docker_sandbox.ts";
export { ContainerInstance } from "../_container_instance.ts";
export type { ContainerLimits, DockerLimits } from "../_container_limits.ts";

// The sandbox contract and gateway these classes implement and take, so this
// entry point's documentation stands alone.
export type { Gateway, GatewayRoute, GatewayTarget, SpareRoute } from "../gateway.ts";
export type * from "../types.ts";
