// A hostile policy against the rollout server (DESIGN.md, "A hostile policy
// is the normal case"): a deeply nested action never loses a finished
// episode nor stops the dashboard's stream; bodies are JSON, bounded in size
// and depth; only the parsed action is stored.
import { assert, assertEquals, assertStringIncludes } from "@std/assert";
import { startServer } from "../../../adapters/http/server.ts";
import { WebServClient } from "../../../adapters/client/mod.ts";
import { readTrajectory, sseStream } from "./_hostile.ts";

/** `{"action":"stop","answer":"x","extra":[[[…]]]}`, `depth` arrays deep. */
function deepStop(depth: number): string {
  return `{"action":"stop","answer":"x","extra":${"[".repeat(depth)}${"]".repeat(depth)}}`;
}

function nested(depth: number): unknown {
  let value: unknown = 0;
  for (let i = 0; i < depth; i++) value = [value];
  return value;
}

Deno.test("a 100k-deep action over HTTP is refused at the body (400 too-deep); the episode goes on to its reward", async () => {
  const runDir = await Deno.makeTempDir();
  await using server = await startServer({ port: 0, runDir });
  const client = new WebServClient(server.url);
  const created = await client.createSession({ task: "demo/add-note/1", max_steps: 1 });
  const deep = await fetch(`${server.url}/v1/sessions/${created.id}/step`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: `{"action":${deepStop(100_000)}}`,
  });
  assertEquals(deep.status, 400);
  const refusal = await deep.json();
  assertEquals(refusal.code, "too-deep");
  assertStringIncludes(refusal.message, "nested");
  // The refused body took no step: the last step is still the agent's.
  const last = await client.step(created.id, { action: "stop", answer: "x" });
  assertEquals([last.status, last.done, last.info.step], ["ok", true, 1]);
  assertEquals(typeof last.reward, "number");
  await server.trajectories!.flush();
  const steps = (await readTrajectory(runDir, created.id)).filter((e) => e.type === "step");
  assertEquals(steps.map((s) => s.action), [{ action: "stop", answer: "x" }]);
  await server.close();
  await Deno.remove(runDir, { recursive: true });
});

Deno.test("a 100k-deep action that reaches a session on its last step keeps its result, trajectory and the dashboard's stream", async () => {
  const runDir = await Deno.makeTempDir();
  await using server = await startServer({ port: 0, runDir });
  const client = new WebServClient(server.url);
  const created = await client.createSession({ task: "demo/add-note/1", max_steps: 1 });
  // Past the HTTP parser (as a transport of our own could deliver it): the step still answers.
  const action = { action: "stop", answer: "x", extra: nested(100_000) };
  const result = await server.sessions.step(created.id, { action });
  assertEquals(result.status, "action_error");
  assertEquals(result.info.error?.code, "invalid-action");
  assertStringIncludes(result.info.error!.message, '"extra"');
  assertEquals([result.truncated, typeof result.reward], [true, "number"]);
  assert(result.info.verdict, "the last step is verified");
  assertEquals(server.sessions.state(created.id).rewards, [result.reward!]);

  await server.trajectories!.flush();
  const steps = (await readTrajectory(runDir, created.id)).filter((e) => e.type === "step");
  assertEquals(steps.length, 1, "the step is recorded");
  assertEquals(steps[0]!.status, "action_error");
  const stored = steps[0]!.action as { invalid?: string };
  assertEquals(typeof stored.invalid, "string", "an invalid action is stored as a bounded preview");
  assert(stored.invalid!.length <= 1000, `preview of ${stored.invalid!.length} characters`);

  // A new stream's snapshot holds the session, and later events still arrive.
  await using stream = await sseStream(`${server.url}/dashboard/events`);
  await stream.until(created.id, "the snapshot holds the session");
  const later = await client.createSession({ site: "demo" });
  await stream.until(later.id, "a later session's event arrives");
  await server.close();
  await Deno.remove(runDir, { recursive: true });
});

Deno.test("an action with an unknown field is invalid-action, stored as a preview, and the env goes on", async () => {
  const runDir = await Deno.makeTempDir();
  await using server = await startServer({ port: 0, runDir });
  const client = new WebServClient(server.url);
  const created = await client.createSession({ site: "demo" });
  const response = await fetch(`${server.url}/v1/sessions/${created.id}/step`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ action: { action: "reload", bogus: { x: 1 } } }),
  });
  assertEquals(response.status, 200);
  const refused = await response.json();
  assertEquals([refused.status, refused.info.error.code], ["action_error", "invalid-action"]);
  assertStringIncludes(refused.info.error.message, 'unknown field "bogus"');
  const next = await client.step(created.id, { action: "reload" });
  assertEquals(next.status, "ok");
  await server.trajectories!.flush();
  const actions = (await readTrajectory(runDir, created.id))
    .filter((e) => e.type === "step").map((e) => e.action);
  assertEquals(actions, [{ invalid: '{"action":"reload","bogus":{"x":1}}' }, { action: "reload" }]);
  await server.close();
  await Deno.remove(runDir, { recursive: true });
});

Deno.test("every body route takes JSON only (415), bounded in size (413) and depth (400 too-deep)", async () => {
  await using server = await startServer({ port: 0, maxSessions: 2 });
  const client = new WebServClient(server.url);
  const created = await client.createSession({ site: "demo" });
  const routes = [
    "/v1/sessions",
    `/v1/sessions/${created.id}/step`,
    `/v1/sessions/${created.id}/reset`,
    `/v1/sessions/${created.id}/verify`,
    "/v1/groups",
    "/v1/batch/step",
    "/v1/tasks/proposals",
    "/reset",
    "/step",
    "/mcp",
    "/create",
    "/webserv/call",
  ];
  const deepBody = JSON.stringify({ action: nested(200) });
  for (const route of routes) {
    const plain = await fetch(`${server.url}${route}`, {
      method: "POST",
      headers: { "content-type": "text/plain" },
      body: "{}",
    });
    assertEquals(plain.status, 415, route);
    const body = await plain.json();
    assertEquals(body.code, "unsupported-media-type", route);
    assertStringIncludes(body.message, "application/json", route);

    const huge = await fetch(`${server.url}${route}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ text: "y".repeat(2 << 20) }),
    });
    assertEquals(huge.status, 413, route);
    assertEquals((await huge.json()).code, "too-large", route);

    const deep = await fetch(`${server.url}${route}`, {
      method: "POST",
      headers: { "content-type": "application/json; charset=utf-8" },
      body: deepBody,
    });
    assertEquals(deep.status, 400, route);
    assertEquals((await deep.json()).code, "too-deep", route);
  }
  // An empty body passes whatever its label (aiohttp sends "application/octet-stream").
  const bare = await fetch(`${server.url}/v1/sessions/${created.id}/verify`, {
    method: "POST",
    headers: { "content-type": "application/octet-stream", "content-length": "0" },
  });
  assertEquals(bare.status, 409, "no task to verify: the route ran");
  await bare.body?.cancel();
  // A body streamed without a length is bounded too.
  const chunk = new TextEncoder().encode(`"${"z".repeat(1 << 16)}`);
  let sent = 0;
  const streamed = await fetch(`${server.url}/v1/sessions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent++ < 40) controller.enqueue(chunk);
        else controller.close();
      },
    }),
  });
  assertEquals(streamed.status, 413);
  await streamed.body?.cancel();
  // Still healthy, and the session still steps.
  assertEquals((await client.step(created.id, { action: "reload" })).status, "ok");
});
