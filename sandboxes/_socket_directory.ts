/**
 * An instance's sockets on the host: `site.sock` for the gateway and
 * `state.sock` for the privileged state API.
 *
 * The container listens in its own folder (`mounted`, bind-mounted at
 * `/run/ws`), which a process in the container can change at will: put a
 * symlink to a host socket (Incus's, Docker's) in place of `site.sock`, or
 * its own state server in place of `state.sock`. So the host never dials a
 * path in that folder. Each socket is **pinned** first: hard-linked (which
 * links a symlink itself, never what it points at) into a folder only the
 * host writes (`path`), checked there to be a socket owned by the
 * container's root, and dialled there ever after. A link of anything else is
 * a {@linkcode SocketTamperedError}, and once pinned, whatever the container
 * does to its folder cannot move what the host dials (a socket unlinked and
 * bound again by another process is a new inode, which the pin does not
 * reach). The container's folder itself belongs to the container's root
 * (mode 0755), so no other user in the container can write it.
 *
 * Layout: `path/` (root's, 0755) holds the pins `path/site.sock`,
 * `path/state.sock` and, by default, the container's folder `path/ws/`.
 *
 * @module
 */
import { join } from "node:path";
import { SandboxError, SandboxTimeoutError, SocketTamperedError } from "./errors.ts";
import type { StateClient } from "./types.ts";

/** A host uid and gid: the container's root as the host sees it. */
export interface Owner {
  uid: number;
  gid: number;
}

/** Options of {@linkcode SocketDirectory.waitUntilReady}. */
export interface ReadyOptions {
  /** How long to wait, in milliseconds. */
  timeoutMs: number;
  /** Called about once a second; throw from it to stop waiting early. */
  probe?: () => Promise<void>;
  /**
   * Also wait until the site answers HTTP through `site.sock` (see
   * {@linkcode SITE_PROBE_PATH}). Set it when the gateway reaches the site
   * through that socket: an image may start its site relay and its state
   * server side by side, and under load the state server can answer first,
   * so "ready" on the state socket alone let the gateway's first request
   * fail with a 502; and a socket that accepts is not a site that answers (a
   * real application's relay answers 502 while its web server is down).
   *
   * @default {false}
   */
  site?: boolean;
}

/**
 * What readiness asks the site for through `site.sock`: a path with an
 * encoded slash, which Apache refuses with a 404 before any handler or
 * rewrite runs (`AllowEncodedSlashes Off`, its default), so the answer proves
 * the web server serves while running none of the application (no page
 * render, no write, nothing in the state a fork's hash compares); the
 * in-process sites answer it with their own 404. Any answer but a 502 will
 * do: a real application's relay (`kit/site_relay.ts`) answers 502 when its
 * web server does not.
 */
export const SITE_PROBE_PATH = "/%2F";

/** One instance's sockets on the host. */
export class SocketDirectory implements Disposable {
  /** The host's folder: only the host writes it; the pins live here. */
  readonly path: string;
  /** The container's folder, where it listens (bind-mounted at `/run/ws`, or a folder in it). */
  readonly mounted: string;
  /** The site's socket as the host dials it (pinned), for the gateway. */
  readonly siteSocket: string;
  /** The state API's socket as the host dials it (pinned). */
  readonly stateSocket: string;
  /** Privileged access to the state API, through the pinned socket. */
  readonly state: StateClient;
  #owner: Owner;
  #http: Deno.HttpClient;

  /**
   * @param path the host's folder
   * @param options `mounted`: the container's folder (default `path/ws`);
   *   `owner`: the container's root as the host sees it, owner of every
   *   socket the container makes (default root, as in a Docker container;
   *   {@linkcode SocketDirectory.own} sets it for a user namespace)
   */
  constructor(path: string, options: { mounted?: string; owner?: Owner } = {}) {
    this.path = path;
    this.mounted = options.mounted ?? join(path, "ws");
    this.#owner = options.owner ?? { uid: 0, gid: 0 };
    this.siteSocket = join(path, "site.sock");
    this.stateSocket = join(path, "state.sock");
    // No idle connections: a restarted instance listens on a new socket.
    // The URL's host is "localhost": Deno resolves it even through a unix
    // proxy, and any other name would be a DNS query leaving the machine.
    this.#http = Deno.createHttpClient({
      proxy: { transport: "unix", path: this.stateSocket },
      poolMaxIdlePerHost: 0,
    });
    this.state = {
      fetch: (path, init) => fetch(`http://localhost${path}`, { ...init, client: this.#http }),
    };
  }

  /** The container's root as the host sees it. */
  get owner(): Owner {
    return this.#owner;
  }

  /**
   * Creates the host's folder (root's, 0755) and, unless `mounted` is
   * false, the container's folder in it (0755, the owner's). A container's
   * folder that exists already is left as it is: it is another run's, which
   * makes a base of the same name and has given it to its container.
   *
   * @param options `mounted: false` when the container makes its folder itself
   */
  async create(options: { mounted?: boolean } = {}): Promise<void> {
    // Synchronous, as the pins: two steps handed to Deno's blocking pool
    // cost a fork on the shared runtime about half a millisecond.
    Deno.mkdirSync(this.path, { recursive: true, mode: 0o755 });
    Deno.chmodSync(this.path, 0o755);
    if (options.mounted === false) return;
    try {
      await Deno.mkdir(this.mounted, { mode: 0o700 });
    } catch (error) {
      if (error instanceof Deno.errors.AlreadyExists) return;
      throw error;
    }
    await this.own(this.#owner);
  }

  /**
   * Gives the container's folder to the container's root, writable by it
   * alone (0755); call it before the container starts.
   *
   * @param owner the container's root as the host sees it
   */
  async own(owner: Owner): Promise<void> {
    this.#owner = owner;
    await Deno.chown(this.mounted, owner.uid, owner.gid);
    await Deno.chmod(this.mounted, 0o755);
  }

  /**
   * The pinned path of a socket the container makes in its folder.
   *
   * @param name such as `"control.sock"`
   * @returns the path the host dials
   */
  socket(name: string): string {
    return join(this.path, name);
  }

  /** Removes the pins and the sockets left by an earlier run of the instance. */
  async clear(): Promise<void> {
    for (const name of ["site.sock", "state.sock"]) {
      await Deno.remove(this.socket(name)).catch(ignoreNotFound);
      await Deno.remove(join(this.mounted, name)).catch(ignoreNotFound);
    }
  }

  /**
   * Pins a socket of the container's folder: hard-links it into the host's
   * folder and checks the link there.
   *
   * @param name such as `"state.sock"`
   * @returns false when the container has not made it (yet), or it changed meanwhile
   * @throws {SocketTamperedError} when it is a symlink, not a socket, not
   *   the container root's, or the container's folder was replaced
   */
  pin(name: string): Promise<boolean> {
    return pinSocket(this.mounted, name, this.socket(name), this.#owner);
  }

  /**
   * Pins sockets the container has made by now.
   *
   * @param names such as `["state.sock", "site.sock"]`
   * @throws {SocketTamperedError} when one was tampered with
   * @throws {SandboxError} when one is missing
   */
  async pinNow(names: string[]): Promise<void> {
    for (const name of names) {
      if (!await this.pin(name)) {
        throw new SandboxError(`The instance made no "${join(this.mounted, name)}"`);
      }
    }
  }

  /**
   * Polls the state socket until `GET /healthz` answers 200 (and, with
   * `site`, until the site answers through its socket), pinning each
   * before it is dialled.
   *
   * @param options the timeout and a liveness probe
   * @throws {SandboxTimeoutError} when it does not answer in time
   * @throws {SocketTamperedError} when a socket was tampered with
   */
  async waitUntilReady(options: ReadyOptions): Promise<void> {
    const deadline = performance.now() + options.timeoutMs;
    let nextProbe = performance.now() + 1_000;
    let last: unknown;
    // Each attempt gets a short timeout that grows when the machine is slow
    // to answer, so one stuck connection does not hold up readiness.
    let attemptMs = 250;
    // The site's answer comes from its web server, slower than the state server's on a loaded
    // machine: its own timeout, grown the same way.
    let siteAttemptMs = 2_000;
    let waiting = join(this.mounted, "state.sock");
    while (performance.now() < deadline) {
      waiting = join(this.mounted, "state.sock");
      try {
        if (await this.pin("state.sock")) {
          const response = await this.state.fetch("/healthz", {
            signal: AbortSignal.timeout(attemptMs),
          });
          await response.body?.cancel();
          if (response.ok) {
            if (!options.site) return;
            waiting = join(this.mounted, "site.sock");
            if (await this.pin("site.sock")) {
              const status = await this.#probeSite(siteAttemptMs);
              if (status === "timeout") siteAttemptMs = Math.min(siteAttemptMs * 2, 30_000);
              else if (status !== 502) return;
              else last = new Error(`The site answered 502 to GET ${SITE_PROBE_PATH}`);
            }
          }
        }
      } catch (error) {
        // Ours (a tampered socket, a link the host may not make): no retry mends it.
        if (error instanceof SandboxError) throw error;
        last = error;
        if (error instanceof DOMException && error.name === "TimeoutError") {
          attemptMs = Math.min(attemptMs * 2, 2_000);
        }
      }
      if (options.probe && performance.now() > nextProbe) {
        await options.probe();
        nextProbe = performance.now() + 1_000;
      }
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    throw new SandboxTimeoutError(
      `The site behind "${waiting}" did not answer within ${options.timeoutMs} ms`,
      { cause: last },
    );
  }

  /**
   * Asks the site for {@linkcode SITE_PROBE_PATH} through the pinned
   * `site.sock`, on a connection of its own (a restarted instance listens on
   * a new socket).
   *
   * @returns the status, or "timeout" when no answer came in `timeoutMs`
   */
  async #probeSite(timeoutMs: number): Promise<number | "timeout"> {
    using client = Deno.createHttpClient({
      proxy: { transport: "unix", path: this.siteSocket },
      poolMaxIdlePerHost: 0,
    });
    try {
      const response = await fetch(`http://localhost${SITE_PROBE_PATH}`, {
        client,
        redirect: "manual",
        signal: AbortSignal.timeout(timeoutMs),
      });
      await response.body?.cancel();
      return response.status;
    } catch (error) {
      if (error instanceof DOMException && error.name === "TimeoutError") return "timeout";
      throw error;
    }
  }

  /** Removes the host's folder and what is in it (the container's folder too, when inside). */
  async remove(): Promise<void> {
    await Deno.remove(this.path, { recursive: true }).catch(ignoreNotFound);
  }

  /** Closes the state client. */
  [Symbol.dispose](): void {
    this.#http.close();
  }
}

/**
 * Hard-links `folder/name` to `pin` and checks the link: a socket owned by
 * `owner.uid`, in a folder that is a real directory of the owner's and was
 * the same directory before and after the link, and still the inode at
 * `folder/name` after it. A hard link of a symlink is
 * the symlink itself (Linux's `linkat` without `AT_SYMLINK_FOLLOW`), so the
 * check sees what the container put there, and the pin, in a folder the
 * container cannot reach, cannot change after it.
 *
 * @param folder the container's folder
 * @param name the socket's name in it
 * @param pin where the host dials it
 * @param owner the container's root as the host sees it
 * @returns false when there is no such socket (yet), or it changed while it was linked
 * @throws {SocketTamperedError} when what is there is not the container's socket
 */
export function pinSocket(
  folder: string,
  name: string,
  pin: string,
  owner: Owner,
): Promise<boolean> {
  // Synchronous steps: a few stats and links on the host's own folders,
  // microseconds each, where a dozen handed to Deno's blocking pool cost a
  // new env (a fork's) about 3 ms on a busy machine.
  try {
    return Promise.resolve(pinSocketNow(folder, name, pin, owner));
  } catch (error) {
    return Promise.reject(error);
  }
}

function pinSocketNow(folder: string, name: string, pin: string, owner: Owner): boolean {
  const source = join(folder, name);
  const before = folderIdentity(folder, owner);
  if (before === undefined) return false;
  const temporary = `${pin}.${crypto.randomUUID()}.pin`;
  try {
    Deno.linkSync(source, temporary);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return false;
    throw linkFailure(source, owner, error);
  }
  try {
    const after = folderIdentity(folder, owner);
    if (after !== before) {
      throw new SocketTamperedError(`The container's folder "${folder}" was replaced`);
    }
    const info = Deno.lstatSync(temporary);
    const what = describe(info);
    if (what !== "socket") {
      throw new SocketTamperedError(`"${source}" is a ${what}, not a socket: refused`);
    }
    if (info.uid !== owner.uid) {
      throw new SocketTamperedError(
        `"${source}" belongs to uid ${info.uid}, not to the container's root (uid ${owner.uid}): refused`,
      );
    }
    // What the link reached must be what the folder holds now: a folder
    // swapped for a symlink during the link and back after it would have
    // linked a socket the container cannot see, let alone put in its folder.
    // Changed since (a server that bound again, or such a swap): not pinned;
    // the next attempt checks what is there then.
    const there = lstatOrUndefined(source);
    if (there?.dev !== info.dev || there?.ino !== info.ino) return false;
    Deno.renameSync(temporary, pin);
    return true;
  } finally {
    try {
      Deno.removeSync(temporary);
    } catch (error) {
      ignoreNotFound(error);
    }
  }
}

/** The folder's `dev:ino`, checked to be a directory of the owner's; undefined when absent. */
function folderIdentity(folder: string, owner: Owner): string | undefined {
  let info: Deno.FileInfo;
  try {
    info = Deno.lstatSync(folder);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return undefined;
    throw error;
  }
  if (!info.isDirectory || info.uid !== owner.uid) {
    throw new SocketTamperedError(
      `The container's folder "${folder}" is a ${
        describe(info)
      } of uid ${info.uid}, not a folder of the container's root (uid ${owner.uid}): refused`,
    );
  }
  return `${info.dev}:${info.ino}`;
}

/** An entry's own status (a symlink's, not its target's), or undefined when it is gone. */
function lstatOrUndefined(path: string): Deno.FileInfo | undefined {
  try {
    return Deno.lstatSync(path);
  } catch {
    return undefined;
  }
}

/** Why a link failed: what is there was tampered with, or the host may not link it. */
function linkFailure(source: string, owner: Owner, error: unknown): Error {
  const info = lstatOrUndefined(source);
  if (info && info.isSocket && info.uid === owner.uid) {
    return new SandboxError(
      `Cannot pin "${source}" (the host must run as root to link the container's sockets): ${
        String(error)
      }`,
      { cause: error },
    );
  }
  return new SocketTamperedError(
    `"${source}" is not the container's socket (${info ? describe(info) : "gone"}): refused`,
    { cause: error },
  );
}

function describe(info: Deno.FileInfo): string {
  if (info.isSymlink) return "symlink";
  if (info.isSocket) return "socket";
  if (info.isDirectory) return "folder";
  if (info.isFile) return "file";
  return "special file";
}

function ignoreNotFound(error: unknown): void {
  if (!(error instanceof Deno.errors.NotFound)) throw error;
}
