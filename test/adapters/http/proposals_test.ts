// Task proposals through the server: POST /v1/tasks/proposals accepts a proposal (201, the
// task without its truth, unproven) and lists it; a bad one gets 422 with the reason, a body
// that is not JSON 400. An accepted proposal runs as a session's task by its id.
import { assertEquals, assertStringIncludes } from "@std/assert";
import { WebServClient } from "../../../adapters/client/mod.ts";
import { startServer } from "../../../adapters/http/server.ts";
import { siteByName } from "../../../fixtures/sites/mod.ts";
import { seededDatabase } from "../../../fixtures/sites/kit/mod.ts";

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

Deno.test("an accepted proposal opens as a session by its task id: the right answer earns 1, a wrong one 0, an unknown proposal 404", async () => {
  await using server = await startServer({ port: 0 });
  const client = new WebServClient(server.url);
  const db = seededDatabase(siteByName("forum"), 5);
  const forum = db.prepare("SELECT id, slug FROM forums ORDER BY id LIMIT 1 OFFSET 2").get()!;
  const members = Number(
    db.prepare("SELECT COUNT(*) AS n FROM subscriptions WHERE forum_id = ?").get(
      forum["id"]!,
    )!["n"],
  );
  const accepted = await fetch(`${server.url}/v1/tasks/proposals`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      site: "forum",
      seed: 5,
      instruction: `How many members does the forum f/${forum["slug"]} have?`,
      read: { table: "subscriptions", where: { forum_id: Number(forum["id"]) }, count: true },
      op: "number",
    }),
  });
  assertEquals(accepted.status, 201);
  const { id } = await accepted.json();

  const right = await client.createSession({ task: id });
  assertEquals(right.task?.id, id);
  assertEquals(right.task?.proven, false, "an accepted proposal is marked unproven");
  assertEquals(right.task?.kind, "information");
  const won = await client.step(right.id, {
    action: "stop",
    answer: `The forum has ${members} members.`,
  });
  assertEquals([won.done, won.reward], [true, 1]);

  const wrong = await client.createSession({ task: id });
  const lost = await client.step(wrong.id, { action: "stop", answer: String(members + 1) });
  assertEquals([lost.done, lost.reward], [true, 0]);
  await client.close(right.id);
  await client.close(wrong.id);

  const unknown = await fetch(`${server.url}/v1/sessions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ task: "forum/proposal-0123456789ab/5" }),
  });
  assertEquals(unknown.status, 404);
  const error = await unknown.json();
  assertEquals(error.code, "unknown-proposal");
  assertStringIncludes(error.message, "GET /v1/tasks/proposals");
});

Deno.test("POST /v1/tasks/proposals refuses a client past its rate with 429 and Retry-After", async () => {
  await using server = await startServer({ port: 0, proposalsPerMinute: 2 });
  const post = () =>
    fetch(`${server.url}/v1/tasks/proposals`, {
      method: "POST",
      body: JSON.stringify({ site: "forum", seed: 1, op: "regex" }),
      headers: { "content-type": "application/json" },
    });
  for (let i = 0; i < 2; i++) {
    const refused = await post();
    assertEquals(refused.status, 422, "within the rate, a proposal is weighed");
    await refused.body?.cancel();
  }
  const limited = await post();
  assertEquals(limited.status, 429);
  assertEquals((await limited.json()).code, "proposal-rate");
  const retry = Number(limited.headers.get("retry-after"));
  assertEquals(retry >= 1 && retry <= 60, true, `Retry-After ${retry}`);
});

Deno.test("POST /v1/tasks/proposals counts every proposal of the server: made-up bearer tokens do not buy more", async () => {
  // An open server authenticates no token, so a header per request would be a client per request.
  await using server = await startServer({ port: 0, proposalsPerMinute: 2 });
  const post = (token: string) =>
    fetch(`${server.url}/v1/tasks/proposals`, {
      method: "POST",
      body: JSON.stringify({ site: "forum", seed: 1, op: "regex" }),
      headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
    });
  for (const token of ["a", "b"]) {
    const weighed = await post(token);
    assertEquals(weighed.status, 422, "within the rate, a proposal is weighed");
    await weighed.body?.cancel();
  }
  const limited = await post("c");
  assertEquals(limited.status, 429, "a third token is the same proposer");
  assertEquals((await limited.json()).code, "proposal-rate");
});
