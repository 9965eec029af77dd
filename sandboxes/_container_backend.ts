/**
 * What the Incus and Docker backends do alike, beyond their daemons' APIs:
 * retry a failed launch once, remove socket folders nothing owns, and
 * destroy many envs a few at a time.
 *
 * @module
 */
import { join } from "node:path";
import { DaemonUnavailableError } from "./errors.ts";

/**
 * Runs a launch; when it fails for any reason but a missing daemon, runs it
 * once more (the failed attempt cleans up after itself).
 */
export async function retryLaunchOnce<T>(launch: () => Promise<T>): Promise<T> {
  try {
    return await launch();
  } catch (error) {
    if (error instanceof DaemonUnavailableError) throw error;
    // deno-lint-ignore no-console
    console.warn(`Launch failed, retrying once: ${String(error)}`);
    return await launch();
  }
}

/**
 * Removes the socket folders under `root` named with `prefix` that no live
 * container owns and that are older than a minute (a younger one may belong
 * to a launch under way).
 *
 * @returns the paths removed
 */
export async function removeOrphanFolders(
  root: string,
  prefix: string,
  live: ReadonlySet<string>,
): Promise<string[]> {
  const removed: string[] = [];
  try {
    for await (const entry of Deno.readDir(root)) {
      if (!entry.name.startsWith(prefix) || live.has(entry.name)) continue;
      const path = join(root, entry.name);
      const { mtime } = await Deno.stat(path);
      if (mtime && Date.now() - mtime.getTime() > 60_000) {
        await Deno.remove(path, { recursive: true });
        removed.push(path);
      }
    }
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
  }
  return removed;
}

/** Destroys envs four at a time: a hundred concurrent stops overload a daemon. */
export async function destroyAll(instances: Iterable<{ destroy(): Promise<void> }>): Promise<void> {
  const queue = [...instances];
  await Promise.all(
    Array.from({ length: 4 }, async () => {
      for (let next = queue.shift(); next; next = queue.shift()) await next.destroy();
    }),
  );
}
