/**
 * Redmine 5.0 from Debian packages (Apache and Passenger) on Incus and
 * Docker (`deno task image:apps redmine`): the seeded projects and issues
 * served through the gateway, its state read from its own MariaDB over the
 * state socket, one visitor's time entry (through Redmine's REST API) seen as
 * one row of the diff, and reset back to the seeded hash.
 *
 * Not in the default run (the image takes minutes to build): run with
 * `deno task test:apps`. It fails, never skips, when the image is missing.
 */
import { assert, assertEquals, assertMatch, assertStringIncludes } from "@std/assert";
import { DIGEST_PREFIX } from "../../fixtures/sites/kit/state_secrets.ts";
import type { Row, StateDiff, StateHash } from "../../fixtures/sites/kit/types.ts";
import type { IssueSummary, ProjectSummary } from "../../fixtures/sites/redmine/state_server.ts";
import {
  type AppImage,
  appImage,
  type AppInstance,
  assertResetRestores,
  assertStateNotRouted,
  diffRows,
  testEveryBackend,
} from "./_apps.ts";

// A base seeds its projects at its first start (about a minute unloaded).
const APP: AppImage = appImage("redmine", { readyMs: 300_000, buildTime: "5 minutes" });

/** The password `seed.rb` gives every seeded user. */
const USER_PASSWORD = "webserv-pass";

async function checks(app: AppInstance): Promise<void> {
  const { gateway, instance, state } = app;

  const projects = (await state<{ result: ProjectSummary[] }>("/query/projects")).result;
  assertEquals(projects.length, 6);
  const project = projects[0]!;
  assert(project.issues >= 300 && project.open_issues > 0, JSON.stringify(project));
  assertEquals(project.versions.length, 4);
  assertEquals(project.members.length, 12);
  const issues = (await state<{ result: IssueSummary[] }>(
    `/query/issues?project=${project.identifier}&status=New&limit=2000`,
  )).result;
  const issue = issues.find((candidate) => candidate.assignee !== null);
  assert(issue !== undefined, "no new issue has an assignee");

  const list = await gateway.request(instance.origin, `/projects/${project.identifier}/issues`);
  const listHtml = await list.text();
  assertEquals(list.status, 200, listHtml.slice(0, 500));
  assertStringIncludes(listHtml, project.name);
  assertStringIncludes(listHtml, "WebServ Redmine");
  const shown = await gateway.request(instance.origin, `/issues/${issue.id}`);
  const issueHtml = await shown.text();
  assertEquals(shown.status, 200);
  assertStringIncludes(issueHtml, issue.subject);
  assertStringIncludes(issueHtml, issue.status);
  // The wiki's start page links each page by its topic.
  const wiki = await gateway.request(instance.origin, `/projects/${project.identifier}/wiki`);
  assertEquals(wiki.status, 200);
  const wikiHtml = await wiki.text();
  assertStringIncludes(wikiHtml, "Roadmap");
  assertStringIncludes(wikiHtml, "Release notes");

  await assertStateNotRouted(app);

  const seeded = await state<StateHash>("/hash");
  await state("/mark", { method: "POST" });

  // The assignee logs time on the issue through the REST API, with the key the seed gave them.
  const [assignee] = await state<Row[]>(`/tables/users?login=${issue.assignee}&limit=1`);
  const [token] = await state<Row[]>(`/tables/tokens?action=api&user_id=${assignee?.id}&limit=1`);
  const [activity] = await state<Row[]>("/tables/enumerations?type=TimeEntryActivity&limit=1");
  assert(token !== undefined && activity !== undefined, "the seed gave the assignee no API key");
  // The state API shows the key only as a digest (kit/state_secrets.ts): the
  // assignee signs in with the password the seed gave every user instead.
  assertMatch(String(token.value), new RegExp(`^${DIGEST_PREFIX}[0-9a-f]{32}$`));
  const comments = `Time from the Redmine test ${crypto.randomUUID().slice(0, 8)}`;
  const logged = await gateway.request(instance.origin, "/time_entries.json", {
    method: "POST",
    headers: {
      "content-type": "application/json",
      authorization: `Basic ${btoa(`${issue.assignee}:${USER_PASSWORD}`)}`,
    },
    body: JSON.stringify({
      time_entry: { issue_id: issue.id, hours: 1.5, activity_id: activity.id, comments },
    }),
  });
  const answer = await logged.text();
  assertEquals(logged.status, 201, answer);

  const diff = await state<StateDiff>("/diff");
  // A first sign-in with a password makes the user's preferences row: Redmine's by-product.
  const preferences = diff.tables.user_preferences?.added ?? [];
  assert(preferences.every((row) => row.user_id === assignee?.id), JSON.stringify(preferences));
  assertEquals(
    diffRows(diff).filter((row) => row !== "user_preferences added"),
    ["time_entries added"],
    JSON.stringify(diff).slice(0, 2000),
  );
  const [entry] = diff.tables.time_entries?.added ?? [];
  assertEquals(entry?.issue_id, issue.id);
  assertEquals(entry?.user_id, assignee?.id);
  assertEquals(entry?.comments, comments);
  const [typed] = (await state<{ result: IssueSummary[] }>(
    `/query/issues?project=${project.identifier}&status=New&limit=2000`,
  )).result.filter((candidate) => candidate.id === issue.id);
  assertEquals(typed?.spent_hours, issue.spent_hours + 1.5);
  await assertResetRestores(app, seeded);
}

testEveryBackend(APP, {
  name: "Redmine",
  does: "serves its seeded projects, reports its MariaDB state, and resets to the seeded hash",
  check: checks,
});
