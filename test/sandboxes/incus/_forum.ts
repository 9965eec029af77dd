/**
 * The Incus suites' forum: the recreated forum's image on the test pool,
 * opened as a sandbox behind a gateway, as the fork and site-check tests use
 * it.
 *
 * @module
 */
import type { Gateway } from "../../../sandboxes/gateway.ts";
import { IncusSandbox } from "../../../sandboxes/incus/incus_sandbox.ts";

/** The storage pool the tests' instances live on (`WEBSERV_INCUS_POOL`, or `webserv-btrfs`). */
export const INCUS_POOL = Deno.env.get("WEBSERV_INCUS_POOL") ?? "webserv-btrfs";

/**
 * Opens the forum's image as an Incus sandbox, its instances named `wsct-…`.
 * The image is built by `.ci/daemons.sh`
 * (`deno task image --no-docker fixtures/sites/forum/mod.ts`).
 *
 * @param gateway the gateway its instances are routed through
 * @returns the sandbox
 */
export async function openForumSandbox(gateway: Gateway): Promise<IncusSandbox> {
  return await IncusSandbox.open({
    gateway,
    image: "webserv-forum",
    pool: INCUS_POOL,
    prefix: "wsct-",
  });
}
