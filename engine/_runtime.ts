/**
 * What the engine needs from its runtime, in one place: files, environment
 * variables, child processes, process groups, signals and the exit hook.
 *
 * Deno is the first runtime; Node 22 and later work too. Files, the
 * environment and exit go through `node:` modules, which Deno supports as
 * well. Spawning a process in its own group and hooking signals differ enough
 * between the two (Deno's `Deno.Command` against Node's `child_process`) that
 * each runtime gets its own few lines below, chosen once at load.
 *
 * @module
 */
import { spawn } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, statSync } from "node:fs";
import { chmod, chown, copyFile, mkdir, mkdtemp, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { Readable } from "node:stream";

/** The Deno namespace, when this runs under Deno. */
const deno = (globalThis as { Deno?: typeof Deno }).Deno;

/** Whether this runs under Deno. */
export const isDeno: boolean = deno !== undefined;

/** A spawned child: its pid, the write end of its stdin, its stderr and how it ended. */
export interface Child {
  /** The child's pid; with `detached`, also its process group's id. */
  readonly pid: number;
  /** Resolves when the child has exited. */
  readonly status: Promise<{ code: number; signal: string | null }>;
  /** The child's stderr. */
  readonly stderr: ReadableStream<Uint8Array>;
  /** Closes the child's stdin (its only writer is this process). */
  closeStdin(): Promise<void>;
}

/**
 * Spawns `command` in a new process group (and session), stdin piped,
 * stdout discarded, stderr piped.
 *
 * @param command the executable
 * @param args its arguments
 * @param env variables to add to this process's environment
 * @returns the running child
 */
export function spawnDetached(command: string, args: string[], env: Record<string, string>): Child {
  if (deno) {
    const child = new deno.Command(command, {
      args,
      env,
      stdin: "piped",
      stdout: "null",
      stderr: "piped",
      detached: true,
    }).spawn();
    return {
      pid: child.pid,
      status: child.status.then((status) => ({ code: status.code, signal: status.signal })),
      stderr: child.stderr,
      closeStdin: () => child.stdin.close(),
    };
  }
  const child = spawn(command, args, {
    env: { ...process.env, ...env },
    stdio: ["pipe", "ignore", "pipe"],
    detached: true,
  });
  if (child.pid === undefined) throw new Error(`Cannot spawn "${command}"`);
  const status = new Promise<{ code: number; signal: string | null }>((resolve) => {
    child.once("exit", (code, signal) => resolve({ code: code ?? 128, signal }));
  });
  return {
    pid: child.pid,
    status,
    stderr: Readable.toWeb(child.stderr!) as ReadableStream<Uint8Array>,
    closeStdin: () =>
      new Promise<void>((resolve) => {
        if (child.stdin!.destroyed) return resolve();
        child.stdin!.end(() => resolve());
      }),
  };
}

/**
 * Sends SIGKILL to a whole process group.
 *
 * @param pgid the group's id
 * @returns false when no process of the group is left (ESRCH)
 */
export function killGroup(pgid: number): boolean {
  try {
    if (deno) deno.kill(-pgid, "SIGKILL");
    else process.kill(-pgid, "SIGKILL");
    return true;
  } catch {
    return false;
  }
}

/**
 * Runs `listener` on SIGINT and on SIGTERM.
 *
 * @param listener called with the signal's name
 */
export function onTerminationSignals(listener: (signal: "SIGINT" | "SIGTERM") => void): void {
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    try {
      if (deno) deno.addSignalListener(signal, () => listener(signal));
      else process.on(signal, () => listener(signal));
    } catch {
      // Signals are not available on this platform; the exit hook remains.
    }
  }
}

/**
 * Runs `hook` synchronously when the process exits normally.
 *
 * @param hook what to run; it cannot await
 */
export function onExit(hook: () => void): void {
  if (deno) globalThis.addEventListener("unload", hook);
  else process.on("exit", hook);
}

/**
 * Exits the process.
 *
 * @param status the exit status
 */
export function exit(status: number): never {
  process.exit(status);
}

/**
 * Reads an environment variable; undefined when unset or not permitted.
 *
 * @param name the variable
 * @returns its value
 */
export function envVar(name: string): string | undefined {
  try {
    return process.env[name];
  } catch {
    return undefined; // Deno without --allow-env
  }
}

/** The operating system, such as `"linux"`. */
export const platform: string = process.platform;

/**
 * Makes a fresh temporary directory.
 *
 * @param prefix the start of its name
 * @returns its path
 */
export async function makeTempDir(prefix: string): Promise<string> {
  return await mkdtemp(join(tmpdir(), prefix));
}

/**
 * Makes a fresh temporary directory, synchronously.
 *
 * @param prefix the start of its name
 * @returns its path
 */
export function makeTempDirSync(prefix: string): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

/**
 * Removes a directory tree; a missing one is fine.
 *
 * @param path the directory
 */
export async function removeTree(path: string): Promise<void> {
  await rm(path, { recursive: true, force: true });
}

/**
 * Removes a directory tree synchronously; a missing one is fine.
 *
 * @param path the directory
 */
export function removeTreeSync(path: string): void {
  rmSync(path, { recursive: true, force: true });
}

/**
 * Whether a path is a regular file, and whether any execute bit is set.
 *
 * @param path the path
 * @returns undefined when there is nothing there
 */
export async function fileInfo(
  path: string,
): Promise<{ isFile: boolean; executable: boolean } | undefined> {
  try {
    const info = await stat(path);
    return { isFile: info.isFile(), executable: (info.mode & 0o111) !== 0 };
  } catch {
    return undefined;
  }
}

/**
 * Whether a path is an executable regular file, synchronously.
 *
 * @param path the path
 * @returns true when it is
 */
export function isExecutableSync(path: string): boolean {
  try {
    const info = statSync(path);
    return info.isFile() && (info.mode & 0o111) !== 0;
  } catch {
    return false;
  }
}

/**
 * The names of a directory's subdirectories, or of all its entries.
 *
 * @param path the directory
 * @param directoriesOnly keep only subdirectories
 * @returns the names; empty when it cannot be read
 */
export function listDir(path: string, directoriesOnly = false): string[] {
  try {
    return readdirSync(path, { withFileTypes: true })
      .filter((entry) => !directoriesOnly || entry.isDirectory())
      .map((entry) => entry.name);
  } catch {
    return [];
  }
}

/**
 * Reads a small text file synchronously.
 *
 * @param path the file
 * @returns its text, or undefined when it cannot be read
 */
export function readTextSync(path: string): string | undefined {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return undefined;
  }
}

/**
 * The real user id of this process; undefined where there is none (Windows).
 *
 * @returns the uid
 */
export function currentUid(): number | undefined {
  return process.getuid?.();
}

/**
 * Gives a file or directory to another user and group.
 *
 * @param path the path
 * @param uid the new owner
 * @param gid the new group
 */
export async function changeOwner(path: string, uid: number, gid: number): Promise<void> {
  await chown(path, uid, gid);
}

/**
 * Sets the permission bits of a path.
 *
 * @param path the path
 * @param mode the bits, such as `0o711`
 */
export async function setMode(path: string, mode: number): Promise<void> {
  await chmod(path, mode);
}

/**
 * Copies a file, replacing what is at `to`, and makes the directories on the
 * way (mode `0o711`); the copy gets `mode`.
 *
 * @param from the file
 * @param to where the copy goes
 * @param mode the copy's permission bits
 */
export async function copyFileTo(from: string, to: string, mode: number): Promise<void> {
  await mkdir(to.slice(0, to.lastIndexOf("/")), { recursive: true, mode: 0o711 });
  await copyFile(from, to);
  await chmod(to, mode);
}

/**
 * The owner and permission bits of a path (of what a symlink points to).
 *
 * @param path the path
 * @returns undefined when there is nothing there
 */
export function ownerAndMode(path: string): { uid: number; mode: number } | undefined {
  try {
    const info = statSync(path);
    return { uid: info.uid, mode: info.mode };
  } catch {
    return undefined;
  }
}

/**
 * The real path, symlinks resolved; undefined when there is nothing there.
 *
 * @param path the path
 * @returns the resolved path
 */
export function realPathSync(path: string): string | undefined {
  try {
    return realpathSync(path);
  } catch {
    return undefined;
  }
}
