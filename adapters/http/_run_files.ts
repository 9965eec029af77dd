/**
 * Files of a run directory, as a request names them: a name is a session id
 * or a screenshot's file name, never a path. A name that could leave the
 * directory (`..`, a separator, an absolute path, a NUL) is refused, and a
 * file whose real path is outside the directory (a symlink out) is not
 * served, so the dashboard reads nothing but the run's own files.
 *
 * @module
 */
import { join, sep } from "node:path";
import { HttpError } from "./http_error.ts";
import type { TrajectoryEvent } from "./trajectory.ts";

/** A session id or file name a run directory may hold: no separators, no dot first. */
const NAME = /^[A-Za-z0-9_-][A-Za-z0-9_.-]{0,199}$/;

/**
 * Checks a name a request gave for a file of the run directory.
 *
 * @param name the name, decoded
 * @param what what it names, for the message
 * @returns the name
 * @throws {HttpError} 400 for anything but a plain name
 */
export function plainName(name: string, what: string): string {
  if (!NAME.test(name) || name.includes("..")) {
    throw new HttpError(
      400,
      "bad-name",
      `Invalid ${what} "${name.slice(0, 100)}": expected a plain name (letters, digits, "_", ` +
        `"-", "."), not a path`,
    );
  }
  return name;
}

/**
 * The real path of a file inside a directory, if it is there.
 *
 * @param directory the run directory
 * @param relative the file, relative to it (names checked by {@linkcode plainName})
 * @returns its real path; `undefined` when it does not exist or resolves outside
 */
export async function insideRun(directory: string, relative: string): Promise<string | undefined> {
  try {
    const root = await Deno.realPath(directory);
    const real = await Deno.realPath(join(directory, relative));
    return real.startsWith(root + sep) ? real : undefined;
  } catch (error) {
    if (error instanceof Deno.errors.NotFound || error instanceof Deno.errors.NotADirectory) {
      return undefined;
    }
    throw error;
  }
}

/**
 * Reads one session's trajectory from a run directory.
 *
 * @param directory the run directory
 * @param session the session id
 * @returns its events, oldest first (none when the file does not exist,
 *   or resolves outside the run directory)
 * @throws {HttpError} 400 when the id is not a plain name (a path)
 */
export async function readTrajectory(
  directory: string,
  session: string,
): Promise<TrajectoryEvent[]> {
  plainName(session, "session id");
  const file = await insideRun(directory, `${session}.jsonl`);
  if (file === undefined) return [];
  try {
    const text = await Deno.readTextFile(file);
    return text.split("\n").filter((line) => line !== "").map((line) => JSON.parse(line));
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return [];
    throw error;
  }
}
