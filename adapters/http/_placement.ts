/**
 * Where a session's instance goes on an Incus cluster. A session's `target`
 * names the member it asks for; when that member is lost (its status is no
 * longer `Online`), the instance goes to the first online member instead, so
 * that a reset after the loss recovers the session on a member that serves.
 * Off a cluster, or for a member the cluster does not list, the target is
 * passed on as asked and Incus answers for it.
 *
 * @module
 */
import { logFailure } from "../../engine/log.ts";
import { SandboxError } from "../../sandboxes/mod.ts";
import type { IncusClient } from "../../sandboxes/incus/mod.ts";

/**
 * The member to place on: `target` while it is online, else the first online
 * member by name.
 *
 * @param client a client of any member of the cluster
 * @param target the member the session asked for
 * @returns the member to place on
 */
export async function onlineMember(client: IncusClient, target: string): Promise<string> {
  let members;
  try {
    members = await client.clusterMembers();
  } catch (error) {
    // Not a cluster (or not reachable): Incus answers the target itself.
    if (error instanceof SandboxError) return target;
    throw error;
  }
  const asked = members.find((member) => member.name === target);
  if (!asked || asked.status === "Online") return target;
  const other = members.filter((member) => member.status === "Online")
    .map((member) => member.name).sort()[0];
  if (other === undefined) return target;
  logFailure(
    `placing an instance on member "${target}"`,
    new Error(`Member "${target}" is ${asked.status}: placed on "${other}" instead`),
    "sandbox",
  );
  return other;
}
