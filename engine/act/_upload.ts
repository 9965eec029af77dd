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
import { type ElementCalls, type Ref, stale } from "./_calls.ts";
import type { Pointer } from "./_pointer.ts";

/** What `upload` acts with. */
export interface UploadTools {
  /** Finds the file input. */
  calls: ElementCalls;
  /** Clicks or drops on a drop zone that has no file input of its own. */
  pointer: Pointer;
  /** Lets the active tab settle for at most `capMs` (a drop handler running). */
  settle(capMs: number): Promise<boolean>;
  /** The timeout of the browser command that sets the files. */
  timeoutMs: number;
  /** The only directory files are taken from; without it every upload is refused. */
  uploadDir: string | undefined;
  /** Paths of the same files that the browser can read (a browser of another user gets copies). */
  shareFiles?: (paths: string[]) => Promise<string[]>;
}

/**
 * Gives files to element `id` wherever a person would pick or drop them:
 * the file input itself, a label of it, or a drop zone. A drop zone's own
 * input (one inside it) gets the files directly; else the zone is clicked
 * as a person does, and the file chooser that click opens (Dropzone's
 * hidden input elsewhere in the page) takes them; a zone that opens no
 * chooser gets them dropped on it (`Input.dispatchDragEvent` with files),
 * and the page must show a change.
 *
 * @param tools what to act with
 * @param id the element the agent gave: the input, a label of it, or a drop zone
 * @param files paths relative to the upload directory
 * @returns how the files were given, when not to a file input directly
 * @throws {ActionError} `stale-id`, `not-allowed`, or `value-not-set` when
 *   a drop zone showed no change after the files were dropped on it
 * @throws {ActionError} `invalid-action` when a path is not a readable file
 */
export async function uploadFiles(
  tools: UploadTools,
  id: number,
  files: string[],
): Promise<string | undefined> {
  const { calls } = tools;
  const ref = await calls.element(id);
  // File inputs are often hidden behind a styled label: no visibility check.
  const facts = await calls.call(ref, "FACTS");
  if (facts.state === "stale") {
    throw stale(id);
  }
  const input = await calls.callForElement(ref, "FILE_INPUT");
  const real = await uploadPaths(tools.uploadDir, files);
  const paths = tools.shareFiles ? await tools.shareFiles(real) : real;
  if (!input) {
    // Only a control that says it takes files is clicked or dropped on: clicking a link,
    // a submit button or any other control to look for a file chooser would act on it.
    if (
      facts.role === "link" || facts.editable || facts.tag === "select" ||
      facts.type === "submit" || !await calls.call(ref, "TAKES_FILES")
    ) {
      throw new ActionError("not-editable", `Element ${id} is not a file input or a drop zone`, {
        id,
      });
    }
    if (await pickThroughChooser(tools, ref, id, paths)) {
      return "picked in the file chooser the click opened";
    }
    return await dropOn(tools, ref, id, paths);
  }
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

/** How long a click may take to open the file chooser. */
const CHOOSER_WAIT_MS = 1_000;

/** How long a drop handler may take before the page is read back. */
const BRIEF_SETTLE_MS = 2_000;

/**
 * Clicks the element with the file chooser intercepted
 * (`Page.setInterceptFileChooserDialog`); when the click opens one, its
 * input takes the files. See
 * https://chromedevtools.github.io/devtools-protocol/tot/Page/#event-fileChooserOpened.
 *
 * @returns whether a chooser opened and took the files
 */
async function pickThroughChooser(
  tools: UploadTools,
  ref: Ref,
  id: number,
  paths: string[],
): Promise<boolean> {
  const { pointer, timeoutMs } = tools;
  const session = ref.session;
  const aim = await pointer.aim(ref, id);
  let opened: number | undefined;
  let wake = () => {};
  const arrived = new Promise<void>((resolve) => (wake = resolve));
  const listener = (event: { backendNodeId?: number }) => {
    opened = event.backendNodeId;
    wake();
  };
  session.on("Page.fileChooserOpened", listener);
  await session.send("Page.setInterceptFileChooserDialog", { enabled: true }, { timeoutMs });
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    await pointer.mouse(aim, "click", "left", []);
    await Promise.race([
      arrived,
      new Promise<void>((resolve) => (timer = setTimeout(resolve, CHOOSER_WAIT_MS))),
    ]);
  } finally {
    clearTimeout(timer);
    session.off("Page.fileChooserOpened", listener);
    bestEffort(
      "ending file chooser interception",
      session.send("Page.setInterceptFileChooserDialog", { enabled: false }),
    );
  }
  if (opened === undefined) return false;
  await session.send("DOM.setFileInputFiles", { files: paths, backendNodeId: opened }, {
    timeoutMs,
  });
  return true;
}

/**
 * Drops the files on the element as a person dragging them from a file
 * manager does: `dragenter`, `dragover` and `drop` with the files, through
 * the browser's input pipeline. Verified by the page: its text, values or
 * the element's place must change.
 */
async function dropOn(tools: UploadTools, ref: Ref, id: number, paths: string[]): Promise<string> {
  const { calls, pointer, timeoutMs } = tools;
  const aim = await pointer.point(ref, id);
  const before = await calls.call(ref, "DRAG_MARK");
  const data = { items: [], files: paths, dragOperationsMask: 1 };
  for (const type of ["dragEnter", "dragOver", "drop"] as const) {
    await aim.page.session.send(
      "Input.dispatchDragEvent",
      { type, x: aim.x, y: aim.y, data },
      { timeoutMs },
    );
  }
  await tools.settle(BRIEF_SETTLE_MS);
  const after = await calls.call(ref, "DRAG_MARK").catch((error) => {
    if (error instanceof ActionError && error.code === "stale-id") return undefined;
    throw error;
  });
  if (after === before) {
    throw new ActionError(
      "value-not-set",
      `Element ${id} is not a file input, opened no file chooser when clicked, and showed no change when the files were dropped on it`,
      { id },
    );
  }
  return "dropped on it";
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
