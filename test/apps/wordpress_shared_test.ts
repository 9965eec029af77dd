/**
 * WordPress in the shared-runtime mode (`SharedRuntimeSandbox`): one Apache/PHP
 * for every env, a `mariadbd` per env on a reflinked copy of the seeded
 * datadir. Each env has its own origin and state channel, a write to one is
 * invisible to another (even when the request names the other env in the
 * header the runtime picks databases by), reset restores the seeded hash, and
 * creation from a spare and cold both give the seeded state; a task runs end
 * to end through `Env` on it.
 *
 * Fails, never skips, when the image is missing: build it with
 * `deno task image:apps wordpress`.
 */
import { assert, assertEquals, assertNotEquals } from "@std/assert";
import { Gateway } from "../../sandboxes/gateway.ts";
import type {
  SharedRuntimeInstance,
  SharedRuntimeSandbox,
} from "../../sandboxes/incus/shared_runtime_sandbox.ts";
import type { StateHash } from "../../fixtures/sites/kit/types.ts";
import type { PostSummary } from "../../fixtures/sites/wordpress/state_server.ts";
import { Browser } from "../../engine/browser/browser.ts";
import { Env } from "../../engine/env.ts";
import { bindTask } from "../../fixtures/sites/kit/bind.ts";
import { generateTask } from "../../fixtures/sites/kit/generate.ts";
import site from "../../fixtures/sites/wordpress/mod.ts";
import { stateReader } from "./_apps.ts";
import { waitFor } from "../_util/wait.ts";
import {
  addedRowsWith,
  assertColdCreateAndDestroy,
  execIn,
  markedPair,
  openShared as openSharedApp,
  postForm,
} from "./_shared.ts";

const SEED = 1;

function openShared(gateway: Gateway): Promise<SharedRuntimeSandbox> {
  // Another checkout's build replaces "webserv-wordpress" (its own inputs):
  // a private alias (`deno task image:apps --alias=NAME wordpress`) keeps this one's.
  return openSharedApp(
    gateway,
    Deno.env.get("WEBSERV_WORDPRESS_IMAGE") ?? "webserv-wordpress",
    { readyTimeoutMs: 300_000 },
  );
}

async function comment(
  gateway: Gateway,
  env: SharedRuntimeInstance,
  post: number,
  text: string,
  headers: Record<string, string> = {},
): Promise<void> {
  const { status, body } = await postForm(gateway, env, "/wp-comments-post.php", {
    comment_post_ID: String(post),
    author: "Test Reader",
    email: `reader-${crypto.randomUUID()}@webserv.test`,
    url: "",
    comment: text,
  }, headers);
  assertEquals(status, 302, `the comment was refused: ${body.slice(0, 300)}`);
}

function commentsWith(env: SharedRuntimeInstance, text: string): Promise<number> {
  return addedRowsWith(env, "wp_comments", "comment_content", text);
}

Deno.test("SharedRuntimeSandbox keeps each WordPress env's database private, resets it to the seeded hash, and serves from spares and cold", async () => {
  await using gateway = new Gateway();
  await using sandbox = await openShared(gateway);
  const { a, b, stateA, stateB, seeded } = await markedPair(sandbox, 1);
  assertNotEquals(a.origin, b.origin);
  assertNotEquals(a.key, b.key);
  assertEquals(a.runtimeName, b.runtimeName, "the two envs do not share one runtime");

  // Each origin serves the application with links to itself.
  const page = await gateway.request(b.origin, "/");
  const html = await page.text();
  assertEquals(page.status, 200, html.slice(0, 300));
  assert(html.includes(`${b.origin}/`), "B's page does not link to B's origin");

  // The gateway never routes to the state API.
  const probe = await gateway.request(a.origin, "/hash");
  await probe.body?.cancel();
  assertEquals(probe.headers.get("x-webserv-state"), null);

  const post = (await stateA<{ result: PostSummary[] }>("/query/posts?status=publish&limit=1"))
    .result[0]?.id;
  assert(post !== undefined, "no published post");

  // A write to A lands in A's database and nowhere else, even when the
  // request names B in the header the runtime picks databases by. (WordPress
  // refuses a second comment from one address within 15 s in one database:
  // B then taking its own comment is one more sign A's went elsewhere.)
  const forged = `shared A naming B ${crypto.randomUUID()}`;
  await comment(gateway, a, post, forged, { "x-webserv-env": b.key });
  const plain = `shared B ${crypto.randomUUID()}`;
  await comment(gateway, b, post, plain);
  assertEquals(await commentsWith(a, forged), 1, "the forged header moved A's write elsewhere");
  assertEquals(await commentsWith(b, forged), 0, "A's request reached B's database");
  assertEquals(await commentsWith(b, plain), 1);
  assertEquals(await commentsWith(a, plain), 0, "B's write reached A's database");
  assertNotEquals((await stateA<StateHash>("/hash")).hash, seeded.hash);
  await b.reset();
  assertEquals((await stateB<StateHash>("/hash")).hash, seeded.hash);

  // Reset: A is back to the seeded hash behind the same origin; B is untouched.
  const origin = a.origin;
  await a.reset();
  assertEquals(a.origin, origin);
  assertEquals((await stateA<StateHash>("/hash")).hash, seeded.hash, "reset did not restore");
  const again = await gateway.request(a.origin, `/?p=${post}`);
  const againHtml = await again.text();
  assertEquals(again.status, 200);
  assert(!againHtml.includes(forged), "A still shows its comment after the reset");
  await comment(gateway, a, post, `after reset ${crypto.randomUUID()}`);
  await a.reset({ cold: true });
  assertEquals(a.source, "cold");
  assertEquals((await stateA<StateHash>("/hash")).hash, seeded.hash, "a cold reset differs");

  await assertColdCreateAndDestroy(sandbox, gateway, 1, seeded, b, a);
});

Deno.test("Env.create({ task }) runs a WordPress task on the shared runtime: the solver earns 1, a neighbour env stays seeded, and after reset doing nothing earns 0", async () => {
  await using gateway = new Gateway();
  await using sandbox = await openShared(gateway);
  await using browser = await Browser.launch();
  const instance = await sandbox.create({ seed: SEED });
  const neighbour = await sandbox.create({ seed: SEED });
  const seeded = await stateReader(neighbour)<StateHash>("/hash");
  const task = generateTask(site, "change-role", SEED);
  const template = site.templates.find((t) => t.id === "change-role");
  assert(template, "no change-role template");
  const bound = bindTask(task, site, instance.state, { origin: instance.origin });
  const env = await Env.create(browser, { site: instance, task: bound });
  try {
    await template.solve(env, task);
    const verdict = await env.verify();
    assertEquals(verdict.reward, 1, verdict.reason);
  } finally {
    await env.close();
  }
  assertNotEquals((await stateReader(instance)<StateHash>("/hash")).hash, seeded.hash);
  assertEquals(
    (await stateReader(neighbour)<StateHash>("/hash")).hash,
    seeded.hash,
    "the task's change reached the neighbour env",
  );
  await instance.reset();
  const idle = await Env.create(browser, { site: instance, task: bound });
  try {
    await idle.step({ action: "stop", answer: "done" });
    const verdict = await idle.verify();
    assertEquals(verdict.reward, 0, verdict.reason);
  } finally {
    await idle.close();
  }
});

Deno.test("a spare whose mariadbd died while waiting is never handed out: it is thrown away, counted and replaced", async () => {
  await using gateway = new Gateway();
  await using sandbox = await openShared(gateway);
  const a = await sandbox.create({ seed: SEED });
  const seeded = await stateReader(a)<StateHash>("/hash");
  const spares = 2; // the sandbox's default
  const full = () =>
    waitFor(async () => (await sandbox.health(SEED)).spares === spares, {
      message: `the runtime should have ${spares} spares`,
      timeoutMs: 120_000,
      intervalMs: 200,
    });
  await full();

  // Every mariadbd but A's is a spare's (`--datadir=/var/lib/wsdb/slot-N --socket=…`).
  const servers = (await execIn(a, "pgrep", "-af", "datadir=/var/lib/wsdb/slot-")).split("\n");
  const slots = servers.map((line) => Number(/slot-(\d+) --socket/.exec(line)?.[1]));
  const spareSlots = slots.filter((slot) => slot !== a.slot);
  assertEquals(spareSlots.length, spares, servers.join("\n"));
  const lostBefore = (await sandbox.health(SEED)).sparesLost;
  // As the OOM killer would, and the next creation comes at once.
  await execIn(a, "pkill", "-9", "-f", `datadir=/var/lib/wsdb/slot-(${spareSlots.join("|")}) `);

  const b = await sandbox.create({ seed: SEED });
  assert(!spareSlots.includes(b.slot), `B got the dead spare of slot ${b.slot}`);
  await b.check();
  assertEquals((await stateReader(b)<StateHash>("/hash")).hash, seeded.hash);
  await waitFor(async () => (await sandbox.health(SEED)).sparesLost === lostBefore + spares, {
    message: "both dead spares should be counted",
    timeoutMs: 30_000,
    intervalMs: 100,
  });
  // Replaced: the runtime is full again, and the next reset takes a live one.
  await full();
  await b.reset();
  assertEquals(b.source, "spare");
  await b.check();
  assertEquals((await stateReader(b)<StateHash>("/hash")).hash, seeded.hash);
});

Deno.test("each shared WordPress env has uploads of its own: its media URLs point at its copy, served to it alone, and a reset brings back the seeded uploads", async () => {
  await using gateway = new Gateway();
  await using sandbox = await openShared(gateway);
  const a = await sandbox.create({ seed: SEED });
  const b = await sandbox.create({ seed: SEED });
  const get = async (env: SharedRuntimeInstance, path: string) => {
    const response = await gateway.request(env.origin, path);
    return { status: response.status, body: await response.text() };
  };

  // A seeded attachment, as WordPress gives its URL to A: under A's own folder.
  const media = await get(a, "/?rest_route=/wp/v2/media&per_page=1");
  assertEquals(media.status, 200, media.body.slice(0, 300));
  const source = (JSON.parse(media.body) as { source_url: string }[])[0]?.source_url;
  assert(source, media.body.slice(0, 300));
  const own = `/wp-content/envs/env-${a.key}/`;
  const path = new URL(source).pathname;
  assert(path.startsWith(own), `A's media URL is not under ${own}: ${source}`);
  const seededFile = await get(a, path);
  assertEquals(seededFile.status, 200, "A's copy of a seeded upload is not served");
  // B has its own copy of it; A's folder is refused to B's relay.
  assertEquals((await get(b, path.replace(a.key, b.key))).status, 200);
  assertEquals((await get(b, path)).status, 403, "B's relay was served A's uploads");

  // A file added to A's uploads is A's alone, and gone after A's reset.
  const name = `probe-${crypto.randomUUID()}.txt`;
  await execIn(a, "sh", "-c", `echo probe > /run/wsfiles/env-${a.key}/${name}`);
  assertEquals((await get(a, `${own}${name}`)).status, 200);
  assertEquals((await get(b, `/wp-content/envs/env-${b.key}/${name}`)).status, 404);
  await a.reset();
  assertEquals((await get(a, `${own}${name}`)).status, 404, "A's upload outlived its reset");
  assertEquals((await get(a, path)).status, 200, "the seeded upload is gone after the reset");
});

/** ESTABLISHED TCP connections to or from Apache's port (8080) in the runtime container. */
async function apacheConnections(env: SharedRuntimeInstance): Promise<number> {
  const table = await execIn(env, "cat", "/proc/net/tcp");
  return table.split("\n").slice(1).filter((line) => {
    const [, local, remote, state] = line.trim().split(/\s+/);
    return state === "01" && [local, remote].some((address) => address?.endsWith(":1F90"));
  }).length;
}

Deno.test("a shared runtime's relays hold no idle connection to Apache once their answers are sent", async () => {
  // Apache runs prefork: each idle keep-alive connection holds a worker until
  // its KeepAliveTimeout (5 s), and with a relay per env those took every
  // spare worker, so the next env's requests waited for Apache to start one.
  await using gateway = new Gateway();
  await using sandbox = await openShared(gateway);
  const envs: SharedRuntimeInstance[] = [];
  for (let i = 0; i < 3; i++) envs.push(await sandbox.create({ seed: SEED }));
  for (const env of envs) {
    for (let i = 0; i < 3; i++) {
      const response = await gateway.request(env.origin, "/");
      await response.body?.cancel();
      assertEquals(response.status, 200);
    }
  }
  // Well under Apache's KeepAliveTimeout: a connection kept idle would still be there.
  await waitFor(async () => await apacheConnections(envs[0]!) === 0, {
    message: "the relays should keep no connection to Apache open",
    timeoutMs: 2_000,
    intervalMs: 100,
  });
});
