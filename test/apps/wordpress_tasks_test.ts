/**
 * WordPress as a task environment on Incus (`deno task test:apps`): the
 * host's mirror of the seeded content equals the container's MariaDB, a
 * template runs end to end through `Env.create({ task })` (its solver wins,
 * doing nothing does not), WordPress's own writes while a person uses
 * wp-admin are declared harmless (and would fail a task if they were not),
 * the solvers of the templates drawn from large answer spaces (`post-tags`,
 * `post-author`, `user-latest-post`, `view-post`, `open-tag`) win and a blind stop does not,
 * and `type` replaces text in the block editor's paragraphs without deleting
 * the block.
 *
 * Fails, never skips, when the image is missing: build it with
 * `deno task image:apps wordpress`.
 */
import { assert, assertEquals } from "@std/assert";
import { DatabaseSync } from "node:sqlite";
import { harm } from "../../fixtures/sites/kit/_evaluate_state.ts";
import { generateTask } from "../../fixtures/sites/kit/generate.ts";
import { meaningfulDiff } from "../../fixtures/sites/kit/meaning.ts";
import { look } from "../../fixtures/sites/kit/solve.ts";
import site from "../../fixtures/sites/wordpress/mod.ts";
import { MEDIA, seedMirror } from "../../fixtures/sites/wordpress/data.ts";
import { login } from "../../fixtures/sites/wordpress/tasks/_solve.ts";
import { dismissGuide } from "../../fixtures/sites/wordpress/tasks/_editor.ts";
import type { Env } from "../../engine/env.ts";
import { assertSolverWins, incusSite, tableRows, withInstance, withSession } from "./_apps.ts";

const SEED = 1;
const APP = incusSite(site, { seed: SEED, readyMs: 180_000, prefix: "wstask-" });

/**
 * Logs in with the task's credentials and opens the block editor on a new
 * post, its welcome guide dismissed.
 */
async function openEditor(env: Env, instruction: string): Promise<void> {
  const dashboard = await login(env, instruction);
  const add = dashboard.elements.find((el) => el.role === "link" && el.name === "New");
  assert(add, "no New link");
  await env.step({ action: "click", id: add.id });
  await dismissGuide(env);
}

Deno.test("seedMirror() draws the same posts, users, terms and comments as seed.php in the container", async () => {
  await withInstance(APP.open, async ({ instance }) => {
    const db = new DatabaseSync(":memory:");
    seedMirror(db, SEED);
    // Posts, pages and the media library's images; the theme's global-styles post is
    // WordPress's own.
    const posts = (await tableRows(instance, "wp_posts")).filter((post) =>
      ["post", "page", "attachment"].includes(String(post["post_type"]))
    );
    assertEquals(posts.length, 312 + MEDIA.length);
    for (const post of posts) {
      const mirrored = db.prepare("SELECT * FROM posts WHERE id = ?").get(Number(post["ID"]));
      assert(mirrored, `post ${post["ID"]} is not in the mirror`);
      assertEquals(
        [mirrored["title"], mirrored["slug"], mirrored["status"], mirrored["author_id"]],
        [post["post_title"], post["post_name"], post["post_status"], Number(post["post_author"])],
      );
      assertEquals(mirrored["content"], String(post["post_content"]));
      assertEquals(Number(mirrored["comment_count"]), Number(post["comment_count"]));
    }
    for (const user of await tableRows(instance, "wp_users")) {
      const mirrored = db.prepare("SELECT login FROM users WHERE id = ?").get(Number(user["ID"]));
      assertEquals(mirrored?.["login"], String(user["user_login"]));
    }
    const comments = await tableRows(instance, "wp_comments");
    assertEquals(comments.length, 900);
    for (const comment of comments) {
      const mirrored = db.prepare("SELECT * FROM comments WHERE id = ?").get(
        Number(comment["comment_ID"]),
      );
      assertEquals(
        [mirrored?.["post_id"], mirrored?.["content"], String(mirrored?.["approved"])],
        [
          Number(comment["comment_post_ID"]),
          comment["comment_content"],
          comment["comment_approved"],
        ],
      );
    }
  }, { seed: SEED });
});

Deno.test("Env.create({ task }) runs a WordPress task end to end: the solver earns 1, doing nothing 0", async () => {
  await withSession(APP, (session) => assertSolverWins(session, "change-role"));
});

Deno.test("post-tags', post-author's, user-latest-post's, view-post's and open-tag's solvers earn 1 on WordPress, a wrong answer or page 0", async () => {
  await withSession(APP, async (session) => {
    for (const id of ["post-tags", "post-author", "user-latest-post", "view-post", "open-tag"]) {
      // Ending where the task starts, with an answer no truth is: 0.
      await assertSolverWins(session, id, { answer: "Nothing Here Today" });
      await session.instance.reset();
    }
  });
});

Deno.test("the WordPress site declares harmless what wp-admin writes by itself, and nothing else", async () => {
  await withSession(APP, async (session) => {
    const task = generateTask(site, "post-tags", SEED);
    await session.inEnv(task, async (env, bound) => {
      // Log in and open the block editor: a session, the dashboard's and the
      // editor's auto-drafts, the guide's dismissal, no change a person asked for.
      await openEditor(env, task.instruction);
      await look(env);
      const diff = meaningfulDiff(await bound.sdk.diff(), site.tracked);
      assert(
        Object.keys(diff.tables).length > 0,
        "wp-admin wrote nothing: the check checks nothing",
      );
      assertEquals(harm(diff, site.harmless), undefined);
      assert(harm(diff, []) !== undefined, "without the declaration the writes would be harm");
      // A real change is still harm: a comment approved by hand is not declared.
      const sdk = bound.sdk;
      const pending = (await sdk.rows("wp_comments", { comment_approved: "0" }, 1))[0];
      assert(pending, "no pending comment");
      const later = {
        tables: {
          ...diff.tables,
          wp_comments: {
            added: [],
            removed: [],
            changed: [{
              key: { comment_ID: pending["comment_ID"] ?? null },
              before: pending,
              after: { ...pending, comment_approved: "1" },
              columns: ["comment_approved"],
            }],
          },
        },
      };
      assert(harm(later, site.harmless) !== undefined, "an approved comment passed as harmless");
    });
  });
});

Deno.test("type replaces text in the block editor's paragraphs: the empty one is typed into, the full one cleared within itself", async () => {
  await withSession(APP, async (session) => {
    const task = generateTask(site, "post-tags", SEED);
    await session.inEnv(task, async (env) => {
      await openEditor(env, task.instruction);
      let page = await look(env);
      const block = page.elements.find((el) => el.name === "Add default block");
      assert(block, `no "Add default block" in:\n${page.text}`);
      await env.step({ action: "click", id: block.id });
      page = await look(env);
      // An empty paragraph holds U+FEFF and a placeholder span: typed into as
      // is (a Control+A there selected and deleted every block).
      const empty = page.elements.find((el) =>
        el.role === "document" && /^Empty block/.test(el.name)
      );
      assert(empty, `no empty paragraph in:\n${page.text}`);
      let step = await env.step({ action: "type", id: empty.id, text: "First words here" });
      assert(step.observation.text.includes("First words here"), step.observation.text);
      // The paragraph now holds text: replacing it clears the paragraph only.
      step = await env.step({ action: "type", id: empty.id, text: "Second words there" });
      assert(step.observation.text.includes("Second words there"), step.observation.text);
      assert(!step.observation.text.includes("First words here"), step.observation.text);
    });
  });
});

Deno.test("wp-admin's row actions, shown while the row is hovered, get ids, and a click on one hovers its row first", async () => {
  await withSession(APP, async (session) => {
    const task = generateTask(site, "post-tags", SEED);
    await session.inEnv(task, async (env) => {
      const dashboard = await login(env, task.instruction);
      const posts = dashboard.elements.find((el) => el.role === "link" && /^Posts/.test(el.name));
      assert(posts, dashboard.text);
      const list = (await env.step({ action: "click", id: posts.id })).observation;
      // The list's first row: its title link, then its actions (`left: -9999em` until hovered).
      const first = list.elements.find((el) => el.role === "link" && el.name.startsWith("“"));
      assert(first, list.text);
      const title = first.name.replace(/^“|” \(Edit\)$/g, "");
      const edit = list.elements.find((el) => el.name === `Edit “${title}”`);
      assert(edit, `no id on the row action "Edit “${title}”":\n${list.text}`);
      const editor = (await env.step({ action: "click", id: edit.id })).observation;
      assert(/post\.php\?post=\d+&action=edit/.test(editor.url), editor.url);
    });
  });
});
