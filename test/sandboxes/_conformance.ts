/**
 * The contract every sandbox backend passes, run once per backend by its own
 * test file (the idea of hono's `common.case.test.ts`): create, serve through
 * the gateway, write state, reset restores it, destroy leaves nothing behind.
 *
 * @module
 */
import {
  assert,
  assertEquals,
  assertNotEquals,
  assertRejects,
  assertStringIncludes,
} from "@std/assert";
import { Gateway } from "../../sandboxes/gateway.ts";
import { InstanceGoneError } from "../../sandboxes/errors.ts";
import type { Instance, Sandbox } from "../../sandboxes/types.ts";

/** How the suite drives one backend. */
export interface BackendHarness<S extends Sandbox> {
  /** The class name, used in test names, such as `"IncusSandbox"`. */
  name: string;
  /** Opens a sandbox of the demo site behind the gateway. */
  open(gateway: Gateway): Promise<S>;
  /** What the sandbox left on the host or daemon: empty when clean. */
  leftovers(sandbox: S): Promise<string[]>;
  /** Removes what `open` made for the test, after the sandbox is closed. */
  cleanup?(sandbox: S): Promise<void>;
  /** Test options, such as sanitizers a daemon client cannot satisfy. */
  options?: Partial<Deno.TestDefinition>;
  /**
   * Kills the instance's init process from outside, as the OOM killer
   * would, and returns once the daemon has seen it exit; a backend whose
   * instances have no process of their own (the fixture's) leaves it out.
   */
  killInit?(sandbox: S, instance: Awaited<ReturnType<S["create"]>>): Promise<void>;
}

/**
 * Whether a path exists.
 *
 * @param path the path
 * @returns false when `stat` fails
 */
export async function exists(path: string): Promise<boolean> {
  return await Deno.stat(path).then(() => true, () => false);
}

/**
 * The socket folders a container backend left of `names`, for `leftovers`.
 *
 * @param root the folder that holds one socket folder per instance
 * @param names the instances' names
 * @returns `folder NAME` for each folder still there
 */
export async function socketFolders(root: string, names: Iterable<string>): Promise<string[]> {
  const found: string[] = [];
  for (const name of names) if (await exists(`${root}/${name}`)) found.push(`folder ${name}`);
  return found;
}

/** A note of the demo site. */
export interface Note {
  /** Its id. */
  id: number;
  /** Its text. */
  text: string;
}

/** The instance's notes, read through its state client. */
export async function notes(instance: Instance): Promise<Note[]> {
  assert(instance.state, "the instance has no state client");
  const response = await instance.state.fetch("/notes");
  assertEquals(response.status, 200);
  return await response.json() as Note[];
}

async function views(instance: Instance): Promise<number> {
  assert(instance.state, "the instance has no state client");
  const response = await instance.state.fetch("/views");
  const body = await response.json() as { views: number };
  return body.views;
}

/** Adds a note through the site's own form, as an agent would. */
export async function addNote(
  gateway: Gateway,
  instance: Instance,
  text: string,
): Promise<void> {
  const response = await gateway.request(instance.origin, "/notes", {
    method: "POST",
    body: new URLSearchParams({ text }),
  });
  await response.body?.cancel();
  assertEquals(response.status, 303);
}

/**
 * Registers the conformance tests for one backend.
 *
 * @param harness how to open the backend and look for leftovers
 */
export function conformance<S extends Sandbox>(
  harness: BackendHarness<S>,
): void {
  const { name } = harness;
  function test(title: string, fn: (s: S, g: Gateway) => Promise<void>): void {
    Deno.test({
      ...harness.options,
      name: `${name}.${title}`,
      fn: async () => {
        await using gateway = new Gateway();
        const sandbox = await harness.open(gateway);
        try {
          await using _sandbox = sandbox;
          await fn(sandbox, gateway);
        } finally {
          await harness.cleanup?.(sandbox);
        }
      },
    });
  }

  test(
    "create() serves the site through the gateway when the instance is new",
    async (sandbox, gateway) => {
      await using instance = await sandbox.create({ seed: 1 });
      assert(
        /^http:\/\/env-[a-z0-9]+\.localhost:\d+$/.test(instance.origin),
        instance.origin,
      );
      const page = await gateway.request(instance.origin, "/");
      assertEquals(page.status, 200);
      assertStringIncludes(await page.text(), "<h1>Notes</h1>");
      const api = await gateway.request(instance.origin, "/api/notes");
      assertEquals(api.status, 200);
      assertEquals((await api.json() as Note[]).length, 3);
    },
  );

  test(
    "create() gives each instance its own origin and state when two run",
    async (sandbox, gateway) => {
      await using a = await sandbox.create({ seed: 1 });
      await using b = await sandbox.create({ seed: 1 });
      assertNotEquals(a.origin, b.origin);
      await addNote(gateway, a, "only in a");
      assertEquals((await notes(a)).length, 4);
      assertEquals((await notes(b)).length, 3);
      assertEquals(await notes(b), (await notes(a)).slice(0, 3));
    },
  );

  test(
    "create() seeds different data when the seed differs",
    async (sandbox) => {
      await using a = await sandbox.create({ seed: 1 });
      await using b = await sandbox.create({ seed: 2 });
      assertNotEquals(await notes(a), await notes(b));
    },
  );

  test(
    "reset() restores the seeded state when the site wrote to it",
    async (sandbox, gateway) => {
      await using instance = await sandbox.create({ seed: 1 });
      const seeded = await notes(instance);
      await addNote(gateway, instance, "written by the agent");
      await (await gateway.request(instance.origin, "/")).text();
      assertEquals((await notes(instance)).length, 4);
      assertEquals(await views(instance), 1);
      await instance.reset();
      assertEquals(await notes(instance), seeded);
      assertEquals(await views(instance), 0);
      const page = await gateway.request(instance.origin, "/");
      assertStringIncludes(await page.text(), "Viewed 1 times");
    },
  );

  test(
    "destroy() leaves nothing behind when instances are removed",
    async (sandbox, gateway) => {
      const a = await sandbox.create({ seed: 1 });
      const b = await sandbox.create({ seed: 1 });
      await a.reset();
      assertNotEquals(await harness.leftovers(sandbox), []);
      await a.destroy();
      await b.destroy();
      await a.destroy();
      assertEquals(await harness.leftovers(sandbox), []);
      const gone = await gateway.request(a.origin, "/");
      assertEquals(gone.status, 404);
      await gone.body?.cancel();
      assertEquals(gateway.size, 0);
    },
  );

  test(
    "check() throws InstanceGoneError when the instance was destroyed",
    async (sandbox) => {
      const instance = await sandbox.create();
      await instance.check();
      await instance.destroy();
      await assertRejects(() => instance.check(), InstanceGoneError);
      await assertRejects(() => instance.reset(), InstanceGoneError);
    },
  );

  const killInit = harness.killInit;
  if (killInit) {
    test(
      "create() reports the killed instance when its init is killed from outside",
      async (sandbox, gateway) => {
        await using instance = await sandbox.create() as Awaited<ReturnType<S["create"]>>;
        await killInit(sandbox, instance);
        await assertRejects(() => instance.check(), InstanceGoneError);
        await assertRejects(() => instance.reset(), InstanceGoneError);
        const response = await gateway.request(instance.origin, "/");
        assertEquals(response.status, 502);
        await response.body?.cancel();
      },
    );
  }

  test(
    "fork() copies the live state, and neither side sees the other's writes afterwards",
    async (sandbox, gateway) => {
      const parent = await sandbox.create({ seed: 1 });
      assert(parent.fork, `${name} instances cannot fork`);
      const seeded = await notes(parent);
      await addNote(gateway, parent, "before the fork");
      const atFork = await notes(parent);
      const copy = await parent.fork();
      assertNotEquals(copy.origin, parent.origin);
      assertEquals(await notes(copy), atFork);
      await addNote(gateway, copy, "in the fork");
      await addNote(gateway, parent, "in the parent");
      assertEquals((await notes(parent)).map((n) => n.text).slice(-2), [
        "before the fork",
        "in the parent",
      ]);
      assertEquals((await notes(copy)).map((n) => n.text).slice(-2), [
        "before the fork",
        "in the fork",
      ]);
      const page = await gateway.request(copy.origin, "/");
      assertStringIncludes(await page.text(), "in the fork");
      // A fork of a fork carries the fork's writes, not the parent's.
      const second = await copy.fork!();
      assertEquals(await notes(second), await notes(copy));
      assertNotEquals(await harness.leftovers(sandbox), []);
      // A fork's reset is the seeded site; the parent keeps its writes.
      await copy.reset();
      assertEquals(await notes(copy), seeded);
      assertEquals((await notes(parent)).length, atFork.length + 1);
      await Promise.all([copy.destroy(), second.destroy()]);
      await parent.check();
      await parent.destroy();
      assertEquals(await harness.leftovers(sandbox), []);
    },
  );
}
