/**
 * What the real-application tests share: opening an application's image on
 * Incus (TCP or unix socket) or Docker, failing with the command that builds
 * it when it is missing, and reading the instance's state API.
 *
 * @module
 */
import { assertEquals, assertNotEquals } from "@std/assert";
import { SandboxError } from "../../sandboxes/errors.ts";
import { Gateway } from "../../sandboxes/gateway.ts";
import { IncusClient } from "../../sandboxes/incus/client.ts";
import { IncusSandbox } from "../../sandboxes/incus/incus_sandbox.ts";
import { DockerClient } from "../../sandboxes/docker/client.ts";
import { DockerSandbox } from "../../sandboxes/docker/docker_sandbox.ts";
import type { Instance, Sandbox } from "../../sandboxes/types.ts";
import type { StateDiff, StateHash } from "../../fixtures/sites/kit/types.ts";

/** Opens a sandbox of an application's image behind a gateway. */
export type OpenApp = (gateway: Gateway) => Promise<Sandbox>;

/** An application's image, and how long its instances take. */
export interface AppImage {
  /** `webserv-NAME`, as `deno task image:apps NAME` imports it. */
  image: string;
  /** How the missing image is built, for the error message. */
  build: string;
  /** How long an instance (and the base, while it seeds) may take to answer. */
  readyMs: number;
}

const POOL = Deno.env.get("WEBSERV_INCUS_POOL") ?? "webserv-btrfs";

/**
 * Opens the image on Incus.
 *
 * @param app the image
 * @param siteTransport how the gateway reaches the site
 * @returns the opener
 */
export function openIncus(app: AppImage, siteTransport: "tcp" | "unix"): OpenApp {
  return async (gateway) => {
    using client = new IncusClient();
    try {
      await client.imageFingerprint(app.image);
    } catch (error) {
      if (error instanceof SandboxError && error.status === 404) {
        throw new Error(`Incus has no image "${app.image}": ${app.build}`);
      }
      throw error;
    }
    return await IncusSandbox.open({
      gateway,
      image: app.image,
      pool: POOL,
      prefix: "wsapp-",
      siteTransport,
      readyTimeoutMs: app.readyMs,
    });
  };
}

/**
 * Opens the image on Docker.
 *
 * @param app the image
 * @returns the opener
 */
export function openDocker(app: AppImage): OpenApp {
  return async (gateway) => {
    using client = new DockerClient();
    if (!(await client.hasImage(`${app.image}:latest`))) {
      throw new Error(`Docker has no image "${app.image}:latest": ${app.build}`);
    }
    return await DockerSandbox.open({
      gateway,
      image: app.image,
      prefix: "wsapp-",
      readyTimeoutMs: app.readyMs,
    });
  };
}

/**
 * A reader of an instance's state API that checks each answer is a 200.
 *
 * @param instance the instance
 * @returns `state(path, init)`, the parsed JSON
 */
export function stateReader(
  instance: Instance,
): <T>(path: string, init?: RequestInit) => Promise<T> {
  const channel = instance.state;
  if (channel === undefined) throw new Error("the instance has no state channel");
  return async <T>(path: string, init?: RequestInit): Promise<T> => {
    const response = await channel.fetch(path, init);
    const body = await response.text();
    assertEquals(response.status, 200, `state ${path}: ${body}`);
    return JSON.parse(body) as T;
  };
}

/**
 * Every row of a diff, as `table kind`, to compare with what one change should make.
 *
 * @param diff the diff
 * @returns one entry a row, such as `"time_entries added"`
 */
export function diffRows(diff: StateDiff): string[] {
  return Object.entries(diff.tables).flatMap(([table, changes]) => [
    ...changes.added.map(() => `${table} added`),
    ...changes.removed.map(() => `${table} removed`),
    ...changes.changed.map(() => `${table} changed`),
  ]);
}

/** What {@linkcode withInstance} gives a check. */
export interface AppInstance {
  /** The gateway the instance is routed through. */
  gateway: Gateway;
  /** The instance, made from seed 1. */
  instance: Instance;
  /** Reads its state API. */
  state: <T>(path: string, init?: RequestInit) => Promise<T>;
}

/**
 * Opens a sandbox behind a new gateway, creates an instance of seed 1, runs
 * the check, and closes everything.
 *
 * @param open how the sandbox is opened
 * @param check what is checked on the instance
 */
export async function withInstance(
  open: OpenApp,
  check: (app: AppInstance) => Promise<void>,
): Promise<void> {
  await using gateway = new Gateway();
  const sandbox = await open(gateway);
  await using _closed = { [Symbol.asyncDispose]: () => sandbox.close() };
  const instance = await sandbox.create({ seed: 1 });
  await check({ gateway, instance, state: stateReader(instance) });
}

/**
 * Checks that the gateway never routes to the state API: `/hash` through it
 * is the application's own page, without the state API's header.
 *
 * @param app the instance
 */
export async function assertStateNotRouted(app: AppInstance): Promise<void> {
  const probe = await app.gateway.request(app.instance.origin, "/hash");
  await probe.body?.cancel();
  assertEquals(probe.headers.get("x-webserv-state"), null);
}

/**
 * Checks that the state changed, resets the instance, and checks that the
 * state hash is the seeded one again.
 *
 * @param app the instance
 * @param seeded the hash before the change
 */
export async function assertResetRestores(app: AppInstance, seeded: StateHash): Promise<void> {
  assertNotEquals((await app.state<StateHash>("/hash")).hash, seeded.hash);
  await app.instance.reset();
  assertEquals(
    (await app.state<StateHash>("/hash")).hash,
    seeded.hash,
    "reset did not restore the seeded state",
  );
}
