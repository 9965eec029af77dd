/**
 * The host's side of the shared runtime's control API (served inside the
 * runtime container by `fixtures/sites/kit/shared_runtime.ts` on
 * `/run/ws/control.sock`): the client of one runtime, and the shape of its
 * answers.
 *
 * @module
 */
import { InstanceGoneError, SandboxError } from "../errors.ts";
import { type Owner, SocketDirectory } from "../_socket_directory.ts";

/**
 * How an env's database server was had: a spare, started for the call, or
 * started on a copy of another env's live database (a fork).
 */
export type ServerSource = "spare" | "cold" | "fork";

/**
 * How a fork's database was had: a waiting spare that imported the tables
 * the parent changed, or a server started on a copy of the parent's whole
 * live datadir (which recovers it as after a crash, and takes longer).
 */
export type ForkPath = "import" | "copy";

/** How a fork was made: its path, why not by import, and the import's steps. */
export interface ForkRecord {
  /** A fork's path; absent from other answers and from an older control's. */
  path?: ForkPath;
  /** Why a fork took the copy path. */
  reason?: string;
  /** A fork by import's steps, each's end in ms from its start. */
  phases?: Record<string, number>;
}

/** What the runtime's control answers to a creation, a reset or a fork. */
export interface ControlAnswer extends ForkRecord {
  source: ServerSource;
  slot: number;
  ms: number;
}

export function decodeControlAnswer(value: unknown): ControlAnswer {
  if (typeof value === "object" && value !== null) {
    const { source, slot, ms, path, reason, phases } = value as Record<string, unknown>;
    if (
      (source === "spare" || source === "cold" || source === "fork") &&
      typeof slot === "number" &&
      typeof ms === "number" &&
      (path === undefined || path === "import" || path === "copy") &&
      (reason === undefined || typeof reason === "string") &&
      (phases === undefined || (typeof phases === "object" && phases !== null &&
        Object.values(phases).every((end) => typeof end === "number")))
    ) {
      return {
        source,
        slot,
        ms,
        ...(path === undefined ? {} : { path }),
        ...(reason === undefined ? {} : { reason }),
        ...(phases === undefined ? {} : { phases: phases as Record<string, number> }),
      };
    }
  }
  throw new SandboxError(
    `The shared runtime's control answered an unknown shape: ${JSON.stringify(value)}`,
  );
}

/** What the runtime's control answers to `GET /healthz`. */
export interface RuntimeHealth {
  /** Envs open on the runtime. */
  envs: number;
  /** Database servers started ahead and waiting. */
  spares: number;
  /** Spares that died while waiting (thrown away and replaced, never handed out). */
  sparesLost: number;
  /** Whether the control copies a live env (`POST /envs/KEY/fork`); an older image's does not. */
  forks: boolean;
}

export function decodeHealth(value: unknown): RuntimeHealth {
  if (typeof value === "object" && value !== null) {
    const { envs, spares, sparesLost, forks } = value as Record<string, unknown>;
    if (
      typeof envs === "number" && typeof spares === "number" && typeof sparesLost === "number"
    ) {
      return { envs, spares, sparesLost, forks: forks === true };
    }
  }
  throw new SandboxError(
    `The shared runtime's control answered an unknown health: ${JSON.stringify(value)}`,
  );
}

/**
 * One running runtime container and its control. The runtime's folder on
 * the host (`folder`, root's) holds the container's folder (`folder/ws`, at
 * `/run/ws` inside, its root's alone) and the host's pins of the sockets
 * made in it: `control.sock` here, each env's in `folder/env-KEY/` (see
 * `_socket_directory.ts`).
 */
export class Runtime {
  readonly name: string;
  /** Whether its control copies a live env (its health says so; set once it answers). */
  forks = false;
  readonly folder: string;
  /** The container's root as the host sees it: the owner of its sockets. */
  readonly owner: Owner;
  #directory: SocketDirectory;
  #http: Deno.HttpClient;

  constructor(name: string, folder: string, owner: Owner) {
    this.name = name;
    this.folder = folder;
    this.owner = owner;
    this.#directory = new SocketDirectory(folder, { owner });
    this.#http = Deno.createHttpClient({
      proxy: { transport: "unix", path: this.#directory.socket("control.sock") },
      poolMaxIdlePerHost: 0,
    });
  }

  /** The container's folder, bind-mounted at `/run/ws`. */
  get mounted(): string {
    return this.#directory.mounted;
  }

  /**
   * Pins the control's socket (see `SocketDirectory.pin`).
   *
   * @returns false when the control does not listen yet
   * @throws {SocketTamperedError} when the socket was tampered with
   */
  pin(): Promise<boolean> {
    return this.#directory.pin("control.sock");
  }

  /** Calls the control API; throws a SandboxError with its message unless 2xx. */
  async call(
    method: string,
    path: string,
    body: unknown,
    timeoutMs: number,
  ): Promise<unknown> {
    let response: Response;
    try {
      response = await fetch(`http://localhost${path}`, {
        method,
        client: this.#http,
        signal: AbortSignal.timeout(timeoutMs),
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
    } catch (error) {
      throw new InstanceGoneError(
        `The shared runtime "${this.name}" does not answer: ${String(error)}`,
        { cause: error },
      );
    }
    const answer: unknown = await response.json().catch(() => null);
    if (!response.ok) {
      const message = typeof answer === "object" && answer !== null && "error" in answer
        ? String(answer.error)
        : `HTTP ${response.status}`;
      throw new SandboxError(
        `The shared runtime "${this.name}" refused ${method} ${path}: ${message}`,
        { status: response.status, daemonMessage: message },
      );
    }
    return answer;
  }

  /** Closes the connection to the control. */
  close(): void {
    this.#http.close();
    this.#directory[Symbol.dispose]();
  }
}

/** A random key of 12 base-36 characters: an env's key, a runtime name's tail. */
export function randomKey(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(12));
  return Array.from(bytes, (b) => (b % 36).toString(36)).join("");
}
