/**
 * Incus instance calls the two Incus backends (`IncusSandbox` and
 * `SharedRuntimeSandbox`) both make: opening on an image, naming a seeded
 * base, asking whether an instance exists and whether it runs, and deleting
 * one through the process's one queue of state changes.
 *
 * @module
 */
import { settled } from "../../engine/log.ts";
import { InstanceGoneError, SandboxError } from "../errors.ts";
import { findImage, openContainerSandbox } from "../_container_sandbox.ts";
import { ownerTag } from "../_owner.ts";
import type { IncusClient } from "./client.ts";
import { decodeInstances, decodeRootIds, type RootIds } from "./_decode.ts";

/** The daemon and image an Incus backend opened on. */
export interface OpenedImage {
  /** The Incus client in use. */
  client: IncusClient;
  /** Whether the backend made the client, and so closes it. */
  ownsClient: boolean;
  /** The image's fingerprint. */
  fingerprint: string;
}

/**
 * Opens an Incus backend on an image: finds the image (a missing one is a
 * SandboxError telling how to build it), makes the backend, and reaps what
 * crashed runs left; closes a client it was given to own on failure.
 *
 * @param client the Incus client
 * @param ownsClient whether the backend made the client
 * @param image the image alias
 * @param build the command that builds the image, for the error message
 * @param make makes the backend
 * @returns the backend
 */
export function openOnImage<S extends { reap(): Promise<string[]> }>(
  client: IncusClient,
  ownsClient: boolean,
  image: string,
  build: string,
  make: (opened: OpenedImage) => S,
): Promise<S> {
  return openContainerSandbox(client, ownsClient, async () => {
    const fingerprint = await findImage(
      () => client.imageFingerprint(image),
      `Incus has no image "${image}": build it with "${build}"`,
    );
    return make({ client, ownsClient, fingerprint });
  });
}

/**
 * The name of the seeded base of an image, pool and seed:
 * `PREFIX base-SITE-SEED-POOL-FINGERPRINT` plus `suffix`.
 *
 * @param prefix the backend's instance prefix
 * @param image the image alias (`webserv-` is dropped)
 * @param pool the storage pool
 * @param seed the seed
 * @param fingerprint the image's fingerprint
 * @param suffix appended: a cluster member's tag, the shared runtime's mark
 * @returns the name
 */
export function baseName(
  prefix: string,
  image: string,
  pool: string,
  seed: number,
  fingerprint: string,
  suffix = "",
): string {
  const site = image.replace(/^webserv-/, "").replace(/[^a-z0-9]/g, "");
  const poolTag = pool.replace(/[^a-zA-Z0-9]/g, "").slice(0, 12);
  return `${prefix}base-${site}-${seed}-${poolTag}-${fingerprint.slice(0, 12)}${suffix}`;
}

/** A container to create: what differs between the backends' containers. */
export interface ContainerSpec {
  /** The instance name. */
  name: string;
  /** Incus's `source`: an image, or a copy of a snapshot. */
  source: Record<string, unknown>;
  /** Instance config; `user.webserv.owner` is added (and wins). */
  config: Record<string, string>;
  /** The host folder bind-mounted at `/run/ws` (the `ws` device): the container's own. */
  folder: string;
  /** More devices, such as the root disk or a proxy. */
  devices?: Record<string, Record<string, string>>;
}

/**
 * Creates (does not start) a container with no profile, owned by this
 * process (`user.webserv.owner`, so a later run can reap it once this one is
 * gone), its socket folder bind-mounted at `/run/ws`.
 *
 * @param client the Incus client (its target places the container)
 * @param spec the container
 * @returns its root's uid and gid on the host (what its idmap maps root
 *   to), the owner the caller gives the socket folder to before the start
 */
export async function createContainer(client: IncusClient, spec: ContainerSpec): Promise<RootIds> {
  await client.request("POST", "/1.0/instances", {
    placed: true,
    json: {
      name: spec.name,
      type: "container",
      profiles: [],
      source: spec.source,
      config: { ...spec.config, "user.webserv.owner": ownerTag() },
      devices: {
        ...spec.devices,
        ws: { type: "disk", source: spec.folder, path: "/run/ws" },
      },
    },
  });
  const metadata = await client.request("GET", `/1.0/instances/${spec.name}`);
  return decodeRootIds(decodeInstances([metadata])[0]?.config["volatile.idmap.next"]);
}

/**
 * Whether a daemon path (an instance, a snapshot) exists.
 *
 * @param client the Incus client
 * @param path such as `/1.0/instances/NAME`
 * @returns false on a 404
 */
export async function exists(client: IncusClient, path: string): Promise<boolean> {
  try {
    await client.request("GET", path);
    return true;
  } catch (error) {
    if (error instanceof SandboxError && error.status === 404) return false;
    throw error;
  }
}

/**
 * The instance's status, from `GET /1.0/instances/NAME`: unlike the state
 * call it runs no helper inside the container's namespaces, which fails
 * while init is dying and adds load while Incus starts or stops others.
 *
 * @param client the Incus client
 * @param name the instance
 * @returns such as `"Running"`
 */
export async function instanceStatus(client: IncusClient, name: string): Promise<string> {
  const metadata = await client.request("GET", `/1.0/instances/${name}`);
  return decodeInstances([metadata])[0]?.status ?? "Unknown";
}

/**
 * Checks that the instance exists and runs.
 *
 * @param client the Incus client
 * @param name the instance
 * @throws {InstanceGoneError} when it is gone or not running
 */
export async function probeInstance(client: IncusClient, name: string): Promise<void> {
  let status: string;
  try {
    status = await instanceStatus(client, name);
  } catch (error) {
    if (error instanceof SandboxError && error.status === 404) {
      throw new InstanceGoneError(
        `Incus instance "${name}" no longer exists`,
        { status: 404, daemonMessage: error.daemonMessage, cause: error },
      );
    }
    throw error;
  }
  if (status !== "Running") {
    throw new InstanceGoneError(
      `Incus instance "${name}" is not running: its status is "${status}"`,
    );
  }
}

/** Polls until the instance is stopped or gone; rethrows `cause` after 90 s. */
async function waitUntilStopped(client: IncusClient, name: string, cause: unknown): Promise<void> {
  const deadline = Date.now() + 90_000;
  for (;;) {
    let status: string;
    try {
      status = await instanceStatus(client, name);
    } catch (error) {
      if (error instanceof SandboxError && error.status === 404) return;
      throw error;
    }
    if (status === "Stopped") return;
    if (Date.now() > deadline) throw cause;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

/**
 * Stops and deletes an instance, through the queue of state changes; one
 * already gone is fine.
 *
 * @param client the Incus client
 * @param name the instance
 */
export async function deleteInstance(client: IncusClient, name: string): Promise<void> {
  try {
    await serialized(() => client.changeState(name, "stop", true));
  } catch (error) {
    if (!(error instanceof SandboxError)) throw error;
    // 404: already gone; 400: already stopped. Under heavy load the stop
    // hook can hang inside Incus although the container did stop.
    // Another stop would queue behind the hung one, so none is sent.
    // Such a stall was seen to last up to a minute: wait it out, polling.
    if (error.status !== 404 && error.status !== 400) {
      await waitUntilStopped(client, name, error);
    }
  }
  for (let attempt = 0;; attempt++) {
    try {
      await client.request("DELETE", `/1.0/instances/${name}`);
      break;
    } catch (error) {
      if (!(error instanceof SandboxError)) throw error;
      if (error.status === 404) break;
      // A stop whose hooks timed out may hold the instance for a while.
      if (attempt >= 90) throw error;
      await new Promise((resolve) => setTimeout(resolve, 1_000));
    }
  }
}

let queue: Promise<unknown> = Promise.resolve();

/**
 * Runs Incus state changes of this process one at a time: Incus runs them
 * one at a time per storage pool anyway, and a queue of our own keeps each
 * call's deadline for its own work.
 *
 * @param task the change
 * @returns its result
 */
export function serialized<T>(task: () => Promise<T>): Promise<T> {
  const result = queue.then(task);
  queue = settled(result); // its failure is the caller's, through `result`
  return result;
}
