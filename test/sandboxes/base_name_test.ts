// A shared runtime's seeded base is named apart from a container backend's with the same prefix,
// image, pool and seed: each starts its base its own way, and one taking the other's would serve
// envs from a base its init was not made for.
import { assert, assertEquals, assertNotEquals } from "@std/assert";
import { baseName } from "../../sandboxes/incus/_instances.ts";
import { SHARED_BASE } from "../../sandboxes/incus/shared_runtime_sandbox.ts";

Deno.test("a shared runtime's base and a container backend's base have different names", () => {
  const fingerprint = "e806f15b7bd5".repeat(5);
  const container = baseName("wsapp-", "webserv-mediawiki", "webserv-btrfs", 19, fingerprint);
  const shared = baseName(
    "wsapp-",
    "webserv-mediawiki",
    "webserv-btrfs",
    19,
    fingerprint,
    SHARED_BASE,
  );
  assertEquals(container, "wsapp-base-mediawiki-19-webservbtrfs-e806f15b7bd5");
  assertNotEquals(shared, container);
  // Incus names an instance in at most 63 characters.
  assert(shared.length <= 63, `${shared} is ${shared.length} characters`);
});
