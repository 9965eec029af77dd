/**
 * Redmine as a task environment on Incus (`deno task test:apps`): the
 * host's mirror of the seeded content (`data.ts`, Ruby's draws replayed)
 * equals the container's MariaDB row by row, a template runs end to end
 * through `Env.create({ task })` (its solver wins, doing nothing does not),
 * and an issue edit's own writes (journal, details, watcher, clock) pass
 * only under the template's `allow`, while signing in and browsing write
 * nothing tracked.
 *
 * Fails, never skips, when the image is missing: build it with
 * `deno task image:apps redmine`.
 */
import { assert, assertEquals } from "@std/assert";
import { DatabaseSync } from "node:sqlite";
import { evaluateState, harm } from "../../fixtures/sites/kit/_evaluate_state.ts";
import { generateTask } from "../../fixtures/sites/kit/generate.ts";
import { meaningfulDiff } from "../../fixtures/sites/kit/meaning.ts";
import { click, look } from "../../fixtures/sites/kit/solve.ts";
import site from "../../fixtures/sites/redmine/mod.ts";
import { ACTIVITIES, PRIORITIES, seedMirror, TRACKERS } from "../../fixtures/sites/redmine/data.ts";
import {
  editIssue,
  issueNumber,
  login,
  openIssue,
  openProject,
} from "../../fixtures/sites/redmine/tasks/_solve.ts";
import { assertSolverWins, incusSite, tableRows, withInstance, withSession } from "./_apps.ts";

const SEED = 3;
// A base seeds its projects at its first start: minutes on a loaded host.
const APP = incusSite(site, { seed: SEED, readyMs: 400_000, prefix: "rmtask-" });

function mirrored(db: DatabaseSync, sql: string, id: number): Record<string, unknown> {
  const row = db.prepare(sql).get(id);
  assert(row, `row ${id} is not in the mirror`);
  // node:sqlite's rows have a null prototype.
  return { ...row };
}

Deno.test("seedMirror() draws the same users, versions, issues, journals and time entries as seed.rb in the container", async () => {
  await withInstance(APP.open, async ({ instance }) => {
    const db = new DatabaseSync(":memory:");
    seedMirror(db, SEED);
    const users = (await tableRows(instance, "users")).filter((user) => user["type"] === "User");
    assertEquals(users.length, 41);
    for (const user of users) {
      if (user["login"] === "admin") continue;
      assertEquals(
        mirrored(
          db,
          "SELECT login, firstname, lastname FROM users WHERE id = ?",
          Number(user["id"]),
        ),
        { login: user["login"], firstname: user["firstname"], lastname: user["lastname"] },
      );
    }
    for (const version of await tableRows(instance, "versions")) {
      const row = mirrored(db, "SELECT * FROM versions WHERE id = ?", Number(version["id"]));
      assertEquals(
        [row["project_id"], row["name"], row["status"], row["effective_date"]],
        [version["project_id"], version["name"], version["status"], version["effective_date"]],
      );
    }
    const issues = await tableRows(instance, "issues");
    assertEquals(issues.length, 2400);
    const statusIds = ["New", "In Progress", "Resolved", "Feedback", "Closed", "Rejected"];
    for (const issue of issues) {
      const row = mirrored(db, "SELECT * FROM issues WHERE id = ?", Number(issue["id"]));
      assertEquals(
        [
          row["project_id"],
          row["subject"],
          statusIds.indexOf(String(row["status"])) + 1,
          TRACKERS.indexOf(String(row["tracker"])) + 1,
          PRIORITIES.indexOf(String(row["priority"])) + 1,
          row["author_id"],
          row["assigned_to_id"],
          row["version_id"],
          row["start_date"],
          row["due_date"],
          row["done_ratio"],
        ],
        [
          issue["project_id"],
          issue["subject"],
          issue["status_id"],
          issue["tracker_id"],
          issue["priority_id"],
          issue["author_id"],
          issue["assigned_to_id"],
          issue["fixed_version_id"],
          issue["start_date"],
          issue["due_date"],
          issue["done_ratio"],
        ],
      );
    }
    const journals = await tableRows(instance, "journals");
    assertEquals(
      journals.length,
      Number(db.prepare("SELECT COUNT(*) AS n FROM journals").get()?.["n"]),
    );
    for (const journal of journals) {
      const row = mirrored(db, "SELECT * FROM journals WHERE id = ?", Number(journal["id"]));
      assertEquals(
        [row["issue_id"], row["user_id"], row["notes"]],
        [journal["journalized_id"], journal["user_id"], journal["notes"]],
      );
    }
    const entries = await tableRows(instance, "time_entries");
    assertEquals(entries.length, 1200);
    for (const entry of entries) {
      const row = mirrored(db, "SELECT * FROM time_entries WHERE id = ?", Number(entry["id"]));
      assertEquals(
        [row["issue_id"], row["user_id"], row["hours"], row["spent_on"], row["comments"]],
        [entry["issue_id"], entry["user_id"], entry["hours"], entry["spent_on"], entry["comments"]],
      );
      assertEquals(ACTIVITIES.indexOf(String(row["activity"])) + 8, entry["activity_id"]);
    }
    // Wiki pages: the mirror's titles per project, and each project's start page beside them.
    const wikis = new Map(
      (await tableRows(instance, "wikis")).map((w) => [w["id"], w["project_id"]]),
    );
    const pages = (await tableRows(instance, "wiki_pages"))
      .map((page) => `${wikis.get(page["wiki_id"])}/${page["title"]}`).sort();
    const expected = db.prepare("SELECT project_id, title FROM wiki_pages").all()
      .map((row) => `${row["project_id"]}/${row["title"]}`);
    for (const project of new Set(expected.map((key) => key.split("/")[0]))) {
      expected.push(`${project}/Wiki`);
    }
    assertEquals(pages, expected.sort());
  }, { seed: SEED });
});

Deno.test("Env.create({ task }) runs a Redmine task end to end: the solver earns 1, doing nothing 0", async () => {
  await withSession(APP, (session) => assertSolverWins(session, "change-status"));
});

Deno.test("Redmine writes nothing tracked while a person browses, and an issue edit's own rows pass only under the template's allow", async () => {
  await withSession(APP, async (session) => {
    const task = generateTask(site, "change-status", SEED);
    await session.inEnv(task, async (env, bound) => {
      // Sign in, open a project, its roadmap, an issue and its edit form.
      await login(env, task.instruction);
      await openProject(env, "Harbor Platform");
      await click(env, "link", "Roadmap");
      const id = issueNumber(task.instruction);
      await openIssue(env, id);
      await click(env, "link", "Edit");
      await look(env);
      const browsed = meaningfulDiff(await bound.sdk.diff(), site.tracked);
      assertEquals(browsed.tables, {}, "browsing wrote tracked rows");
      // An edit with a note: the issue's clock and lock, a journal, and the admin as a watcher.
      await openIssue(env, id);
      await editIssue(env, { note: "Checked by the harmless test" });
      const edited = meaningfulDiff(await bound.sdk.diff(), site.tracked);
      assert(edited.tables["journals"] && edited.tables["watchers"], JSON.stringify(edited));
      assert(harm(edited, site.harmless) !== undefined, "an edit passed as harmless");
      const evaluator = task.evaluator;
      assert(evaluator.kind === "state");
      // Under the template's allow, only the asked status change is missing.
      const verdict = evaluateState({ ...evaluator, expect: [] }, edited, undefined);
      assertEquals(verdict.reward, 1, verdict.reason);
      // The issue's description came back from the form as it was stored (CRLF).
      const changed = edited.tables["issues"]?.changed[0];
      assert(changed && !changed.columns.includes("description"), JSON.stringify(changed));
    });
  });
});
