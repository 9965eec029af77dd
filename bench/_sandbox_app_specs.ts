/**
 * What the real-application bench (`bench/_sandbox_apps.ts`) measures: the
 * applications, each with the first write a visitor makes on it (declared in
 * the application's folder, reached through the site registry), and the
 * shape of a backend of envs.
 *
 * @module
 */
import type { Gateway } from "../sandboxes/gateway.ts";
import type { Instance, Sandbox } from "../sandboxes/types.ts";
import { APPS as REGISTRY } from "../fixtures/sites/registry.ts";

/** A real application and the write a visitor makes on it. */
export interface AppSpec {
  key: string;
  label: string;
  image: string;
  database: string;
  /** How long an instance (and the base, when it has to seed) may take. */
  readyMs: number;
  /** Whether its image runs the shared-runtime mode (`WS_SHARED=1`), measured beside the containers. */
  sharedRuntime: boolean;
  /** One write through the gateway, as an anonymous visitor makes it; throws unless it took. */
  write(gateway: Gateway, env: Instance, n: number): Promise<void>;
}

/** A backend of envs (a container per env, or the shared runtime). */
export interface AppBackend {
  key: "incus-btrfs" | "docker" | "shared" | "shared-cold";
  label: string;
  open(gateway: Gateway, app: AppSpec): Promise<Sandbox>;
  /** Bytes the env holds of its own, after its first write. */
  storage(sandbox: Sandbox, env: Instance): Promise<number>;
  /** The host pid of the container's init. */
  initPid(sandbox: Sandbox, env: Instance): Promise<number>;
  /**
   * The container's memory use as the backend reports it (cgroup, page cache
   * included); for the shared runtime, the runtime's divided among `envs`.
   */
  cgroupMemory(sandbox: Sandbox, env: Instance, envs: number): Promise<number>;
  /**
   * PSS and RSS of the env's processes, when not every process of its
   * container's pid namespace (the shared runtime: the env's own server plus
   * its share of the runtime among `envs` envs).
   */
  memory?(
    sandbox: Sandbox,
    env: Instance,
    envs: number,
  ): Promise<{ pss: number; rss: number; processes: number; ownPss: number }>;
  /** PSS of everything the backend runs for `envs`, divided among them (the shared runtime). */
  pssPerEnv?(sandbox: Sandbox, envs: Instance[]): Promise<number>;
  /** Bytes free where the next env's storage goes. */
  free(sandbox: Sandbox): Promise<number>;
  /**
   * Waits, untimed, until a launch or reset finds what the backend's row
   * says it takes (the shared runtime's spares refilled); a bounded wait.
   */
  settle?(sandbox: Sandbox): Promise<void>;
}

/**
 * The applications measured, in `BENCH_APPS` order of keys: every real
 * application of the site registry that declares what the bench measures on it
 * (`sandboxBench`, in its folder).
 */
export const APPS: AppSpec[] = Object.values(REGISTRY).flatMap((app) =>
  app.sandboxBench
    ? [{
      key: app.name,
      label: app.sandboxBench.label,
      image: `webserv-${app.name}`,
      database: app.sandboxBench.database,
      readyMs: app.sandboxBench.readyMs,
      sharedRuntime: app.sharedRuntime,
      write: (gateway: Gateway, env: Instance, n: number) =>
        app.sandboxBench!.write(gateway, env, n),
    }]
    : []
);
