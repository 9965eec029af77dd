// The catalog over the recreated sites: tasks listed a page at a time,
// sessions from a task id or a site with template and seed, each on its own
// instance with the task bound to that instance's state; the verifier's
// inputs recorded at the end of an episode and re-verified by the export.
import { assert, assertEquals, assertNotEquals } from "@std/assert";
import type { Env, EnvObservation } from "../../../mod.ts";
import { startServer } from "../../../adapters/http/server.ts";
import { defaultCatalog } from "../../../adapters/http/catalog.ts";
import { exportRun } from "../../../adapters/http/export.ts";
import { WebServClient, WebServError } from "../../../adapters/client/mod.ts";
import { generateTask, siteByName } from "../../../fixtures/sites/mod.ts";

/**
 * The part of `Env` the site kit's solvers use, over the server's session
 * API: a solver drives a real session as an agent would.
 */
function sessionAsEnv(client: WebServClient, id: string): Env {
  const observe = async () => await client.observe(id, "json") as unknown as EnvObservation;
  return {
    observe,
    async step(action: unknown) {
      const step = await client.step(id, action as Parameters<WebServClient["step"]>[1]);
      if (step.status !== "ok") throw new Error(`Step failed: ${JSON.stringify(step.info)}`);
      return { observation: step.observation };
    },
  } as unknown as Env;
}

Deno.test("defaultCatalog() lists the recreated sites' tasks a page at a time, by site, template and split", async () => {
  const catalog = defaultCatalog();
  const first = catalog.list({ site: "forum", limit: 4 });
  assertEquals(first.tasks.length, 4);
  assert(first.tasks.every((t) => t.site === "forum" && t.split === "train" && t.seed === 0));
  const next = catalog.list({ site: "forum", limit: 4, offset: first.next_offset! });
  assertEquals(next.tasks.length, 4);
  assertNotEquals(next.tasks[0]!.id, first.tasks[0]!.id);
  const both = catalog.list({ site: "forum", limit: 8 });
  assertEquals(both.tasks.map((t) => t.id), [...first.tasks, ...next.tasks].map((t) => t.id));

  const test = catalog.list({ site: "shop", template: "add-to-cart", split: "test", limit: 3 });
  assertEquals(test.tasks.map((t) => t.id), [
    "shop/add-to-cart/1000",
    "shop/add-to-cart/1001",
    "shop/add-to-cart/1002",
  ]);
  assert(test.tasks.every((t) => t.split === "test" && t.kind === "state"));
  // The last training seed ends the train split's pages.
  const last = catalog.list({ site: "demo", offset: 998, limit: 5 });
  assertEquals(last.tasks.map((t) => t.seed), [998, 999]);
  assertEquals(last.next_offset, null);
  // A listed task is described from its template (nothing seeded): what its
  // id generates, but for the instruction, which a session on it shows.
  const listed = catalog.list({ site: "admin", limit: 1 }).tasks[0]!;
  const generated = generateTask(siteByName("admin"), listed.template, listed.seed);
  assertEquals(listed.instruction, undefined);
  assertEquals(
    [listed.id, listed.difficulty, listed.seed],
    [generated.id, generated.difficulty, generated.seed],
  );
  const placed = await catalog.resolve({ task: listed.id });
  assertEquals(placed.task?.instruction, generated.instruction);
});

Deno.test("defaultCatalog() counts a split and names its tasks' ids as list() would, without making them", () => {
  const catalog = defaultCatalog();
  const templates = catalog.ids({ limit: 500 }).filter((id) => id.endsWith("/0")).length;
  assert(templates > 3);
  assertEquals(catalog.count({ split: "train" }), templates * 1000);
  assertEquals(catalog.count({ site: "demo", split: "test" }), 2 ** 31 - 1000);
  for (const query of [{ offset: templates - 2, limit: 5 }, { split: "test" as const, limit: 3 }]) {
    assertEquals(catalog.ids(query), catalog.list(query).tasks.map((t) => t.id));
  }
  const size = catalog.count({ site: "demo" });
  assertEquals(catalog.ids({ site: "demo", offset: size - 1, limit: 5 }), ["demo/add-note/999"]);
});

Deno.test("GET /v1/tasks filters and pages, and refuses an unknown site or template with 404", async () => {
  await using server = await startServer({ port: 0 });
  const client = new WebServClient(server.url);
  const page = await client.taskPage({ site: "shop", template: "add-to-cart", limit: 2 });
  assertEquals(page.tasks.map((t) => t.id), ["shop/add-to-cart/0", "shop/add-to-cart/1"]);
  assertEquals(page.next_offset, 2);
  for (const query of [{ site: "nope" }, { site: "shop", template: "fly" }]) {
    const refused = await client.tasks(query).catch((e) => e);
    assert(refused instanceof WebServError && refused.status === 404, String(refused));
  }
  const bad = await fetch(`${server.url}/v1/tasks?limit=0`);
  assertEquals(bad.status, 400);
  await bad.body?.cancel();
});

Deno.test("createSession() binds a site's task to the session's own instance, and the export re-verifies its recorded end", async () => {
  const runDir = await Deno.makeTempDir();
  await using server = await startServer({ port: 0, runDir });
  // Generous: a loaded machine stretches the browser's launch and the seeding, not the behaviour.
  const client = new WebServClient(server.url, { timeoutMs: 600_000 });
  const id = "forum/join-forum/3";
  const task = generateTask(siteByName("forum"), "join-forum", 3);
  const byId = await client.createSession({ task: id, observation: "json" });
  const byParts = await client.createSession({ site: "forum", template: "join-forum", seed: 3 });
  assertEquals(byParts.task?.id, id);
  assertEquals(byId.task?.instruction, task.instruction);
  assertNotEquals(new URL(byId.observation.url).origin, new URL(byParts.observation.url).origin);

  await siteByName("forum").templates.find((t) => t.id === "join-forum")!
    .solve(sessionAsEnv(client, byId.id), task);
  const state = await client.state(byId.id);
  assertEquals(state.rewards, [1]);
  // The sibling on the same task did nothing: its own instance is untouched.
  assertEquals((await client.verify(byParts.id)).reward, 0);
  await client.close(byId.id);
  await client.close(byParts.id);
  await server.trajectories!.flush();

  const file = `${runDir}/${byId.id}.jsonl`;
  const lines = (await Deno.readTextFile(file)).trim().split("\n").map((l) => JSON.parse(l));
  const end = lines.find((l) => l.type === "step" && l.done === true);
  assertEquals(end.verdict.reward, 1);
  assertEquals(end.judged.answer, "done");
  assertEquals(new URL(end.judged.url).origin, new URL(byId.observation.url).origin);
  assert(end.judged.diff.tables.subscriptions.added.length === 1, JSON.stringify(end.judged));

  const [episode] = (await exportRun(runDir, { reverify: true })).filter((e) =>
    e.session === byId.id
  );
  assertEquals(episode!.reverified?.reward, 1);
  assertEquals(episode!.reverified?.recorded_reward, 1);
  assertEquals(episode!.final_reward, 1);

  // A record whose diff was tampered with no longer earns the reward.
  end.judged.diff.tables.subscriptions.added = [];
  await Deno.writeTextFile(file, lines.map((l) => JSON.stringify(l)).join("\n") + "\n");
  const [tampered] = (await exportRun(runDir, { reverify: true })).filter((e) =>
    e.session === byId.id
  );
  assertEquals(tampered!.reverified?.reward, 0);
  assertEquals(tampered!.reverified?.recorded_reward, 1);
  assertEquals(tampered!.final_reward, 0);
  // Without --reverify the recorded reward stands.
  const [plain] = (await exportRun(runDir)).filter((e) => e.session === byId.id);
  assertEquals(plain!.final_reward, 1);
  await Deno.remove(runDir, { recursive: true });
});

Deno.test("exportRun() re-verifies an information task from its recorded answer", async () => {
  const runDir = await Deno.makeTempDir();
  await using server = await startServer({ port: 0, runDir });
  const client = new WebServClient(server.url);
  const task = generateTask(siteByName("forum"), "bigger-forum", 1);
  const created = await client.createSession({ task: task.id });
  await siteByName("forum").templates.find((t) => t.id === "bigger-forum")!
    .solve(sessionAsEnv(client, created.id), task);
  assertEquals((await client.state(created.id)).rewards, [1]);
  await client.close(created.id);
  await server.trajectories!.flush();
  const file = `${runDir}/${created.id}.jsonl`;
  const [episode] = await exportRun(runDir, { reverify: true });
  assertEquals(episode!.reverified?.reward, 1);
  const text = await Deno.readTextFile(file);
  const answer = task.evaluator.kind === "answer" ? String(task.evaluator.expected) : "";
  assert(text.includes(`"answer":"${answer}"`), text);
  await Deno.writeTextFile(file, text.replaceAll(`"answer":"${answer}"`, `"answer":"nowhere"`));
  const [tampered] = await exportRun(runDir, { reverify: true });
  assertEquals(tampered!.reverified?.reward, 0);
  await Deno.remove(runDir, { recursive: true });
});
