// What an attacker found, closed: a stop answer of many thousand letters on a
// number task is refused by the answer cap (reward 0, the reason says why)
// while the server keeps answering /health; listing a page of test tasks
// seeds no database; a seed out of range is a 400 wherever it enters.
import { assert, assertEquals, assertStringIncludes } from "@std/assert";
import { startServer } from "../../../adapters/http/server.ts";
import { defaultCatalog } from "../../../adapters/http/catalog.ts";
import { WebServClient } from "../../../adapters/client/mod.ts";
import { type SiteModule, SITES } from "../../../fixtures/sites/mod.ts";
import { MAX_ANSWER_CHARS } from "../../../fixtures/sites/kit/mod.ts";
import { within } from "../../_util/wait.ts";

async function post(url: string, body: unknown): Promise<Response> {
  return await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
}

Deno.test("a stop answer past the cap on a number task scores 0 with the reason, and /health answers meanwhile", async () => {
  await using server = await startServer({ port: 0 });
  const client = new WebServClient(server.url);
  for (const answer of ["1".repeat(100_000), "1 ".repeat(30_000)]) {
    const created = await client.createSession({ task: "forum/comment-count/3" });
    let ticks = 0;
    const ticker = setInterval(() => ticks++, 5);
    let healthy = 0;
    let settled = false;
    const stop = client.step(created.id, { action: "stop", answer }).finally(() => settled = true);
    try {
      // /health, asked again and again while the step runs, keeps answering.
      const probes = (async () => {
        do {
          if ((await client.health()).max > 0) healthy++;
        } while (!settled);
      })();
      const step = await within(stop, { message: "the stop step ends", timeoutMs: 60_000 });
      await within(probes, { message: "the /health probes end", timeoutMs: 60_000 });
      assertEquals(step.status, "ok");
      assertEquals(step.done, true);
      assertEquals(step.reward, 0);
      assertStringIncludes(
        step.info.verdict?.reason ?? "",
        `longer than ${MAX_ANSWER_CHARS} characters`,
      );
    } finally {
      clearInterval(ticker);
    }
    assert(healthy >= 1 && ticks >= 1, `health ${healthy}, ticks ${ticks}`);
    await client.close(created.id);
  }
});

Deno.test("GET /v1/tasks lists 100 test tasks at a new offset without seeding a database", async () => {
  let seeded = 0;
  const counting: SiteModule[] = Object.values(SITES).map((site) => ({
    ...site,
    seed(...args: Parameters<SiteModule["seed"]>) {
      seeded++;
      return site.seed(...args);
    },
  }));
  const catalog = defaultCatalog(counting);
  await using server = await startServer({ port: 0, catalog });
  for (const offset of [0, 987_654, 2 ** 33]) {
    const response = await fetch(`${server.url}/v1/tasks?split=test&limit=100&offset=${offset}`);
    assertEquals(response.status, 200);
    const page = await response.json() as {
      tasks: { id: string; seed: number; split: string; difficulty?: string; kind?: string }[];
    };
    assertEquals(page.tasks.length, 100);
    assert(page.tasks.every((t) => t.split === "test" && t.seed >= 1000 && t.difficulty && t.kind));
  }
  assertEquals(seeded, 0, "listing seeded a database");
});

Deno.test("a seed out of range is refused with 400 by sessions, groups and proposals", async () => {
  await using server = await startServer({ port: 0 });
  const refusals: [string, unknown][] = [
    ["/v1/sessions", { task: "forum/comment-count/2147483648" }],
    ["/v1/sessions", { task: `forum/comment-count/1${"0".repeat(300)}` }],
    ["/v1/sessions", { site: "forum", template: "comment-count", seed: 1e300 }],
    ["/v1/sessions", { site: "forum", template: "comment-count", seed: 1.5 }],
    ["/v1/sessions", { site: "forum", template: "comment-count", seed: -1 }],
    ["/v1/groups", { task: "forum/comment-count/2147483648", n: 2 }],
    ["/v1/groups", { site: "forum", template: "comment-count", seed: 1e300, n: 2 }],
    ["/v1/tasks/proposals", {
      site: "forum",
      seed: 1e300,
      instruction: "How many forums are there?",
      read: { table: "forums", count: true },
      op: "number",
    }],
  ];
  for (const [path, body] of refusals) {
    const response = await post(`${server.url}${path}`, body);
    const refusal = await response.json() as { code: string; message: string };
    assertEquals(response.status, 400, `${path} ${JSON.stringify(body)}: ${refusal.message}`);
    assert(typeof refusal.code === "string" && refusal.code.length > 0);
  }
  assertEquals(server.sessions.live, 0);
});
