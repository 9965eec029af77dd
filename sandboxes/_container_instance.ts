/**
 * An env served by a container (Incus or Docker), shared by both backends.
 *
 * The env's id and origin outlive its containers: a reset by re-copying
 * launches a fresh container, points the gateway route at it, and removes the
 * old one in the background; `destroy()` waits for those removals, so when it
 * returns nothing of the env is left.
 *
 * @module
 */
import { InstanceGoneError } from "./errors.ts";
import type { Gateway, GatewayRoute, GatewayTarget } from "./gateway.ts";
import type { SocketDirectory } from "./_socket_directory.ts";
import type { Instance, StateClient } from "./types.ts";

/** One container and its socket folder. */
export interface Container {
  /** The container's name in the daemon. */
  name: string;
  /** Its socket folder on the host. */
  directory: SocketDirectory;
  /** Where the gateway reaches its site, when not `directory.siteSocket`. */
  target?: GatewayTarget;
}

/** What a backend does for its envs. */
export interface ContainerBackend {
  /** Launches a ready container of the seeded site. */
  launch(seed: number): Promise<Container>;
  /** Removes a container and its folder. */
  remove(container: Container): Promise<void>;
  /** Removes a container in the background; the promise never rejects. */
  removeLater(container: Container): Promise<void>;
  /** Throws {@linkcode InstanceGoneError} when the container is not running. */
  probe(container: Container): Promise<void>;
  /** When present, reset restores the container in place instead. */
  restore?: (container: Container) => Promise<void>;
  /** Called once when the env is destroyed. */
  forget(instance: ContainerInstance): void;
  /**
   * When present, makes a new env on a consistent copy of a running
   * container's data (see {@linkcode Instance.fork}).
   */
  fork?: (container: Container, seed: number) => Promise<ContainerInstance>;
}

/** An env served by a container. */
export class ContainerInstance implements Instance {
  /** The id in `env-<id>.localhost`. */
  readonly id: string;
  /** The origin the browser opens. */
  readonly origin: string;
  /** Privileged access to the site's state API. */
  readonly state: StateClient;
  /**
   * Makes a new env on a copy of this one's live data, taken consistently
   * (the container is frozen while its copy is cut); present only when the
   * backend can copy a running container.
   */
  readonly fork?: () => Promise<Instance>;
  #container: Container;
  #seed: number;
  #backend: ContainerBackend;
  #route: GatewayRoute;
  #destroyed = false;
  #removals = new Set<Promise<void>>();
  /** The liveness check under way, which callers at once share. */
  #checking: Promise<void> | undefined;

  /**
   * Registers the env's route with the gateway.
   *
   * @param container the ready container
   * @param seed the seed, for re-copies
   * @param backend what launches and removes containers
   * @param gateway the gateway to register with
   */
  constructor(
    container: Container,
    seed: number,
    backend: ContainerBackend,
    gateway: Gateway,
  ) {
    this.#container = container;
    this.#seed = seed;
    this.#backend = backend;
    this.#route = gateway.add(siteTarget(container));
    this.id = this.#route.id;
    this.origin = this.#route.origin;
    this.state = {
      fetch: (path, init) => this.#container.directory.state.fetch(path, init),
    };
    const fork = backend.fork;
    if (fork) {
      this.fork = async () => {
        await this.check();
        return await fork(this.#container, this.#seed);
      };
    }
  }

  /** The seed this env was made from (its resets re-copy its base). */
  get seed(): number {
    return this.#seed;
  }

  /** The name of the container serving this env now. */
  get containerName(): string {
    return this.#container.name;
  }

  /**
   * Brings back the seeded state.
   *
   * @throws {InstanceGoneError} when the container died or was removed
   */
  async reset(): Promise<void> {
    await this.check();
    if (this.#backend.restore) {
      await this.#backend.restore(this.#container);
      return;
    }
    const next = await this.#backend.launch(this.#seed);
    if (this.#destroyed) {
      await this.#backend.remove(next);
      throw new InstanceGoneError(`Instance "env-${this.id}" was destroyed`);
    }
    const previous = this.#container;
    this.#container = next;
    this.#route.retarget(siteTarget(next));
    const removal = this.#backend.removeLater(previous);
    this.#removals.add(removal);
    removal.finally(() => this.#removals.delete(removal));
  }

  /**
   * Checks that the container runs and its site answers. Callers at once
   * share one check: k forks asked together checked their parent k times at
   * once, and on a loaded host one of sixteen health requests to the one
   * state server took longer than the check's bound, which failed a fork of
   * a parent that was alive.
   *
   * @throws {InstanceGoneError} when it does not
   */
  check(): Promise<void> {
    if (this.#destroyed) {
      return Promise.reject(new InstanceGoneError(`Instance "env-${this.id}" was destroyed`));
    }
    this.#checking ??= (async () => {
      try {
        await this.#backend.probe(this.#container);
        await checkStateAnswers(this.id, this.state, 2_000);
      } finally {
        this.#checking = undefined;
      }
    })();
    return this.#checking;
  }

  /** Removes the container and its socket folder; safe to call twice. */
  async destroy(): Promise<void> {
    if (this.#destroyed) return;
    this.#destroyed = true;
    this.#route.remove();
    this.#backend.forget(this);
    try {
      await this.#backend.remove(this.#container);
    } finally {
      await Promise.all(this.#removals);
    }
  }

  /** Calls {@linkcode ContainerInstance.destroy}. */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.destroy();
  }
}

function siteTarget(container: Container): GatewayTarget {
  return container.target ?? { unix: container.directory.siteSocket };
}

/**
 * Checks that an env's state API answers `GET /healthz` with a 2xx in time:
 * the liveness check of every container-served env.
 *
 * @param id the env's id (for the message)
 * @param state its state API
 * @param timeoutMs how long the answer may take
 * @throws {InstanceGoneError} when it does not answer, or answers an error
 */
export async function checkStateAnswers(
  id: string,
  state: StateClient,
  timeoutMs: number,
): Promise<void> {
  try {
    const response = await state.fetch("/healthz", { signal: AbortSignal.timeout(timeoutMs) });
    await response.body?.cancel();
    if (!response.ok) throw new Error(`HTTP ${response.status}`);
  } catch (error) {
    throw new InstanceGoneError(
      `Instance "env-${id}" does not answer: ${String(error)}`,
      { cause: error },
    );
  }
}
