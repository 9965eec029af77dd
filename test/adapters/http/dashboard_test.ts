// The dashboard in real Chromium, driven through the engine itself.
import { assert, assertEquals, assertStringIncludes } from "@std/assert";
import { Env } from "../../../mod.ts";
import { startServer } from "../../../adapters/http/server.ts";
import { WebServClient } from "../../../adapters/client/mod.ts";

/** Observes until `check` holds, for at most `tries` observations. */
async function observeUntil(env: Env, check: (text: string) => boolean, tries = 100) {
  let text = "";
  for (let i = 0; i < tries; i++) {
    text = (await env.observe()).text;
    if (check(text)) return text;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`The dashboard never showed what was expected:\n${text}`);
}

Deno.test("the dashboard lists sessions and updates live after a step", async () => {
  const runDir = await Deno.makeTempDir();
  await using server = await startServer({ port: 0, runDir });
  const client = new WebServClient(server.url);
  const session = await client.createSession({ task: "demo/add-note/1" });
  await using env = await Env.create(server.browser!, { startUrl: `${server.url}/` });
  const listed = await observeUntil(env, (text) => text.includes(session.id));
  assertStringIncludes(listed, "demo/add-note/1");

  await client.step(session.id, { action: "click", id: 999 });
  const updated = await observeUntil(env, (text) => text.includes("action_error"));
  assertStringIncludes(updated, '{"action":"click","id":999}');

  const other = await client.createSession({ site: "demo" });
  await observeUntil(env, (text) => text.includes(other.id));
  await client.close(other.id);
  await observeUntil(env, (text) => !text.includes(other.id));

  // The session's page shows its trajectory step by step.
  await server.trajectories!.flush();
  const page = await Env.create(server.browser!, {
    startUrl: `${server.url}/dashboard/sessions/${session.id}`,
  });
  const trajectory = (await page.observe()).text;
  await page.close();
  assertStringIncludes(trajectory, "step 1");
  assertStringIncludes(trajectory, "action_error");
  assert(trajectory.includes("Last observation"), trajectory);
  await Deno.remove(runDir, { recursive: true });
});

Deno.test("the dashboard's thumbnails load in Chromium and follow the session's steps", async () => {
  await using server = await startServer({ port: 0 });
  const client = new WebServClient(server.url);
  const session = await client.createSession({ task: "demo/add-note/1" });
  await using env = await Env.create(server.browser!, { startUrl: `${server.url}/` });
  const width =
    `(() => { const img = document.querySelector('[data-session="${session.id}"] img');` +
    ` return img && img.complete ? img.naturalWidth : 0; })()`;
  // The live cards sit below the run's figures: scrolled to, as a user does (off screen, a
  // card fetches no screenshot; see below).
  await until(
    env,
    `(() => { const card = document.querySelector('[data-session="${session.id}"]');` +
      ` card?.scrollIntoView(); return card !== null; })()`,
    true,
  );
  let loaded = 0;
  for (let i = 0; i < 100 && loaded === 0; i++) {
    loaded = await env.evaluate(width) as number;
    if (loaded === 0) await new Promise((r) => setTimeout(r, 100));
  }
  assert(loaded > 0, "the thumbnail never loaded");
  // A step brings a new picture: the img's source changes.
  const source = () =>
    env.evaluate(`document.querySelector('[data-session="${session.id}"] img').src`);
  const before = await source();
  await client.step(session.id, { action: "click", id: 999 });
  let after = before;
  for (let i = 0; i < 100 && after === before; i++) {
    after = await source();
    if (after === before) await new Promise((r) => setTimeout(r, 100));
  }
  assert(after !== before, "the thumbnail did not follow the step");
  assert(await env.evaluate(width) as number > 0);

  // A card off screen does not fetch its screenshot (each one takes its turn
  // among the session's operations); it does once scrolled into view.
  const fetched = () =>
    env.evaluate(
      `performance.getEntriesByType("resource").filter((e) => e.name.includes("/screenshot")).length`,
    ) as Promise<number>;
  await env.evaluate(
    `document.getElementById("sessions").style.marginTop = "20000px"; window.scrollTo(0, 0)`,
  );
  await until(env, `document.querySelector('[data-session="${session.id}"]').dataset.visible`, "");
  const count = await fetched();
  await client.step(session.id, { action: "click", id: 998 });
  await until(
    env,
    `document.querySelectorAll('[data-session="${session.id}"] .history li').length`,
    2,
  );
  assertEquals(await env.evaluate(`shots.get("${session.id}").stale`), true);
  assertEquals(await fetched(), count);
  await env.evaluate(`document.querySelector('[data-session="${session.id}"]').scrollIntoView()`);
  await until(
    env,
    `performance.getEntriesByType("resource")` +
      `.filter((e) => e.name.includes("/screenshot")).length > ${count}`,
    true,
  );
});

/** Evaluates until the value is `expected`, for at most 10 s. */
async function until(env: Env, expression: string, expected: unknown): Promise<void> {
  let value: unknown;
  for (let i = 0; i < 100; i++) {
    value = await env.evaluate(expression);
    if (value === expected) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${expression} stayed ${JSON.stringify(value)}, not ${JSON.stringify(expected)}`);
}
