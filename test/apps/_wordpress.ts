// What WordPress's tests share: its image, the rollout server on it, and a
// visitor's comment, the write the server tests make through an env's own
// origin.
import { assert, assertEquals } from "@std/assert";
import { type RolloutServer, type ServerOptions, startServer } from "../../adapters/http/server.ts";
import { type GroupCreated, WebServClient } from "../../adapters/client/mod.ts";
import type { StateDiff } from "../../fixtures/sites/kit/types.ts";
import type { Instance } from "../../sandboxes/types.ts";
import { type AppImage, appImage, requireIncusImage } from "./_apps.ts";

/** WordPress's image, as `deno task image:apps wordpress` imports it. */
export const WORDPRESS: AppImage = appImage("wordpress", { readyMs: 180_000 });

/** The Incus storage pool the server's instances go on. */
export const POOL = Deno.env.get("WEBSERV_INCUS_POOL") ?? "webserv-btrfs";

/**
 * Starts the rollout server on an Incus backend once WordPress's image is
 * there, and a client of it that waits as long as a seed's base takes to make.
 *
 * @param options the backend and the server's other options (port 0 and the pool by default)
 * @returns the server, to dispose of, and its client
 */
export async function openWordPressServer(
  options: Partial<ServerOptions> & Pick<ServerOptions, "backend">,
): Promise<{ server: RolloutServer; client: WebServClient }> {
  await requireIncusImage(WORDPRESS);
  const server = await startServer({ port: 0, incusPool: POOL, ...options });
  return { server, client: new WebServClient(server.url, { timeoutMs: 900_000, retries: 0 }) };
}

/**
 * Opens a group of `n` sessions on one WordPress task, once the server lists
 * WordPress's tasks, and checks that each is on the task, on its login-linked
 * front page, at an origin of its own.
 *
 * @param opened the server and its client
 * @param task the task's id
 * @param n the group's size
 * @returns the group, and each session's instance as the server holds it
 */
export async function openGroup<I extends Instance>(
  { server, client }: { server: RolloutServer; client: WebServClient },
  task: string,
  n: number,
): Promise<{ group: GroupCreated; instances: I[] }> {
  const listed = await client.taskPage({ site: "wordpress", limit: 100 });
  assert(listed.tasks.length >= 10, `WordPress lists ${listed.tasks.length} tasks`);
  const group = await client.createGroup({ task }, n);
  assertEquals(group.sessions.length, n);
  for (const session of group.sessions) {
    assertEquals(session.task?.id, task);
    assert(session.observation.text?.includes("Log In"), session.observation.text);
  }
  const instances = group.sessions.map((s) => server.sessions.instance(s.id) as I);
  assertEquals(new Set(instances.map((i) => i.origin)).size, n);
  return { group, instances };
}

/**
 * Reads one path of the env's state API.
 *
 * @param instance the env
 * @param path such as `"/diff"`
 * @returns the answer's JSON, once it answered 200
 */
export async function stateOf<T>(instance: Instance, path: string): Promise<T> {
  assert(instance.state, "the env has a state API");
  const response = await instance.state.fetch(path);
  assertEquals(response.status, 200, `${path} of ${instance.origin}`);
  return await response.json() as T;
}

/**
 * Posts a comment through the first env of a group, and asserts that it is
 * in that env's state diff and in no other's.
 *
 * @param first the env written through
 * @param others the group's other envs
 */
export async function assertCommentInOneOnly(first: Instance, others: Instance[]): Promise<void> {
  const text = `A comment from one env of the group ${crypto.randomUUID()}`;
  await postComment(first, text);
  const written = await stateOf<StateDiff>(first, "/diff");
  const added = written.tables["wp_comments"]?.added ?? [];
  assertEquals(added.map((row) => row["comment_content"]), [text]);
  for (const other of others) {
    const diff = await stateOf<StateDiff>(other, "/diff");
    assertEquals(diff.tables["wp_comments"], undefined, `${other.origin} saw the write`);
  }
}

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
