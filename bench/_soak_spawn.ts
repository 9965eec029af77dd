/**
 * Starts the soak's server process (`_soak_server.ts`) and follows its
 * status lines: the latest one, all of them, every browser pid seen, and
 * when it listened and when it closed. Its stderr goes to a log file.
 *
 * @module
 */
import type { ServerStatus } from "./_soak_server.ts";

/** The running server process, as its status lines tell it. */
export interface ServerProcess {
  child: Deno.ChildProcess;
  /** The latest status line. */
  latest(): ServerStatus | undefined;
  statuses: ServerStatus[];
  browserPids: Set<number>;
  /** The `listening` line; rejects when the process ends first. */
  listening: Promise<ServerStatus>;
  /** Resolves on the `closed` line or when the output ends. */
  closed: Promise<void>;
  /** Resolves when the log is written to its end. */
  logDone: Promise<void>;
}

/**
 * Spawns the server process.
 *
 * @param args its arguments (see `_soak_server.ts`)
 * @param tmpDir its `TMPDIR`
 * @param logPath where its stderr goes
 * @returns the process and its status
 */
export async function spawnServer(
  args: string[],
  tmpDir: string,
  logPath: string,
): Promise<ServerProcess> {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "--allow-all", new URL("./_soak_server.ts", import.meta.url).pathname, ...args],
    env: { TMPDIR: tmpDir },
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const log = await Deno.open(logPath, { write: true, create: true });
  const logDone = child.stderr.pipeTo(log.writable).catch(() => {});
  let latest: ServerStatus | undefined;
  const statuses: ServerStatus[] = [];
  const browserPids = new Set<number>();
  const listening = Promise.withResolvers<ServerStatus>();
  const closed = Promise.withResolvers<void>();
  listening.promise.catch(() => {}); // Its caller's, when it waits.
  (async () => {
    let buffer = "";
    for await (const chunk of child.stdout.pipeThrough(new TextDecoderStream())) {
      buffer += chunk;
      let newline;
      while ((newline = buffer.indexOf("\n")) >= 0) {
        const line = buffer.slice(0, newline);
        buffer = buffer.slice(newline + 1);
        let parsed: ServerStatus;
        try {
          parsed = JSON.parse(line);
        } catch {
          continue;
        }
        latest = parsed;
        statuses.push(parsed);
        if (parsed.browserPid) browserPids.add(parsed.browserPid);
        if (parsed.type === "listening") listening.resolve(parsed);
        if (parsed.type === "closed") closed.resolve();
      }
    }
    listening.reject(new Error("The server ended before it listened"));
    closed.resolve();
  })();
  return {
    child,
    latest: () => latest,
    statuses,
    browserPids,
    listening: listening.promise,
    closed: closed.promise,
    logDone,
  };
}
