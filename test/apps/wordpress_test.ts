/**
 * WordPress from Debian packages on Incus and Docker (`deno task image:apps`):
 * the real application served through the gateway, its state read from its
 * own MariaDB over the state socket, and reset back to the seeded hash.
 *
 * Not in the default run (the image takes minutes to build): run with
 * `deno task test:apps`. It fails, never skips, when the image is missing.
 */
import { assert, assertEquals, assertStringIncludes } from "@std/assert";
import type { Row, StateDiff, StateHash } from "../../fixtures/sites/kit/types.ts";
import type { PostSummary } from "../../fixtures/sites/wordpress/state_server.ts";
import {
  type AppImage,
  appImage,
  type AppInstance,
  assertResetRestores,
  assertStateNotRouted,
  testEveryBackend,
} from "./_apps.ts";

// The base instance seeds within this time too (about 11 s unloaded); the host is shared.
const APP: AppImage = appImage("wordpress", { readyMs: 180_000, buildTime: "5-10 minutes" });

async function checks(app: AppInstance): Promise<void> {
  const { gateway, instance, state } = app;

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
  await assertStateNotRouted(app);

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

  await assertResetRestores(app, seeded);
  const again = await gateway.request(instance.origin, "/");
  assertEquals(again.status, 200);
  assert(!(await again.text()).includes(text));
}

testEveryBackend(APP, {
  name: "WordPress",
  does: "serves its seeded posts, reports its MariaDB state, and resets to the seeded hash",
  check: checks,
});
