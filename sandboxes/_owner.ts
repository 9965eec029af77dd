/**
 * Which process owns an instance, so a later run can tell instances left by
 * a crashed run (owner gone) from those of a run still going on.
 *
 * @module
 */

let bootId: string | undefined;

function currentBootId(): string {
  if (bootId === undefined) {
    try {
      bootId = Deno.readTextFileSync("/proc/sys/kernel/random/boot_id").trim();
    } catch {
      bootId = "unknown";
    }
  }
  return bootId;
}

/**
 * The owner tag of this process: host, boot and pid.
 *
 * @returns `host/boot/pid`
 */
export function ownerTag(): string {
  return `${Deno.hostname()}/${currentBootId()}/${Deno.pid}`;
}

/**
 * Whether the process that wrote an owner tag is gone. A tag from another
 * host is never judged gone: that host's runs reap their own.
 *
 * @param tag an owner tag
 * @returns `true` when the owner is known to be gone
 */
export function ownerIsGone(tag: string): boolean {
  const [host, boot, pid] = tag.split("/");
  if (host !== Deno.hostname() || pid === undefined) return false;
  if (boot !== currentBootId()) return true;
  try {
    Deno.statSync(`/proc/${pid}`);
    return false;
  } catch {
    return true;
  }
}
