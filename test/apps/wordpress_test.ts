/**
 * WordPress from Debian packages on Incus and Docker (`deno task image:apps`):
 * the real application served through the gateway, its state read from its
 * own MariaDB over the state socket, and reset back to the seeded hash.
 *
 * Not in the default run (the image takes minutes to build): run with
 * `deno task test:apps`. It fails, never skips, when the image is missing.
 */
import { assert, assertEquals, assertNotEquals, assertStringIncludes } from "@std/assert";
import { SandboxError } from "../../sandboxes/errors.ts";
import { Gateway } from "../../sandboxes/gateway.ts";
import { IncusClient } from "../../sandboxes/incus/client.ts";
import { IncusSandbox } from "../../sandboxes/incus/incus_sandbox.ts";
import { DockerClient } from "../../sandboxes/docker/client.ts";
import { DockerSandbox } from "../../sandboxes/docker/docker_sandbox.ts";
import type { Sandbox } from "../../sandboxes/types.ts";
import type { Row, StateDiff, StateHash } from "../../fixtures/sites/kit/types.ts";
import type { PostSummary } from "../../fixtures/sites/wordpress/state_server.ts";

const POOL = Deno.env.get("WEBSERV_INCUS_POOL") ?? "webserv-btrfs";
const IMAGE = "webserv-wordpress";

const BUILD = `build it with "deno task image:apps wordpress" (about 5-10 minutes)`;
/** The base instance seeds within this time too (about 11 s unloaded); the host is shared. */
const READY_MS = 180_000;

/** Throws a message a person can act on when the Incus image was never built. */
async function requireIncusImage(): Promise<void> {
  using client = new IncusClient();
  try {
    await client.imageFingerprint(IMAGE);
  } catch (error) {
    if (error instanceof SandboxError && error.status === 404) {
      throw new Error(`Incus has no image "${IMAGE}": ${BUILD}`);
    }
    throw error;
  }
}

function openIncus(siteTransport: "tcp" | "unix") {
  return async (gateway: Gateway): Promise<Sandbox> => {
    await requireIncusImage();
    return await IncusSandbox.open({
      gateway,
      image: IMAGE,
      pool: POOL,
      prefix: "wsapp-",
      siteTransport,
      readyTimeoutMs: READY_MS,
    });
  };
}

async function openDocker(gateway: Gateway): Promise<Sandbox> {
  using client = new DockerClient();
  if (!(await client.hasImage(`${IMAGE}:latest`))) {
    throw new Error(`Docker has no image "${IMAGE}:latest": ${BUILD}`);
  }
  return await DockerSandbox.open({
    gateway,
    image: IMAGE,
    prefix: "wsapp-",
    readyTimeoutMs: READY_MS,
  });
}

async function servesAndResets(open: (gateway: Gateway) => Promise<Sandbox>): Promise<void> {
  await using gateway = new Gateway();
  const sandbox = await open(gateway);
  await using _closed = { [Symbol.asyncDispose]: () => sandbox.close() };
  const instance = await sandbox.create({ seed: 1 });
  const channel = instance.state;
  assert(channel !== undefined, "the instance has no state channel");
  const state = async <T>(path: string, init?: RequestInit): Promise<T> => {
    const response = await channel.fetch(path, init);
    const body = await response.text();
    assertEquals(response.status, 200, `state ${path}: ${body}`);
    return JSON.parse(body) as T;
  };

  const published = (await state<{ result: PostSummary[] }>(
    "/query/posts?status=publish",
  )).result;
  assert(published.length > 100, `only ${published.length} published posts were seeded`);
  const newest = published[0];
  assert(newest !== undefined);
  assert(newest.categories.length > 0, "the newest post has no category");

  const page = await gateway.request(instance.origin, "/");
  const html = await page.text();
  assertEquals(page.status, 200, html.slice(0, 500));
  assertStringIncludes(html, '<meta name="generator" content="WordPress');
  assertStringIncludes(html, "WebServ Press");
  assertStringIncludes(html, newest.title, "the front page does not list the newest post");
  // Links follow the gateway's host, not a URL stored at install time.
  assertStringIncludes(html, `${instance.origin}/?p=${newest.id}`);

  // Nothing on the page loads from off this host (emoji CDN, Gravatar).
  assert(!/s\.w\.org|gravatar\.com/.test(html), "the front page loads from off the host");
  const post = await gateway.request(instance.origin, `/?p=${newest.id}`);
  const postHtml = await post.text();
  assertEquals(post.status, 200);
  assertStringIncludes(postHtml, newest.title);
  const [comment] = await state<Row[]>(
    `/tables/wp_comments?comment_post_ID=${newest.id}&comment_approved=1&limit=1`,
  );
  assert(comment !== undefined, `the newest post has no approved comment`);
  assertStringIncludes(postHtml, String(comment.comment_content));

  // The state API is on its own socket: the gateway never routes to it.
  const probe = await gateway.request(instance.origin, "/hash");
  await probe.body?.cancel();
  assertEquals(probe.headers.get("x-webserv-state"), null);

  const seeded = await state<StateHash>("/hash");
  assert(seeded.tables.wp_posts !== undefined && seeded.tables.wp_posts.rows > 300);
  await state("/mark", { method: "POST" });

  // A visitor's comment, through the gateway as a browser would post it.
  const text = `A comment from the WordPress test ${crypto.randomUUID()}`;
  const posted = await gateway.request(instance.origin, "/wp-comments-post.php", {
    method: "POST",
    body: new URLSearchParams({
      comment_post_ID: String(newest.id),
      author: "Test Reader",
      email: "reader@webserv.test",
      url: "",
      comment: text,
    }),
  });
  await posted.body?.cancel();
  assertEquals(posted.status, 302, "WordPress did not accept the comment");

  const diff = await state<StateDiff>("/diff");
  const added = diff.tables.wp_comments?.added ?? [];
  assertEquals(added.length, 1, JSON.stringify(diff));
  assertEquals(added[0]?.comment_content, text);
  assertEquals(added[0]?.comment_post_ID, newest.id);
  // WordPress's default: a first-time commenter's comment waits for moderation,
  // so the post's count of approved comments stays.
  assertEquals(added[0]?.comment_approved, "0");
  const typed = await state<{ result: PostSummary[] }>("/query/posts?status=publish&limit=1");
  assertEquals(typed.result[0]?.id, newest.id);
  assertEquals(typed.result[0]?.comments, newest.comments);
  assertNotEquals((await state<StateHash>("/hash")).hash, seeded.hash);

  await instance.reset();
  assertEquals(
    (await state<StateHash>("/hash")).hash,
    seeded.hash,
    "reset did not restore the seeded state",
  );
  const again = await gateway.request(instance.origin, "/");
  assertEquals(again.status, 200);
  assert(!(await again.text()).includes(text));
}

Deno.test("WordPress on Incus serves its seeded posts, reports its MariaDB state, and resets to the seeded hash", async () => {
  await servesAndResets(openIncus("tcp"));
});

Deno.test("WordPress on Incus serves through its unix socket relay when siteTransport is unix", async () => {
  await servesAndResets(openIncus("unix"));
});

Deno.test("WordPress on Docker serves its seeded posts, reports its MariaDB state, and resets to the seeded hash", async () => {
  await servesAndResets(openDocker);
});
