/**
 * What the shared-runtime tests (`*_shared_test.ts`) share: opening an
 * application's image in the shared-runtime mode, two marked envs of one
 * seed, a form posted through an env's origin, and counting the rows a
 * write added to an env's own database.
 *
 * @module
 */
import { assertEquals } from "@std/assert";
import type { Gateway } from "../../sandboxes/gateway.ts";
import {
  type SharedRuntimeInstance,
  SharedRuntimeSandbox,
} from "../../sandboxes/incus/shared_runtime_sandbox.ts";
import type { StateDiff, StateHash } from "../../fixtures/sites/kit/types.ts";
import { stateReader } from "./_apps.ts";

const POOL = Deno.env.get("WEBSERV_INCUS_POOL") ?? "webserv-btrfs";
/**
 * Instances' prefix (`WEBSERV_SHARED_PREFIX`, or `wsshared-`): another of its
 * own keeps a run apart from others' bases and runtimes.
 */
export const SHARED_PREFIX = Deno.env.get("WEBSERV_SHARED_PREFIX") ?? "wsshared-";

/**
 * Opens an image in the shared-runtime mode (instances {@linkcode SHARED_PREFIX}`…`).
 *
 * @param gateway the gateway
 * @param image the image alias
 * @param timeouts how long a runtime may take to start, and an env to be made
 * @returns the sandbox
 */
export async function openShared(
  gateway: Gateway,
  image: string,
  timeouts: { readyTimeoutMs: number; envTimeoutMs?: number },
): Promise<SharedRuntimeSandbox> {
  return await SharedRuntimeSandbox.open({
    gateway,
    image,
    pool: POOL,
    prefix: SHARED_PREFIX,
    ...timeouts,
  });
}

/** Two envs of one seed, both at the seeded hash and marked. */
export interface MarkedPair {
  a: SharedRuntimeInstance;
  b: SharedRuntimeInstance;
  stateA: ReturnType<typeof stateReader>;
  stateB: ReturnType<typeof stateReader>;
  /** The seeded hash, the same in both. */
  seeded: StateHash;
}

/**
 * Creates two envs of a seed, checks they start at one hash, and marks both
 * (so `/diff` shows what each took since).
 *
 * @param sandbox the sandbox
 * @param seed the seed
 * @returns the envs, their state readers and the seeded hash
 */
export async function markedPair(
  sandbox: SharedRuntimeSandbox,
  seed: number,
): Promise<MarkedPair> {
  const a = await sandbox.create({ seed });
  const b = await sandbox.create({ seed });
  const stateA = stateReader(a);
  const stateB = stateReader(b);
  const seeded = await stateA<StateHash>("/hash");
  assertEquals((await stateB<StateHash>("/hash")).hash, seeded.hash);
  await stateA("/mark", { method: "POST" });
  await stateB("/mark", { method: "POST" });
  return { a, b, stateA, stateB, seeded };
}

/**
 * Posts a form to an env's origin through the gateway.
 *
 * @param gateway the gateway
 * @param env the env
 * @param path the path
 * @param fields the form's fields
 * @param headers more request headers (such as a forged `x-webserv-env`)
 * @returns the status and the body's text
 */
export async function postForm(
  gateway: Gateway,
  env: SharedRuntimeInstance,
  path: string,
  fields: Record<string, string>,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: string }> {
  const response = await gateway.request(env.origin, path, {
    method: "POST",
    headers,
    body: new URLSearchParams(fields),
  });
  return { status: response.status, body: await response.text() };
}

/**
 * How many rows of a table the env's database added since its mark with
 * `column` equal to `value`.
 *
 * @param env the env
 * @param table the table
 * @param column the column
 * @param value the value
 * @returns the count
 */
export async function addedRowsWith(
  env: SharedRuntimeInstance,
  table: string,
  column: string,
  value: string,
): Promise<number> {
  const diff = await stateReader(env)<StateDiff>("/diff");
  return (diff.tables[table]?.added ?? []).filter((row) => row[column] === value).length;
}

/**
 * A cold creation is at the seeded hash, and a destroyed env is gone from the gateway (404)
 * while the other envs of the runtime still pass their checks.
 *
 * @param sandbox the shared-runtime sandbox
 * @param gateway its gateway
 * @param seed the seed
 * @param seeded the seed's hash
 * @param others the envs that must outlive the destroyed one
 */
export async function assertColdCreateAndDestroy(
  sandbox: SharedRuntimeSandbox,
  gateway: Gateway,
  seed: number,
  seeded: StateHash,
  ...others: SharedRuntimeInstance[]
): Promise<void> {
  const c = await sandbox.create({ seed }, { cold: true });
  assertEquals(c.source, "cold");
  assertEquals((await stateReader(c)<StateHash>("/hash")).hash, seeded.hash);
  await c.destroy();
  const gone = await gateway.request(c.origin, "/");
  await gone.body?.cancel();
  assertEquals(gone.status, 404);
  for (const other of others) await other.check();
}

/**
 * Runs a command inside an env's runtime container.
 *
 * @param instance the env
 * @param args the command and its arguments
 * @returns its output, trimmed
 * @throws {Error} with its error output when it fails
 */
export async function execIn(instance: SharedRuntimeInstance, ...args: string[]): Promise<string> {
  const output = await new Deno.Command("incus", {
    args: ["exec", instance.runtimeName, "--", ...args],
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (!output.success) {
    throw new Error(`${args.join(" ")}: ${new TextDecoder().decode(output.stderr)}`);
  }
  return new TextDecoder().decode(output.stdout).trim();
}
