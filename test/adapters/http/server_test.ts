// The rollout server against real Chromium and the fixture backend: the
// session API, statuses and rewards, idempotent steps, groups and batches,
// trajectories and their export, the OpenAPI document and the docs page.
import {
  assert,
  assertEquals,
  assertMatch,
  assertRejects,
  assertStringIncludes,
} from "@std/assert";
import { startServer } from "../../../adapters/http/server.ts";
import { exportRun } from "../../../adapters/http/export.ts";
import { waitFor } from "../../_util/wait.ts";
import { WebServClient, WebServError } from "../../../adapters/client/mod.ts";
import type { Action } from "../../../adapters/client/types.ts";
import { ACTION_SCHEMA } from "../../../engine/act/action.ts";

/** The id on the line of the observation that matches `pattern`. */
function idOf(text: string, pattern: RegExp): number {
  const line = text.split("\n").find((l) => pattern.test(l));
  const id = line?.match(/\[(\d+)\]/)?.[1];
  if (!id) throw new Error(`No element matches ${pattern} in:\n${text}`);
  return Number(id);
}

/** Adds a note through the page, as an agent would. */
async function addNote(client: WebServClient, id: string, text: string, observation: string) {
  const typed = await client.step(id, {
    action: "type",
    id: idOf(observation, /textbox "?New note/),
    text,
  });
  assertEquals(typed.status, "ok");
  return await client.step(id, {
    action: "click",
    id: idOf(typed.observation!.text, /button "?Add\b/),
  });
}

/** The observation without its first line, the task's instruction (which names the note). */
function pageOf(text: string): string {
  return text.split("\n").filter((line) => !line.startsWith("task:")).join("\n");
}

async function post(url: string, body: unknown): Promise<Response> {
  return await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
}

Deno.test("startServer() runs a task episode to the verifier's reward when the agent solves it", async () => {
  const runDir = await Deno.makeTempDir();
  await using server = await startServer({ port: 0, runDir });
  const client = new WebServClient(server.url);
  const tasks = await client.tasks({ site: "demo", limit: 5 });
  const task = tasks.find((t) => t.id === "demo/add-note/2")!;
  const created = await client.createSession({ task: task.id });
  assertEquals(created.task?.instruction, task.instruction);
  assertMatch(created.observation.text, /textbox "?New note/);
  assert(Date.parse(created.lease.expires_at) > Date.now());

  const clicked = await addNote(client, created.id, "buy coffee 2", created.observation.text);
  assertEquals(clicked.status, "ok");
  assertEquals(clicked.reward, 0);
  assertEquals(clicked.done, false);
  assertEquals((await client.verify(created.id)).reward, 1);

  const stopped = await client.step(created.id, { action: "stop", answer: "added" });
  assertEquals(stopped.status, "ok");
  assertEquals(stopped.done, true);
  assertEquals(stopped.reward, 1);
  assertEquals(stopped.info.verdict?.reward, 1);
  const state = await client.state(created.id);
  assertEquals(state.step, 3);
  assertEquals(state.rewards, [1]);

  // Past the end of the episode: a refusal, not a reward.
  const after = await client.step(created.id, { action: "back" }).catch((e) => e);
  assert(after instanceof WebServError && after.status === 409, String(after));

  // A reset starts over: the site back to its seeded state.
  const reset = await client.reset(created.id);
  assert(!pageOf(reset.observation.text).includes("buy coffee 2"), reset.observation.text);
  assertEquals((await client.verify(created.id)).reward, 0);
  assertEquals(await client.close(created.id), true);
  await server.trajectories!.flush();

  const episodes = await exportRun(runDir);
  assertEquals(episodes.length, 2);
  const [first] = episodes;
  assertEquals(first!.task, "demo/add-note/2");
  assertEquals(first!.instruction, task.instruction);
  assertEquals(first!.steps.length, 3);
  assertEquals(first!.final_reward, 1);
  assertEquals(first!.finished, true);
  assertEquals(first!.messages[0]!.role, "user");
  assertStringIncludes(first!.messages[0]!.content, task.instruction!);
  const lines = (await Deno.readTextFile(`${runDir}/${created.id}.jsonl`)).trim().split("\n")
    .map((l) => JSON.parse(l));
  assert(lines.every((l) => l.v === 1 && l.session === created.id));
  assertEquals(lines.map((l) => l.type), ["start", "step", "step", "step", "start", "end"]);
  await Deno.remove(runDir, { recursive: true });
});

Deno.test("step() returns action_error with reward 0 when the agent's action fails, and the episode goes on", async () => {
  await using server = await startServer({ port: 0 });
  const client = new WebServClient(server.url);
  const { id } = await client.createSession({ site: "demo", seed: 1, observation: "json" });
  const unknown = await client.step(id, { action: "click", id: 999 });
  assertEquals(unknown.status, "action_error");
  assertEquals(unknown.reward, 0);
  assertEquals(unknown.info.error?.code, "unknown-id");
  assert(unknown.observation && Array.isArray(unknown.observation.elements));
  // Malformed on purpose: the server validates it and the agent gets action_error.
  const malformed = await client.step(id, { action: "fly", to: "moon" } as unknown as Action);
  assertEquals(malformed.status, "action_error");
  assertEquals(malformed.info.error?.code, "invalid-action");
  const ok = await client.step(id, { action: "reload" });
  assertEquals(ok.status, "ok");
  assertEquals(ok.info.step, 3);
});

Deno.test("step() returns the first result when a request_id is retried", async () => {
  await using server = await startServer({ port: 0 });
  const client = new WebServClient(server.url);
  const created = await client.createSession({ task: "demo/add-note/4" });
  const action: Action = {
    action: "type",
    id: idOf(created.observation.text, /textbox/),
    text: "x",
    mode: "append",
  };
  const [a, b] = await Promise.all([
    client.step(created.id, action, "r-1"),
    client.step(created.id, action, "r-1"),
  ]);
  const c = await client.step(created.id, action, "r-1");
  assertEquals(a, b);
  assertEquals(a, c);
  assertEquals((await client.state(created.id)).step, 1);
  assertStringIncludes(a.observation!.text, 'value="x"');
});

Deno.test("step() runs concurrent steps on one session one at a time", async () => {
  await using server = await startServer({ port: 0 });
  const client = new WebServClient(server.url);
  const created = await client.createSession({ task: "demo/add-note/4" });
  const field = idOf(created.observation.text, /textbox/);
  const results = await Promise.all(
    ["a", "b", "c", "d"].map((text) =>
      client.step(created.id, { action: "type", id: field, text, mode: "append" })
    ),
  );
  assertEquals(results.map((r) => r.status), ["ok", "ok", "ok", "ok"]);
  assertEquals(results.map((r) => r.info.step).sort(), [1, 2, 3, 4]);
  const last = results.find((r) => r.info.step === 4)!;
  assertMatch(last.observation!.text, /value="[abcd]{4}"/);
});

Deno.test("createGroup() gives each sibling its own instance and context", async () => {
  await using server = await startServer({ port: 0 });
  const client = new WebServClient(server.url);
  const group = await client.createGroup({ task: "demo/add-note/5" }, 3);
  assertEquals(group.sessions.length, 3);
  const origins = new Set(group.sessions.map((s) => new URL(s.observation.url).origin));
  assertEquals(origins.size, 3);
  const [first, second] = group.sessions;
  await addNote(client, first!.id, "buy flour 5", first!.observation.text);
  assertEquals((await client.verify(first!.id)).reward, 1);
  // The sibling did nothing, and sees nothing of the first session's work.
  assertEquals((await client.verify(second!.id)).reward, 0);
  const seen = await client.observe(second!.id);
  assert(!pageOf(seen.text).includes("buy flour 5"), seen.text);
  assertEquals((await client.list()).filter((s) => s.group === group.group).length, 3);
});

Deno.test("batchStep() returns per-session results when one of them fails", async () => {
  await using server = await startServer({ port: 0 });
  const client = new WebServClient(server.url);
  const a = await client.createSession({ site: "demo" });
  const b = await client.createSession({ site: "demo" });
  const batch = await client.batchStep([
    { session_id: a.id, action: { action: "reload" } },
    { session_id: "s-nope", action: { action: "reload" } },
    { session_id: b.id, action: { action: "click", id: 12345 } },
  ]);
  assertEquals(batch.results.map((r) => r.session_id), [a.id, "s-nope", b.id]);
  assertEquals(batch.results[0]!.result?.status, "ok");
  assertEquals(batch.results[1]!.error?.code, "not-found");
  assertEquals(batch.results[2]!.result?.status, "action_error");
});

Deno.test("createSession() answers 429 with Retry-After past the cap on live sessions", async () => {
  await using server = await startServer({ port: 0, maxSessions: 2 });
  const client = new WebServClient(server.url);
  const first = await client.createSession({ site: "demo" });
  const second = await client.createSession({ site: "demo" });
  const refused = await client.createSession({ site: "demo" }).catch((e) => e);
  assert(refused instanceof WebServError);
  assertEquals(refused.status, 429);
  assertEquals(refused.code, "capacity");
  assertEquals(refused.retryAfter, 5);
  assertEquals(await client.health(), {
    status: "healthy",
    live: 2,
    max: 2,
    free: 0,
    browser: true,
  });
  await client.close(second.id);
  // A group that fits the cap but not the free room: waiting helps.
  const busy = await client.createGroup({ site: "demo" }, 2).catch((e) => e);
  assertEquals([busy.status, busy.retryAfter], [429, 5]);
  await client.close(first.id);
  await client.createSession({ site: "demo" });
});

Deno.test("createGroup() refuses a group larger than the cap with a 400 that says so, even when idle", async () => {
  await using server = await startServer({ port: 0, maxSessions: 2 });
  const client = new WebServClient(server.url);
  const refused = await client.createGroup({ site: "demo" }, 3).catch((e) => e);
  assert(refused instanceof WebServError);
  assertEquals([refused.status, refused.code, refused.retryAfter], [
    400,
    "group-too-large",
    undefined,
  ]);
  assertStringIncludes(refused.message, "cap is 2");
  assertEquals(server.sessions.live, 0);
});

Deno.test("createSession() honours idle_timeout_s and refuses unknown spec keys", async () => {
  await using server = await startServer({ port: 0 });
  const client = new WebServClient(server.url);
  const created = await client.createSession({ site: "demo", idle_timeout_s: 7 });
  assertEquals(created.lease.idle_timeout_s, 7);
  const unknown = await fetch(`${server.url}/v1/sessions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ site: "demo", idle_timeout: 7 }),
  });
  assertEquals(unknown.status, 400);
  assertStringIncludes((await unknown.json()).message, "idle_timeout");
});

Deno.test("the routes refuse unknown query parameters (400) and wrong methods (405 with Allow)", async () => {
  await using server = await startServer({ port: 0 });
  const query = await fetch(`${server.url}/v1/tasks?limit=2&colour=red`);
  assertEquals(query.status, 400);
  assertStringIncludes((await query.json()).message, '"colour"');
  const ok = await fetch(`${server.url}/v1/tasks?limit=2`);
  assertEquals(ok.status, 200);
  await ok.body?.cancel();
  const wrong = await fetch(`${server.url}/v1/sessions/s-1/step`, { method: "GET" });
  assertEquals([wrong.status, wrong.headers.get("allow")], [405, "POST"]);
  assertEquals((await wrong.json()).code, "method-not-allowed");
  const none = await fetch(`${server.url}/nope`);
  assertEquals(none.status, 404);
  await none.body?.cancel();
});

Deno.test("step() answers expired when the session was reaped for idling", async () => {
  await using server = await startServer({ port: 0, idleTimeoutMs: 200 });
  const client = new WebServClient(server.url);
  const { id } = await client.createSession({ site: "demo" });
  // The reaper runs every second; wait for it to close the idle session.
  await waitFor(async () => (await client.list()).length === 0, {
    message: "the reaper closes the session idle past 200 ms",
    intervalMs: 100,
  });
  const result = await client.step(id, { action: "reload" });
  assertEquals(result.status, "expired");
  assertEquals(result.reward, undefined);
  assertEquals(result.done, true);
  const state = await client.state(id).catch((e) => e);
  assertEquals(state.status, 410);
  const unknown = await client.state("s-never").catch((e) => e);
  assertEquals(unknown.status, 404);
});

Deno.test("createSession() refuses bad specs with 4xx and a JSON error", async () => {
  await using server = await startServer({ port: 0 });
  const cases: [unknown, number, string][] = [
    [{}, 400, "bad-spec"],
    [{ task: "demo/add-note/1", url: "http://example.com" }, 400, "bad-spec"],
    [{ task: "nope" }, 400, "bad-request"], // the task-id pattern of the schema
    [{ task: "nope/add-note/1" }, 404, "unknown-site"],
    [{ site: "demo", template: "fly" }, 404, "unknown-template"],
    [{ site: "demo", seed: -1 }, 400, "bad-request"],
    [{ url: `${server.url}/health` }, 400, "bad-url"],
    [{ url: "file:///etc/passwd" }, 400, "bad-url"],
    ["{not json", 400, "bad-request"],
    [[1, 2], 400, "bad-request"],
  ];
  for (const [body, status, code] of cases) {
    const response = await post(`${server.url}/v1/sessions`, body);
    const json = await response.json();
    assertEquals([response.status, json.code], [status, code], JSON.stringify(body));
    assert(typeof json.message === "string" && json.message.length > 0);
  }
  const huge = await post(`${server.url}/v1/sessions`, { url: "x".repeat(2 << 20) });
  assertEquals(huge.status, 413);
  await huge.body?.cancel();
});

Deno.test("startServer() requires a bearer token off loopback and checks it", async () => {
  await assertRejects(() => startServer({ port: 0, hostname: "0.0.0.0" }), RangeError, "token");
  await using server = await startServer({ port: 0, token: "s3cret" });
  const denied = await fetch(`${server.url}/v1/tasks`);
  assertEquals(denied.status, 401);
  assertEquals((await denied.json()).code, "unauthorized");
  const wrong = await fetch(`${server.url}/v1/tasks`, { headers: { authorization: "Bearer no" } });
  assertEquals(wrong.status, 401);
  await wrong.body?.cancel();
  const health = await fetch(`${server.url}/health`);
  assertEquals(health.status, 200);
  await health.body?.cancel();
  const tasks = await new WebServClient(server.url, { token: "s3cret" }).tasks();
  assert(tasks.length > 0);
});

Deno.test("startServer() serves the OpenAPI document, the docs page, tools and metrics", async () => {
  await using server = await startServer({ port: 0 });
  const doc = await (await fetch(`${server.url}/openapi.json`)).json();
  assertEquals(doc.openapi, "3.1.0");
  for (const path of ["/v1/sessions", "/v1/sessions/{id}/step", "/v1/groups", "/v1/batch/step"]) {
    assert(doc.paths[path], path);
  }
  // The step's action is the engine's one declaration of the action space.
  assertEquals(doc.components.schemas.Action.oneOf, ACTION_SCHEMA.oneOf);
  assertEquals(
    doc.components.schemas.StepRequest.properties.action.$ref,
    "#/components/schemas/Action",
  );
  const docs = await (await fetch(`${server.url}/docs`)).text();
  assertStringIncludes(docs, "POST /v1/sessions/{id}/step");
  assert(!docs.includes("<script"), "the docs page needs no script");
  const client = new WebServClient(server.url);
  const openai = await client.tools("openai");
  const anthropic = await client.tools("anthropic");
  assertEquals(openai.length, anthropic.length);
  const click = anthropic.find((t) => t.name === "click") as {
    input_schema: { required: string[] };
  };
  assert(click.input_schema.required.includes("id"), String(click.input_schema.required));
  const { id } = await client.createSession({ site: "demo" });
  await client.step(id, { action: "reload" });
  await client.step(id, { action: "click", id: 999 });
  const diff = await client.observe(id, "diff");
  assert(diff.diff && Array.isArray(diff.diff.added), JSON.stringify(diff));
  const full = await client.observe(id, "json");
  assert(full.elements && full.elements.length > 0);
  const png = await client.screenshot(id, true);
  assertEquals([...png.slice(1, 4)], [0x50, 0x4e, 0x47]);
  const metrics = await (await fetch(`${server.url}/metrics`)).text();
  assertStringIncludes(metrics, "webserv_live_sessions 1");
  assertStringIncludes(metrics, 'webserv_steps_total{status="ok"} 1');
  assertStringIncludes(metrics, 'webserv_errors_total{code="unknown-id"} 1');
  assertStringIncludes(metrics, "webserv_step_seconds_count 2");
});

Deno.test("createSession() ends a session at its hard lifetime even while it is used", async () => {
  await using server = await startServer({ port: 0, lifetimeMs: 300 });
  const client = new WebServClient(server.url);
  const { id, lease } = await client.createSession({ site: "demo" });
  assert(Date.parse(lease.hard_expires_at) - Date.now() <= 300);
  let status = "ok";
  for (let i = 0; i < 500 && status !== "expired"; i++) {
    status = (await client.step(id, { action: "reload" })).status;
    assert(["ok", "expired"].includes(status), status);
  }
  assertEquals(status, "expired");
  assertEquals((await client.health()).live, 0);
});

Deno.test("createSession() applies the viewport and writes screenshots beside the trajectory when asked", async () => {
  const runDir = await Deno.makeTempDir();
  await using server = await startServer({ port: 0, runDir });
  const client = new WebServClient(server.url);
  const { id } = await client.createSession({
    site: "demo",
    viewport: { width: 640, height: 480 },
    record_screenshots: true,
  });
  const png = await client.screenshot(id);
  const view = new DataView(png.buffer, png.byteOffset);
  assertEquals([view.getUint32(16), view.getUint32(20)], [640, 480]);
  await client.step(id, { action: "reload" });
  await server.trajectories!.flush();
  const events = (await Deno.readTextFile(`${runDir}/${id}.jsonl`)).trim().split("\n")
    .map((line) => JSON.parse(line));
  const step = events.find((e) => e.type === "step");
  assertMatch(step.screenshot, /^screenshots\/.+\.png$/);
  const file = await Deno.readFile(`${runDir}/${step.screenshot}`);
  assertEquals([...file.slice(1, 4)], [0x50, 0x4e, 0x47]);
  await Deno.remove(runDir, { recursive: true });
});

Deno.test("createSession() runs a task's site and template on the seed given beside it", async () => {
  await using server = await startServer({ port: 0 });
  const client = new WebServClient(server.url);
  const created = await client.createSession({ task: "demo/add-note/1", seed: 5 });
  assertEquals(created.task?.id, "demo/add-note/5");
  const reset = await client.reset(created.id, { seed: 6, max_steps: 1 });
  assertEquals(reset.task?.id, "demo/add-note/6");
  const step = await client.step(created.id, { action: "scroll", direction: "down" });
  assertEquals([step.status, step.truncated], ["ok", true]);
  const unknown = await fetch(`${server.url}/v1/sessions/${created.id}/reset`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ sed: 6 }),
  });
  assertEquals(unknown.status, 400);
  await unknown.body?.cancel();
});

Deno.test("reset() to a new task runs that task's own seed, not the session's last", async () => {
  await using server = await startServer({ port: 0 });
  const client = new WebServClient(server.url);
  const created = await client.createSession({ task: "demo/add-note/1", seed: 5 });
  const reset = await client.reset(created.id, { task: "demo/add-note/2" });
  assertEquals(reset.task?.id, "demo/add-note/2");
});
