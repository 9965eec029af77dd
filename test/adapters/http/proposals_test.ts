// Task proposals through the server: POST /v1/tasks/proposals accepts a proposal (201, the
// task without its truth, unproven) and lists it; a bad one gets 422 with the reason, a body
// that is not JSON 400.
import { assertEquals, assertStringIncludes } from "@std/assert";
import { startServer } from "../../../adapters/http/server.ts";
import { seededDatabase, siteByName } from "../../../fixtures/sites/mod.ts";

Deno.test("POST /v1/tasks/proposals accepts a sound proposal, lists it, and refuses a bad one with 422", async () => {
  await using server = await startServer({ port: 0 });
  const db = seededDatabase(siteByName("forum"), 4);
  const forum = db.prepare("SELECT id, slug FROM forums ORDER BY id LIMIT 1").get()!;
  const proposal = {
    site: "forum",
    seed: 4,
    instruction: `How many members does the forum f/${forum["slug"]} have?`,
    read: { table: "subscriptions", where: { forum_id: Number(forum["id"]) }, count: true },
    op: "number",
  };
  const post = (body: string) =>
    fetch(`${server.url}/v1/tasks/proposals`, {
      method: "POST",
      body,
      headers: { "content-type": "application/json" },
    });
  const accepted = await post(JSON.stringify(proposal));
  assertEquals(accepted.status, 201);
  const task = await accepted.json();
  assertEquals(task.proven, false);
  assertEquals(task.op, "number");
  assertEquals("expected" in task || "evaluator" in task, false, "no truth is sent back");
  const listed = await (await fetch(`${server.url}/v1/tasks/proposals?site=forum`)).json();
  assertEquals(listed.proposals.some((p: { id: string }) => p.id === task.id), true);

  const refused = await post(JSON.stringify({ ...proposal, op: "regex" }));
  assertEquals(refused.status, 422);
  const reason = await refused.json();
  assertEquals(reason.code, "bad-proposal");
  assertStringIncludes(reason.message, "op must be one of");
  const notJson = await post("{");
  assertEquals(notJson.status, 400);
  await notJson.body?.cancel();
});
