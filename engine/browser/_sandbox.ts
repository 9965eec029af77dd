/**
 * How a launch runs Chromium: with its own sandbox, and never as root. From
 * root, Chromium runs as an unprivileged user (`nobody`, or
 * `WEBSERV_BROWSER_USER`) through util-linux's `setpriv`, in a profile that
 * user owns; its sandbox then works wherever that user may create user
 * namespaces. Where it cannot run so, the reason is given and logged, and it
 * runs with `--no-sandbox` as before.
 *
 * @module
 */
import {
  currentUid,
  envVar,
  isExecutableSync,
  ownerAndMode,
  platform,
  readTextSync,
  realPathSync,
} from "../_runtime.ts";

/** Which mode a browser process was launched in. */
export interface BrowserSandbox {
  /** Whether Chromium's sandbox is on (no `--no-sandbox`). */
  sandboxed: boolean;
  /** The user Chromium runs as: a name from /etc/passwd, or `"current"` (this process's). */
  user: string;
  /** Why the sandbox is off, when it is. */
  reason?: string;
}

/** A user account from /etc/passwd. */
export interface Account {
  /** The login name. */
  name: string;
  /** The user id. */
  uid: number;
  /** The primary group id. */
  gid: number;
}

/** What a launch does: its sandbox, and the account to switch to, if any. */
export interface SandboxPlan extends BrowserSandbox {
  /** Run as this account through `setpriv` (this process is root). */
  runAs?: Account & { setpriv: string };
}

const SETPRIV = ["/usr/bin/setpriv", "/bin/setpriv", "/usr/sbin/setpriv", "/sbin/setpriv"];

/**
 * What Chromium says when its sandbox cannot start ("No usable sandbox!",
 * a namespace it may not make, a file the user may not open).
 */
export const SANDBOX_FAILURE = /sandbox|namespace|Permission denied|Operation not permitted/i;

/**
 * Why the sandbox did not start on this machine, by executable, once a launch
 * found out: later launches of it by this process go straight to `--no-sandbox`.
 */
const unavailable = new Map<string, string>();

/**
 * Remembers that the sandbox does not start here.
 *
 * @param executable the browser executable
 * @param reason what Chromium said
 */
export function sandboxUnavailable(executable: string, reason: string): void {
  unavailable.set(executable, reason);
}

/**
 * Decides how to launch `executable`.
 *
 * @param sandbox false to turn the sandbox off
 * @param user the account to run as when this process is root
 * @param executable the browser executable
 * @returns the plan
 */
export function planSandbox(
  sandbox: boolean | undefined,
  user: string | undefined,
  executable: string,
): SandboxPlan {
  const off = (reason: string): SandboxPlan => ({ sandboxed: false, user: "current", reason });
  if (sandbox === false) return off("the sandbox was turned off (sandbox: false)");
  const known = unavailable.get(executable);
  if (known !== undefined) return off(known);
  if (currentUid() !== 0) return { sandboxed: true, user: "current" };
  // Root: Chromium's sandbox refuses to run as root; run it as another user.
  if (platform !== "linux") return off(`running as root on ${platform}`);
  const name = user ?? envVar("WEBSERV_BROWSER_USER") ?? "nobody";
  const account = lookupAccount(name);
  if (!account) return off(`running as root, and there is no user "${name}" to run Chromium as`);
  if (account.uid === 0) return off(`running as root, and user "${name}" is root too`);
  const setpriv = SETPRIV.find((path) => isExecutableSync(path));
  if (!setpriv) return off("running as root, and setpriv (util-linux) is not installed");
  const blocked = unreachable(executable, account.uid);
  if (blocked) {
    return off(`running as root, and user "${name}" cannot run "${executable}": ${blocked}`);
  }
  return { sandboxed: true, user: account.name, runAs: { ...account, setpriv } };
}

/**
 * Finds a user in /etc/passwd by name or numeric id.
 *
 * @param nameOrId a login name or a uid
 * @returns the account, or undefined
 */
export function lookupAccount(nameOrId: string): Account | undefined {
  const passwd = readTextSync("/etc/passwd") ?? "";
  for (const line of passwd.split("\n")) {
    const [name = "", , uid = "", gid = ""] = line.split(":");
    if (name === "" || !/^\d+$/.test(uid) || !/^\d+$/.test(gid)) continue;
    if (name === nameOrId || uid === nameOrId) return { name, uid: Number(uid), gid: Number(gid) };
  }
  return undefined;
}

/**
 * Why `uid` cannot read and run `path` (checked by owner and "other" bits,
 * along the path as given and as resolved), or undefined when it can.
 */
function unreachable(path: string, uid: number): string | undefined {
  const real = realPathSync(path);
  if (!real) return "it does not exist";
  for (const target of new Set([path, real])) {
    const parts = target.split("/").filter((part) => part !== "");
    for (let i = 0; i < parts.length; i++) {
      const prefix = `/${parts.slice(0, i).join("/")}`;
      const dir = ownerAndMode(prefix);
      if (!dir || (dir.uid !== uid && (dir.mode & 0o001) === 0)) {
        return `"${prefix}" is not searchable by every user`;
      }
    }
  }
  const file = ownerAndMode(real);
  if (!file || (file.uid !== uid && (file.mode & 0o005) !== 0o005)) {
    return `"${real}" is not readable and executable by every user`;
  }
  return undefined;
}
