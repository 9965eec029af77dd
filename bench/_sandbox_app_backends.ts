/**
 * The backends of the real-application bench (`bench/_sandbox_apps.ts`):
 * Incus copy-on-write (btrfs), Docker (overlay2), and the shared runtime's
 * two (`bench/_sandbox_shared.ts`), each with how it reads an env's storage,
 * init and memory.
 *
 * @module
 */
import { IncusSandbox } from "../sandboxes/incus/incus_sandbox.ts";
import { DockerSandbox } from "../sandboxes/docker/docker_sandbox.ts";
import type { Instance } from "../sandboxes/types.ts";
import type { AppBackend, AppSpec } from "./_sandbox_app_specs.ts";
import { sharedBackends } from "./_sandbox_shared.ts";
import { btrfsExclusiveBytes, freeDisk } from "./_sandbox_common.ts";

/** The Incus storage pool the Incus rows use. */
export const POOL = Deno.env.get("WEBSERV_INCUS_POOL") ?? "webserv-btrfs";
const POOL_PATH = `/var/lib/incus/storage-pools/${POOL}`;

function containerName(env: Instance): string {
  return "containerName" in env && typeof env.containerName === "string" ? env.containerName : "";
}

const BACKENDS: AppBackend[] = [
  {
    key: "incus-btrfs",
    label: "Incus, copy-on-write (btrfs)",
    open: (gateway, app) =>
      IncusSandbox.open({
        gateway,
        image: app.image,
        pool: POOL,
        prefix: "wsapp-",
        siteTransport: "tcp",
        readyTimeoutMs: app.readyMs,
      }),
    async storage(_sandbox, env) {
      // Bytes of the env's subvolume that share no extent with its base or
      // anything else: what the env added. The pool is shared with other
      // work, so its growth would count theirs too.
      return await btrfsExclusiveBytes(`${POOL_PATH}/containers/${containerName(env)}`);
    },
    async initPid(sandbox, env) {
      return (await (sandbox as IncusSandbox).client.instanceState(containerName(env))).pid;
    },
    async cgroupMemory(sandbox, env) {
      return (await (sandbox as IncusSandbox).client.instanceState(containerName(env)))
        .memoryUsage;
    },
    async free(sandbox) {
      const space = await (sandbox as IncusSandbox).client.poolSpace(POOL);
      return space.total - space.used;
    },
  },
  {
    key: "docker",
    label: "Docker (overlay2)",
    open: (gateway, app) =>
      DockerSandbox.open({
        gateway,
        image: app.image,
        prefix: "wsapp-",
        readyTimeoutMs: app.readyMs,
      }),
    async storage(sandbox, env) {
      const docker = (sandbox as DockerSandbox).client;
      const containers = await docker.listContainers({ label: "webserv.owner", size: true });
      const name = containerName(env);
      const found = containers.find((c) => c.names.some((n) => n.replace(/^\//, "") === name));
      if (!found) throw new Error(`Docker does not list the container "${name}"`);
      return found.sizeRw;
    },
    async initPid(sandbox, env) {
      return (await (sandbox as DockerSandbox).client.inspectContainer(containerName(env))).pid;
    },
    async cgroupMemory(sandbox, env) {
      return await (sandbox as DockerSandbox).client.memoryUsage(containerName(env));
    },
    free: () => freeDisk("/var/lib/docker"),
  },
  ...sharedBackends(POOL, POOL_PATH),
];

/** Every backend's key, for `BENCH_APP_BACKENDS`. */
export const BACKEND_KEYS: string[] = BACKENDS.map((b) => b.key);

/**
 * The backends an application is measured on.
 *
 * @param app the application
 * @param only the backends' keys chosen by `BENCH_APP_BACKENDS` (every one when undefined)
 * @returns the backends
 */
export function backendsOf(app: AppSpec, only?: string[]): AppBackend[] {
  return BACKENDS.filter((b) =>
    (app.sharedRuntime || !b.key.startsWith("shared")) &&
    (only === undefined || only.includes(b.key))
  );
}
