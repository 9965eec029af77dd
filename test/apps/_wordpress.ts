// What WordPress's tests share: a visitor's comment, the write the server
// tests make through an env's own origin.
import { assert, assertEquals } from "@std/assert";
import type { Instance } from "../../sandboxes/types.ts";

/**
 * Posts an anonymous comment on WordPress's latest published post through the env's own origin,
 * as a visitor's browser would (the gateway routes by Host), and asserts WordPress's redirect.
 *
 * @param instance the WordPress env
 * @param text the comment
 */
export async function postComment(instance: Instance, text: string): Promise<void> {
  assert(instance.state, "the env has a state API");
  const posts = await instance.state.fetch("/query/posts?status=publish&limit=1");
  assertEquals(posts.status, 200, "the state API lists the published posts");
  const post = (await posts.json() as { result: { id: number }[] }).result[0]?.id;
  assert(post !== undefined, "WordPress has no published post");
  const origin = new URL(instance.origin);
  using http = Deno.createHttpClient({ allowHost: true });
  const posted = await fetch(`http://127.0.0.1:${origin.port}/wp-comments-post.php`, {
    method: "POST",
    headers: { host: origin.host },
    body: new URLSearchParams({
      comment_post_ID: String(post),
      author: "Group Reader",
      email: "reader@webserv.test",
      url: "",
      comment: text,
    }),
    redirect: "manual",
    client: http,
  });
  await posted.body?.cancel();
  assertEquals(posted.status, 302);
}
