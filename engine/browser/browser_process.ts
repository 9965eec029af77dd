/**
 * A launched Chromium process: spawn it in its own process group with a
 * fresh profile, read its DevTools endpoint, and kill the whole group and
 * remove the profile when done, also when Deno is interrupted.
 *
 * @module
 */
import {
  changeOwner,
  type Child,
  copyFileTo,
  exit,
  fileInfo,
  killGroup as killProcessGroup,
  listDir,
  makeTempDir,
  onExit,
  onTerminationSignals,
  platform,
  readTextSync,
  removeTree,
  removeTreeSync,
  setMode,
  spawnDetached,
} from "../_runtime.ts";
import { findChrome } from "./find_chrome.ts";
import { logFailure, observed } from "../log.ts";
import {
  type BrowserSandbox,
  planSandbox,
  SANDBOX_FAILURE,
  type SandboxPlan,
  sandboxUnavailable,
} from "./_sandbox.ts";

export type { BrowserSandbox } from "./_sandbox.ts";

/** Options for {@linkcode BrowserProcess.launch}. */
export interface BrowserProcessOptions {
  /**
   * The browser executable.
   *
   * @default {the result of `findChrome()`}
   */
  executablePath?: string;
  /**
   * Run headless.
   *
   * @default {true}
   */
  headless?: boolean;
  /** Extra command-line flags, appended after the defaults. */
  args?: string[];
  /**
   * How long to wait for the DevTools endpoint, in milliseconds.
   *
   * @default {30000}
   */
  timeoutMs?: number;
  /**
   * Kill the browser and remove its profile when Deno gets SIGINT or SIGTERM,
   * then exit with the signal's status.
   *
   * @default {true}
   */
  handleSignals?: boolean;
  /**
   * Run Chromium with its sandbox. On, launched from root, Chromium runs as
   * `user` instead; where its sandbox cannot start (no user namespaces, no
   * such user, no `setpriv`) the launch logs why and runs it with
   * `--no-sandbox`. {@linkcode BrowserProcess.sandbox} says which it got.
   *
   * @default {true}
   */
  sandbox?: boolean;
  /**
   * The unprivileged user (name or uid) Chromium runs as when this process
   * is root: best a dedicated one (`useradd --system webserv`).
   *
   * @default {`WEBSERV_BROWSER_USER`, else `"nobody"`}
   */
  user?: string;
}

/** Raised when the browser process cannot be started or exits before it is ready. */
export class BrowserLaunchError extends Error {
  /**
   * Creates the error.
   *
   * @param message what went wrong
   * @param options the cause, if any
   */
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "BrowserLaunchError";
  }
}

/** How the browser process ended. */
export interface BrowserExit {
  /** The exit code. */
  code: number;
  /** The signal that ended it, such as `"SIGKILL"`, if one did. */
  signal: string | null;
}

/** Raised when the browser exits before it is ready; its last words are kept. */
class EarlyExit extends BrowserLaunchError {
  /**
   * @param message what happened
   * @param tail the browser's last lines
   * @param killed whether a signal ended it (directly, or as the launcher's
   * exit code above 128): killed from outside, which says nothing of its sandbox
   */
  constructor(message: string, readonly tail: string, readonly killed: boolean) {
    super(message);
  }
}

/**
 * The flags every launch gets (and `--no-sandbox` where the sandbox is off).
 * `--disable-background-networking` and kin keep Chromium from calling home,
 * which a closed network refuses many times over.
 */
export const DEFAULT_FLAGS: readonly string[] = [
  "--disable-gpu",
  // Out-of-process iframes everywhere (the headless shell has no site isolation by default).
  "--site-per-process",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--disable-quic",
  // No traffic leaves a page except through its context's proxy: WebRTC
  // sends no UDP of its own (STUN/TURN to an address the page chose). The
  // headless shell honours only the first flag, Chromium both.
  "--force-webrtc-ip-handling-policy=disable_non_proxied_udp",
  "--webrtc-ip-handling-policy=disable_non_proxied_udp",
  "--disable-extensions",
  "--disable-default-apps",
  "--disable-breakpad",
  "--disable-crash-reporter",
  "--disable-dev-shm-usage",
  // Many envs share one browser: keep background pages running full speed.
  "--disable-renderer-backgrounding",
  "--disable-background-timer-throttling",
  "--disable-backgrounding-occluded-windows",
  "--disable-features=Translate,OptimizationHints,MediaRouter,DialMediaRouteProvider,InterestFeedContentSuggestions,WebUIOmniboxPopup,WebUIOmniboxAimPopup,WebUIOmniboxFullPopup",
  "--no-first-run",
  "--no-default-browser-check",
  "--mute-audio",
  "--hide-scrollbars",
  "--password-store=basic",
  "--use-mock-keychain",
  "--remote-debugging-address=127.0.0.1",
  "--remote-debugging-port=0",
];

/**
 * Runs the browser ("$@") and waits for it. Beside it, a watchdog reads the
 * shell's stdin (through fd 3: a background job's own stdin is /dev/null),
 * whose write end only Deno holds: at end of file (Deno closed it or
 * died, however) it kills the browser, then every other process of the group
 * but itself and the leader, and waits until none is left alive (zombies are
 * dead; on systems without /proc it cannot look and does not wait), so that no
 * dying renderer or zygote writes into the profile after it is removed; then
 * it removes the profile and kills the whole process group. The group's id is
 * the leader's pid, `$$` in every subshell; the watchdog finds its own pid in
 * /proc/self/stat, read by the shell itself (a builtin forks nothing). The
 * watchdog writes nothing: once Deno is gone its stderr pipe has no reader, and
 * a write there would kill it with SIGPIPE before it cleaned up.
 */
const WATCHDOG = `
exec 3<&0
"$@" </dev/null 3<&- &
browser=$!
(
  cat <&3 >/dev/null
  kill -KILL "$browser" 2>/dev/null
  self=
  read -r self _ </proc/self/stat 2>/dev/null
  tries=0
  while [ -n "$self" ] && [ $tries -lt 500 ]; do
    left=
    for stat in /proc/[0-9]*/stat; do
      read -r line 2>/dev/null <"$stat" || continue
      pid=\${line%% *}
      set -- \${line##*) }
      [ "$3" = "$$" ] || continue
      [ "$1" = Z ] || [ "$pid" = "$self" ] || [ "$pid" = "$$" ] && continue
      kill -KILL "$pid" 2>/dev/null
      left=1
    done
    [ -z "$left" ] && break
    tries=$((tries + 1))
    sleep 0.01
  done
  rm -rf "$WEBSERV_PROFILE"
  [ -z "$WEBSERV_SHARE" ] || rm -rf "$WEBSERV_SHARE"
  kill -KILL 0
) >/dev/null 2>&1 &
exec 3<&-
wait "$browser"
`;

const live = new Set<BrowserProcess>();
let signalsInstalled = false;

function killAll(): void {
  for (const process of [...live]) process.killSync();
}

function installExitHooks(): void {
  if (signalsInstalled) return;
  signalsInstalled = true;
  onTerminationSignals((signal) => {
    killAll();
    exit(signal === "SIGINT" ? 130 : 143);
  });
}

// Installed on first launch, not at load: importing the module has no effect.
let exitHookInstalled = false;

/** The reasons for running without the sandbox already logged by this process. */
const loggedReasons = new Set<string>();

function logUnsandboxed(plan: SandboxPlan, asked: boolean): void {
  if (plan.sandboxed || asked || loggedReasons.has(plan.reason ?? "")) return;
  loggedReasons.add(plan.reason ?? "");
  logFailure(
    "running Chromium with its sandbox",
    new Error(`${plan.reason}; running it with --no-sandbox`),
    "browser-unsandboxed",
  );
}

/**
 * A running browser process and its profile directory.
 *
 * @example Launch and kill
 * ```ts ignore
 * import { BrowserProcess } from "@webserv/webserv/engine";
 * const browser = await BrowserProcess.launch();
 * console.log(browser.wsEndpoint);
 * await browser.kill();
 * ```
 */
export class BrowserProcess {
  /** The browser-level DevTools WebSocket URL. */
  readonly wsEndpoint: string;
  /** The id of the browser's process group: kill `-pid` to kill the browser and all its children. */
  readonly pid: number;
  /** The fresh profile directory, removed by `kill()`. */
  readonly userDataDir: string;
  /** Resolves when the process has exited. */
  readonly exited: Promise<BrowserExit>;
  /** Whether Chromium's sandbox is on, the user it runs as, and why the sandbox is off if it is. */
  readonly sandbox: BrowserSandbox;
  #child: Child;
  #stderrTail: string[];
  /** Where files are shared with a browser of another user; none for a browser of this one. */
  #shareDir: string | undefined;
  /** Files shared with a browser of another user: real path → copy in the share directory. */
  #shared = new Map<string, string>();
  #killed = false;

  private constructor(
    child: Child,
    wsEndpoint: string,
    userDataDir: string,
    stderrTail: string[],
    sandbox: BrowserSandbox,
    shareDir: string | undefined,
  ) {
    this.#child = child;
    this.#shareDir = shareDir;
    this.sandbox = sandbox;
    this.pid = child.pid;
    this.wsEndpoint = wsEndpoint;
    this.userDataDir = userDataDir;
    this.#stderrTail = stderrTail;
    this.exited = child.status.then((status) => {
      live.delete(this);
      return { code: status.code, signal: status.signal };
    });
  }

  /**
   * Paths of the same files that the browser can read. A browser running as
   * another user (launched from root) cannot read root's files: each is
   * copied, readable by every user, into a directory of this process's that
   * others may traverse but not list or change (not the profile, where the
   * browser could put a link in the way), one copy per file (copied again on
   * every call, so it is current), removed with the profile.
   *
   * @param paths real paths of regular files
   * @returns the paths to hand the browser
   */
  async shareFiles(paths: string[]): Promise<string[]> {
    const shareDir = this.#shareDir;
    if (!shareDir) return paths;
    const shared: string[] = [];
    for (const path of paths) {
      let copy = this.#shared.get(path);
      if (!copy) {
        copy = `${shareDir}/${this.#shared.size}/${path.slice(path.lastIndexOf("/") + 1)}`;
        this.#shared.set(path, copy);
      }
      await copyFileTo(path, copy, 0o644);
      shared.push(copy);
    }
    return shared;
  }

  /** The last lines the browser wrote to stderr, for diagnostics. */
  get stderrTail(): string {
    return this.#stderrTail.join("\n");
  }

  /**
   * Launches a browser with a fresh profile and waits for its endpoint.
   *
   * @param options the executable, flags and timeout
   * @returns the running process
   * @throws {BrowserNotFoundError} when no executable is found
   * @throws {BrowserLaunchError} when it exits or stays silent before it is ready
   */
  static async launch(options: BrowserProcessOptions = {}): Promise<BrowserProcess> {
    const executable = options.executablePath ?? findChrome({ headless: options.headless ?? true });
    // The shell would report a missing file only as exit code 127: say it plainly.
    const info = await fileInfo(executable);
    if (!info?.isFile) {
      throw new BrowserLaunchError(`Cannot start "${executable}": no such executable file`);
    }
    const plan = planSandbox(options.sandbox, options.user, executable);
    logUnsandboxed(plan, options.sandbox === false);
    try {
      return await BrowserProcess.#start(executable, plan, options);
    } catch (error) {
      if (
        !(error instanceof EarlyExit) || error.killed || !plan.sandboxed ||
        !SANDBOX_FAILURE.test(error.tail)
      ) {
        throw error;
      }
      // The sandbox (or the user) could not start it: say why, and run it as before.
      const reason = `Chromium's sandbox did not start${
        plan.runAs ? ` as user "${plan.user}"` : ""
      }: ${error.tail.split("\n").slice(-3).join(" | ")}`;
      sandboxUnavailable(executable, reason);
      const fallback: SandboxPlan = { sandboxed: false, user: "current", reason };
      logUnsandboxed(fallback, false);
      return await BrowserProcess.#start(executable, fallback, options);
    }
  }

  static async #start(
    executable: string,
    plan: SandboxPlan,
    options: BrowserProcessOptions,
  ): Promise<BrowserProcess> {
    const timeoutMs = options.timeoutMs ?? 30_000;
    const userDataDir = await makeTempDir("webserv-profile-");
    const runAs = plan.runAs;
    const env: Record<string, string> = { WEBSERV_PROFILE: userDataDir };
    let shareDir: string | undefined;
    if (runAs) {
      try {
        await changeOwner(userDataDir, runAs.uid, runAs.gid);
      } catch (error) {
        await removeDir(userDataDir);
        throw new BrowserLaunchError(
          `Cannot give the profile "${userDataDir}" to user "${runAs.name}": ${String(error)}`,
          { cause: error },
        );
      }
      // Its own home and temporary files, in the profile it owns.
      env.HOME = userDataDir;
      env.TMPDIR = userDataDir;
      // Uploads reach it as copies in a directory of ours it may only
      // traverse: not in the profile, where it could put a link in the way.
      shareDir = await makeTempDir("webserv-share-");
      await setMode(shareDir, 0o711);
      env.WEBSERV_SHARE = shareDir;
    }
    const command = runAs
      ? [
        runAs.setpriv,
        `--reuid=${runAs.uid}`,
        `--regid=${runAs.gid}`,
        "--clear-groups",
        "--",
        executable,
      ]
      : [executable];
    const args = [
      ...(options.headless ?? true ? ["--headless"] : []),
      ...(plan.sandboxed ? [] : ["--no-sandbox"]),
      ...DEFAULT_FLAGS,
      `--user-data-dir=${userDataDir}`,
      ...(options.args ?? []),
      "about:blank",
    ];
    let child: Child;
    try {
      // detached: the group leader is a small shell that runs the browser and
      // a watchdog, so one kill of the group takes the browser's renderers,
      // zygotes and utilities with it, and the watchdog cleans up even when
      // Deno dies without running any hook (SIGKILL).
      child = spawnDetached(
        "/bin/sh",
        ["-c", WATCHDOG, "webserv-browser", ...command, ...args],
        env,
      );
    } catch (error) {
      await removeDir(userDataDir);
      if (shareDir) await removeDir(shareDir);
      throw new BrowserLaunchError(`Cannot start "${executable}": ${String(error)}`, {
        cause: error,
      });
    }
    const tail: string[] = [];
    const endpoint = readEndpoint(child.stderr, tail);
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () =>
          reject(
            new BrowserLaunchError(
              `Browser "${executable}" gave no DevTools endpoint within ${timeoutMs} ms`,
            ),
          ),
        timeoutMs,
      );
    });
    const exitedEarly = child.status.then((status): never => {
      throw new EarlyExit(
        `Browser "${executable}" exited with code ${status.code} before it was ready: ${
          tail.slice(-5).join(" | ")
        }`,
        tail.join("\n"),
        status.signal !== null || status.code > 128,
      );
    });
    try {
      const wsEndpoint = await Promise.race([endpoint, timeout, exitedEarly]);
      const { runAs: _, ...sandbox } = plan;
      const process = new BrowserProcess(
        child,
        wsEndpoint,
        userDataDir,
        tail,
        sandbox,
        shareDir,
      );
      live.add(process);
      if (!exitHookInstalled) {
        exitHookInstalled = true;
        onExit(killAll);
      }
      if (options.handleSignals ?? true) installExitHooks();
      return process;
    } catch (error) {
      killGroup(child.pid);
      await child.closeStdin().catch((cause) =>
        logFailure("closing a failed browser's stdin", cause)
      );
      await child.status.catch((cause) =>
        logFailure("waiting for a failed browser to exit", cause)
      );
      await removeDir(userDataDir);
      if (shareDir) await removeDir(shareDir);
      throw error;
    } finally {
      clearTimeout(timer);
      observed(exitedEarly);
    }
  }

  /**
   * Kills the whole process group and removes the profile directory.
   * Safe to call more than once.
   *
   * @returns how the process ended
   */
  async kill(): Promise<BrowserExit> {
    if (!this.#killed) {
      this.#killed = true;
      killGroup(this.pid);
      // The watchdog's pipe.
      await this.#child.closeStdin().catch((cause) =>
        logFailure("closing the browser's stdin", cause)
      );
    }
    const exit = await this.exited;
    await waitForGroupExit(this.pid);
    await removeDir(this.userDataDir);
    if (this.#shareDir) await removeDir(this.#shareDir);
    return exit;
  }

  /** Synchronous kill for exit hooks, where nothing can be awaited. */
  killSync(): void {
    this.#killed = true;
    killGroup(this.pid);
    live.delete(this);
    // Wait until the group is gone, so no dying child writes into the profile
    // after it is removed; then retry the removal a few times, sleeping
    // briefly (exit hooks cannot await).
    const pause = new Int32Array(new SharedArrayBuffer(4));
    if (this.#shareDir) {
      try {
        removeTreeSync(this.#shareDir); // nothing of the browser's writes there
      } catch (error) {
        logFailure("removing the browser's share directory", error);
      }
    }
    const deadline = Date.now() + 3_000;
    while (Date.now() < deadline && groupAlive(this.pid)) Atomics.wait(pause, 0, 0, 10);
    for (let attempt = 0; attempt < 10; attempt++) {
      try {
        removeTreeSync(this.userDataDir);
        return;
      } catch {
        Atomics.wait(pause, 0, 0, 20);
      }
    }
  }
}

function killGroup(pid: number): void {
  killProcessGroup(pid); // false when already gone
}

/**
 * Waits until no live process of the group is left: children die just after
 * the leader. Zombies do not count; they are dead, and whoever reaps orphans
 * on this machine does so in its own time.
 */
async function waitForGroupExit(pgid: number, timeoutMs = 3_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline && groupAlive(pgid)) {
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

function groupAlive(pgid: number): boolean {
  if (!killProcessGroup(pgid)) return false; // ESRCH: the group is empty
  if (platform !== "linux") return true;
  const entries = listDir("/proc");
  if (entries.length === 0) return true; // cannot look
  for (const name of entries) {
    if (!/^\d+$/.test(name)) continue;
    const stat = readTextSync(`/proc/${name}/stat`);
    if (stat === undefined) continue; // exited while we looked
    // Fields after the parenthesised name: state ppid pgrp …
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    if (fields[2] === String(pgid) && fields[0] !== "Z") return true;
  }
  return false;
}

async function removeDir(dir: string): Promise<void> {
  // Children killed with the group may still flush a file or two.
  for (let attempt = 0; attempt < 5; attempt++) {
    try {
      await removeTree(dir);
      return;
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 20 * (attempt + 1)));
    }
  }
}

async function readEndpoint(
  stderr: ReadableStream<Uint8Array>,
  tail: string[],
): Promise<string> {
  const lines = stderr.pipeThrough(new TextDecoderStream());
  let buffer = "";
  let resolveEndpoint!: (url: string) => void;
  const found = new Promise<string>((resolve) => resolveEndpoint = resolve);
  // Keep draining stderr for the life of the process: a full pipe blocks Chromium.
  (async () => {
    for await (const chunk of lines) {
      buffer += chunk;
      let newline: number;
      while ((newline = buffer.indexOf("\n")) !== -1) {
        const line = buffer.slice(0, newline);
        buffer = buffer.slice(newline + 1);
        tail.push(line);
        if (tail.length > 50) tail.shift();
        const match = line.match(/^DevTools listening on (ws:\/\/.*)$/);
        if (match?.[1]) resolveEndpoint(match[1]);
      }
    }
  })().catch((cause) => logFailure("reading the browser's output", cause));
  return await found;
}
