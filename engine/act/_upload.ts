/**
 * The `upload` action: sets a file input's files, taken only from the
 * upload directory (no absolute paths, no `..` or symlinks that leave it),
 * so an agent cannot send the host's files.
 *
 * @module
 */
import { realpath, stat } from "node:fs/promises";
import { isAbsolute, resolve as resolvePath, sep } from "node:path";
import { bestEffort } from "../log.ts";
import { ActionError } from "./errors.ts";
import { type ElementCalls, stale } from "./_calls.ts";

/** What `upload` acts with. */
export interface UploadTools {
  /** Finds the file input. */
  calls: ElementCalls;
  /** The timeout of the browser command that sets the files. */
  timeoutMs: number;
  /** The only directory files are taken from; without it every upload is refused. */
  uploadDir: string | undefined;
  /** Paths of the same files that the browser can read (a browser of another user gets copies). */
  shareFiles?: (paths: string[]) => Promise<string[]>;
}

/**
 * Sets the files of the file input behind element `id`.
 *
 * @param tools what to act with
 * @param id the element the agent gave: the input, or a label of it
 * @param files paths relative to the upload directory
 * @throws {ActionError} `stale-id`, `not-editable` or `not-allowed`
 * @throws {ActionError} `invalid-action` when a path is not a readable file
 */
export async function uploadFiles(
  tools: UploadTools,
  id: number,
  files: string[],
): Promise<void> {
  const { calls } = tools;
  const ref = await calls.element(id);
  // File inputs are often hidden behind a styled label: no visibility check.
  const facts = await calls.call(ref, "FACTS");
  if (facts.state === "stale") {
    throw stale(id);
  }
  const input = await calls.callForElement(ref, "FILE_INPUT");
  if (!input) {
    throw new ActionError("not-editable", `Element ${id} is not a file input`, { id });
  }
  const real = await uploadPaths(tools.uploadDir, files);
  const paths = tools.shareFiles ? await tools.shareFiles(real) : real;
  try {
    await input.session.send(
      "DOM.setFileInputFiles",
      { files: paths, objectId: input.objectId },
      {
        timeoutMs: tools.timeoutMs,
      },
    );
  } finally {
    bestEffort(
      "releasing a handle",
      input.session.send("Runtime.releaseObject", { objectId: input.objectId }),
    );
  }
}

/**
 * The real paths of `files` inside the upload directory. Each is resolved
 * against the directory, symlinks followed, and must still lie inside it.
 */
async function uploadPaths(uploadDir: string | undefined, files: string[]): Promise<string[]> {
  if (uploadDir === undefined) {
    throw new ActionError("not-allowed", "Cannot upload: the env has no upload directory");
  }
  const root = await realpath(uploadDir);
  const inside = (path: string) => path.startsWith(root.endsWith(sep) ? root : root + sep);
  const paths: string[] = [];
  for (const file of files) {
    const candidate = resolvePath(root, file);
    if (isAbsolute(file) || !inside(candidate)) {
      throw new ActionError(
        "not-allowed",
        `Cannot upload "${file}": it is outside the upload directory`,
      );
    }
    let real: string;
    try {
      real = await realpath(candidate);
      if (!(await stat(real)).isFile()) throw new Error("not a file");
    } catch {
      throw new ActionError(
        "invalid-action",
        `Invalid "upload" action: "${file}" is not a readable file`,
      );
    }
    if (!inside(real)) {
      throw new ActionError(
        "not-allowed",
        `Cannot upload "${file}": it links outside the upload directory`,
      );
    }
    paths.push(real);
  }
  return paths;
}
