// POST /v1/sessions/{id}/fork against real Chromium and the fixture backend: an agent types the
// note its task asks for and, before submitting, forks; the typed field, the step count and the
// trajectory prefix are carried, each fork's writes stay its own, and the refusals are typed.
import { assert, assertEquals, assertRejects, assertStringIncludes } from "@std/assert";
import { startServer } from "../../../adapters/http/server.ts";
import { WebServClient, WebServError } from "../../../adapters/client/mod.ts";

/** The id on the line of the observation that matches `pattern`. */
function idOf(text: string, pattern: RegExp): number {
  const line = text.split("\n").find((l) => pattern.test(l));
  const id = line?.match(/\[(\d+)\]/)?.[1];
  if (!id) throw new Error(`No element matches ${pattern} in:\n${text}`);
  return Number(id);
}

/** The observation's line of the note field, which shows what was typed into it. */
function fieldLine(text: string): string {
  return text.split("\n").find((l) => /textbox "?New note/.test(l)) ?? "";
}

async function clickAdd(client: WebServClient, id: string): Promise<void> {
  const text = (await client.observe(id)).text;
  const clicked = await client.step(id, { action: "click", id: idOf(text, /button "?Add\b/) });
  assertEquals(clicked.status, "ok");
}

Deno.test("POST /v1/sessions/{id}/fork: forks carry the typed note and earn by what they do next", async () => {
  const runDir = await Deno.makeTempDir();
  try {
    await using server = await startServer({ port: 0, runDir, maxSessions: 4 });
    const client = new WebServClient(server.url);
    const parent = await client.createSession({ task: "demo/add-note/2" });
    const note = "buy coffee 2";
    const typed = await client.step(parent.id, {
      action: "type",
      id: idOf(parent.observation.text, /textbox "?New note/),
      text: note,
    });
    assertEquals(typed.status, "ok");

    const { sessions: forks } = await client.fork(parent.id, 2);
    assertEquals(forks.length, 2);
    for (const fork of forks) {
      assert(fork.id !== parent.id);
      assertEquals(fork.task?.id, "demo/add-note/2");
      // The unsubmitted field is in the fork's first observation.
      assertStringIncludes(fieldLine(fork.observation.text), note);
      assertEquals((await client.state(fork.id)).step, 1);
    }

    // One fork submits the note: its verdict is 1, and the parent's site never saw the write.
    await clickAdd(client, forks[0]!.id);
    assertEquals((await client.verify(forks[0]!.id)).reward, 1);
    assertEquals((await client.verify(parent.id)).reward, 0);
    // The other undoes the typing and submits something else: 0.
    const other = forks[1]!.id;
    const retyped = await client.step(other, {
      action: "type",
      id: idOf((await client.observe(other)).text, /textbox "?New note/),
      text: "something else",
    });
    assertEquals(retyped.status, "ok");
    await clickAdd(client, other);
    assertEquals((await client.verify(other)).reward, 0);
    // The parent takes its last action and earns its reward.
    await clickAdd(client, parent.id);
    assertEquals((await client.verify(parent.id)).reward, 1);

    // A fork's reset is the task's start.
    const reset = await client.reset(forks[0]!.id);
    assert(!fieldLine(reset.observation.text).includes(note));
    assertEquals((await client.verify(forks[0]!.id)).reward, 0);

    // The trajectory of a fork starts with its parent's episode.
    await server.close();
    const lines = (await Deno.readTextFile(`${runDir}/${other}.jsonl`)).trim().split("\n")
      .map((l) => JSON.parse(l));
    assertEquals(lines[0].type, "start");
    assertEquals(lines[0].forked_from, parent.id);
    assertEquals(lines[1].type, "step");
    assertEquals(lines[1].action.action, "type");
    assertEquals(lines[1].action.text, note);
  } finally {
    await Deno.remove(runDir, { recursive: true });
  }
});

Deno.test("POST /v1/sessions/{id}/fork refuses n out of 1..16 (400), past the free capacity (429), an unknown session (404) and an ended episode (409)", async () => {
  await using server = await startServer({ port: 0, maxSessions: 3 });
  // No retries: a 429 is what this test looks at.
  const client = new WebServClient(server.url, { retries: 0 });
  const parent = await client.createSession({ task: "demo/add-note/1" });
  for (const n of [0, 17, 1.5]) {
    const response = await fetch(`${server.url}/v1/sessions/${parent.id}/fork`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ n }),
    });
    assertEquals(response.status, 400, `n = ${n}`);
    await response.body?.cancel();
  }
  const full = await assertRejects(() => client.fork(parent.id, 3), WebServError);
  assertEquals([full.status, full.code], [429, "capacity"]);
  const unknown = await assertRejects(() => client.fork("s-0000000000000000", 1), WebServError);
  assertEquals(unknown.status, 404);
  // Within the capacity it forks, and the forks count against it.
  const { sessions } = await client.fork(parent.id, 2);
  assertEquals(sessions.length, 2);
  assertEquals((await client.health()).live, 3);
  const again = await assertRejects(() => client.fork(parent.id, 1), WebServError);
  assertEquals(again.status, 429);
  // An episode that ended has nothing left to branch: reset first.
  await client.close(sessions[0]!.id);
  const stopped = await client.step(parent.id, { action: "stop", answer: "" });
  assertEquals(stopped.done, true);
  const ended = await assertRejects(() => client.fork(parent.id, 1), WebServError);
  assertEquals([ended.status, ended.code], [409, "episode-ended"]);
});
