// The dashboard's run picker: a server shows the run it records and the
// finished runs beside it. Two runs are made here by two servers; the
// figures shown in Chromium switch with the picker and match each run's
// trajectory files, and the viewer opened from a past run's episode reads
// that run's files.
import { assert, assertEquals, assertStringIncludes } from "@std/assert";
import { join } from "node:path";
import { Env } from "../../../mod.ts";
import { startServer } from "../../../adapters/http/server.ts";
import { runDirectories } from "../../../adapters/http/_run_catalog.ts";
import { WebServClient } from "../../../adapters/client/mod.ts";
import { solveAddNote, until } from "./_dashboard.ts";
import { TEST_SEED_START } from "../../../fixtures/sites/mod.ts";
import { envInternals } from "../../../engine/env.ts";

const TEMPLATE = "demo/add-note";
/** A seed of the test split, for the split filter. */
const TEST_SEED = TEST_SEED_START + 7;
/** Set to write the screenshot docs/dashboard.md shows of a past run picked. */
const DOCS_SHOTS = Deno.env.get("WEBSERV_DASHBOARD_SHOTS");

/** A run's figures, counted from its files here, apart from the server. */
async function fromFiles(runDir: string) {
  let episodes = 0, finished = 0, successes = 0, steps = 0;
  for await (const entry of Deno.readDir(runDir)) {
    if (!entry.name.endsWith(".jsonl")) continue;
    const lines = (await Deno.readTextFile(join(runDir, entry.name))).trim().split("\n")
      .map((l) => JSON.parse(l));
    for (const line of lines) {
      if (line.type === "start") episodes++;
      if (line.type !== "step") continue;
      steps++;
      if (line.verdict) {
        finished++;
        if (line.verdict.reward > 0) successes++;
      }
    }
  }
  return { episodes, finished, successes, steps };
}

interface Shown {
  run: string;
  runs: string[];
  template: { episodes: number; successes: number } | null;
  totals: string;
  liveHidden: boolean;
  links: string[];
}

const SHOWN = `(() => {
  const tr = document.querySelector('#templates tr[data-key="${TEMPLATE}"]');
  return {
    run: document.body.dataset.run ?? '?',
    runs: [...document.getElementById('f-run').options].map((o) => o.value + '|' + o.textContent),
    template: tr ? { episodes: +tr.querySelector('.episodes').textContent, successes: +tr.querySelector('.successes').textContent } : null,
    totals: document.getElementById('totals')?.textContent ?? '',
    liveHidden: document.getElementById('live').hidden,
    links: [...document.querySelectorAll('#episodes tr[data-session] a')].map((a) => a.getAttribute('href')),
  };
})()`;

/** Picks a value of one of the page's selects, as its change event tells the page. */
function choose(select: string, value: string): string {
  return `(() => { const s = document.getElementById('${select}'); s.value = ${
    JSON.stringify(value)
  }; s.dispatchEvent(new Event('change')); return s.value; })()`;
}

function pick(run: string): string {
  return choose("f-run", run);
}

Deno.test("the run picker switches the dashboard's figures and viewer between runs", async () => {
  const parent = await Deno.makeTempDir();
  const past = join(parent, "past-run");
  const current = join(parent, "current-run");
  let errored = "", seven = "";
  try {
    // A finished run: two episodes given up (reward 0), one action error.
    {
      await using server = await startServer({ port: 0, runDir: past, maxSessions: 2 });
      const client = new WebServClient(server.url);
      for (const seed of [5, TEST_SEED]) {
        const session = await client.createSession({ task: `${TEMPLATE}/${seed}` });
        if (seed === TEST_SEED) seven = session.id;
        if (seed === 5) {
          errored = session.id;
          assertEquals(
            (await client.step(session.id, { action: "click", id: 999 })).status,
            "action_error",
          );
        }
        assertEquals((await client.step(session.id, { action: "stop", answer: "" })).reward, 0);
        await client.close(session.id);
      }
    }
    const pastFiles = await fromFiles(past);
    assertEquals(pastFiles, { episodes: 2, finished: 2, successes: 0, steps: 3 });

    // The current run, beside it: one episode solved, one still open.
    await using server = await startServer({
      port: 0,
      runDir: current,
      runs: [parent],
      maxSessions: 3,
    });
    const client = new WebServClient(server.url);
    const solved = await client.createSession({ task: `${TEMPLATE}/6` });
    await solveAddNote(client, solved.id, 6);
    const open = await client.createSession({ task: `${TEMPLATE}/8` });
    await server.trajectories!.flush();
    const currentFiles = await fromFiles(current);
    assertEquals(currentFiles, { episodes: 2, finished: 1, successes: 1, steps: 3 });

    // The list: the current run first, then the past one, with their episodes.
    const listed = (await (await fetch(`${server.url}/dashboard/runs`)).json()).runs as {
      id: string;
      current: boolean;
      episodes: number;
      sessions: number;
      first: number;
      last: number;
    }[];
    assertEquals(listed.map((r) => [r.id, r.current, r.episodes, r.sessions]), [
      ["current-run", true, 2, 2],
      ["past-run", false, 2, 2],
    ]);
    assert(listed[1]!.first <= listed[1]!.last && listed[1]!.last <= listed[0]!.first);
    const unknown = await fetch(`${server.url}/dashboard/stats?run=nowhere`);
    assertEquals(unknown.status, 404);
    assertStringIncludes((await unknown.json()).message, '"past-run"');

    // A past session's lines and page come from its run, and only with it.
    const get = (path: string) => fetch(`${server.url}${path}`);
    const notHere = await get(`/dashboard/trajectories/${errored}`);
    assertEquals(notHere.status, 404);
    await notHere.body?.cancel();
    const lines = await (await get(`/dashboard/trajectories/${errored}?run=past-run`)).json();
    assertEquals(
      lines.events.map((e: { type: string; status?: string }) => e.status ?? e.type),
      ["start", "action_error", "ok", "end"],
    );
    assertStringIncludes(
      await (await get(`/dashboard/sessions/${errored}?run=past-run`)).text(),
      "action_error",
    );

    await using env = await Env.create(server.browser!, { startUrl: `${server.url}/` });
    const atFirst = await until<Shown>(
      env,
      SHOWN,
      (s) => s.runs.length === 2 && s.template?.episodes === currentFiles.finished,
    );
    assertEquals(atFirst.run, "");
    assertEquals(atFirst.template, { episodes: 1, successes: 1 });
    assertStringIncludes(
      atFirst.totals,
      `${currentFiles.episodes} episodes, ${currentFiles.steps} steps`,
    );
    assertEquals(atFirst.liveHidden, false);
    assertStringIncludes(atFirst.runs[0]!, "|current-run (current) · 2 episodes");
    assertStringIncludes(atFirst.runs[1]!, "past-run|past-run · 2 episodes");

    // The past run: its own figures, no live sessions, links into its files.
    assertEquals(await env.evaluate(pick("past-run")), "past-run");
    const pastShown = await until<Shown>(env, SHOWN, (s) => s.run === "past-run");
    assertEquals(pastShown.template, { episodes: pastFiles.finished, successes: 0 });
    assertStringIncludes(
      pastShown.totals,
      `${pastFiles.episodes} episodes, ${pastFiles.steps} steps`,
    );
    assertEquals(pastShown.liveHidden, true);
    assertEquals(pastShown.links.length, 2);
    assert(pastShown.links.every((l) => l.includes("run=past-run")), pastShown.links.join());
    assertEquals(await env.evaluate("new URLSearchParams(location.search).get('run')"), "past-run");
    if (DOCS_SHOTS) {
      const png = await envInternals(env).withPage(async (page) => {
        const shot = await page.session.send("Page.captureScreenshot", { format: "png" });
        return Uint8Array.from(atob(shot.data), (c) => c.charCodeAt(0));
      });
      await Deno.writeFile(new URL("../../../docs/dashboard-runs.png", import.meta.url), png);
    }

    // The filters' choices are the picked run's: its test-split episode alone.
    await until<boolean>(
      env,
      "[...document.getElementById('f-split').options].some((o) => o.value === 'test')",
      (v) => v,
    );
    assertEquals(await env.evaluate(choose("f-split", "test")), "test");
    const split = await until<Shown>(env, SHOWN, (s) => s.links.length === 1);
    assertStringIncludes(split.links[0]!, seven);
    assertEquals(split.template, { episodes: 1, successes: 0 });
    assertEquals(await env.evaluate(choose("f-split", "")), "");
    await until<Shown>(env, SHOWN, (s) => s.links.length === 2);

    // The viewer from a past episode reads that run's lines: the action error's step.
    const link = pastShown.links.find((l) => l.includes(errored));
    assert(link, pastShown.links.join());
    await using viewer = await Env.create(server.browser!, { startUrl: `${server.url}${link}` });
    await until<string>(
      viewer,
      "document.getElementById('pane-a').dataset.steps ?? ''",
      (s) => s === "2",
    );
    await viewer.step({ action: "press", keys: "ArrowRight" });
    const action = await until<string>(
      viewer,
      "document.querySelector('#pane-a .action')?.textContent ?? ''",
      (a) => a !== "",
    );
    assertEquals(JSON.parse(action), { action: "click", id: 999 });
    assertEquals(await viewer.evaluate("document.getElementById('run').value"), "past-run");
    // Its second pane offers that run's episodes of the same task first; the
    // search box, typed into, picks by seed or by session.
    const OFFERED =
      "[...document.querySelectorAll('#pane-b .pick option')].slice(1).map((o) => o.value)";
    assertEquals(await until<string[]>(viewer, OFFERED, (o) => o.length > 0), [`${errored}#0`]);
    const controls = (await viewer.observe()).elements;
    const search = controls.find((e) => e.role === "textbox");
    assert(search, "no search box");
    await viewer.step({ action: "type", id: search.id, text: `/${TEST_SEED}` });
    assertEquals(await until<string[]>(viewer, OFFERED, (o) => o[0] === `${seven}#0`), [
      `${seven}#0`,
    ]);
    await viewer.step({ action: "type", id: search.id, text: errored });
    assertEquals(await until<string[]>(viewer, OFFERED, (o) => o[0] === `${errored}#0`), [
      `${errored}#0`,
    ]);
    await viewer.step({ action: "type", id: search.id, text: "demo/add-note" });
    const pickB = (await viewer.observe()).elements.filter((e) => e.role === "combobox")
      .find((e) => e.name.includes("compare") || e.value?.includes("compare"));
    assert(pickB, JSON.stringify((await viewer.observe()).text));
    await viewer.step({
      action: "select",
      id: pickB.id,
      option: `${seven} #0 · ${TEMPLATE}/${TEST_SEED} · failure 0`,
    });
    assertEquals(
      await until<string>(
        viewer,
        "document.getElementById('pane-b').dataset.session ?? ''",
        (s) => s !== "",
      ),
      seven,
    );

    // Served by the server itself: every resource both pages loaded is its own.
    for (const page of [env, viewer]) {
      const origins = await page.evaluate(
        "performance.getEntriesByType('resource').map((e) => new URL(e.name).origin)",
      ) as string[];
      assert(origins.length > 0);
      assertEquals([...new Set(origins)], [new URL(server.url).origin]);
      assertEquals(
        await page.evaluate(
          "/(src|href|action)=[\"']?(https?:)?\\/\\//i.test(document.documentElement.outerHTML)",
        ),
        false,
      );
    }

    // And back: the current run's figures again.
    await env.evaluate(pick(""));
    const back = await until<Shown>(env, SHOWN, (s) => s.run === "" && s.liveHidden === false);
    assertEquals(back.template, { episodes: 1, successes: 1 });
    assertEquals(
      await env.evaluate("[...document.getElementById('f-split').options].map((o) => o.value)"),
      ["", "train"],
    );
    await client.close(open.id);
  } finally {
    await Deno.remove(parent, { recursive: true });
  }
});

Deno.test("--run-dir: a parent of runs records into a new run inside it, a list into its first", async () => {
  const parent = await Deno.makeTempDir();
  try {
    const now = new Date("2026-01-02T03:04:05.678Z");
    // Not yet a parent of runs: recorded into as given.
    assertEquals(await runDirectories(parent, now), { current: parent, runs: [] });
    await Deno.mkdir(join(parent, "old", "screenshots"), { recursive: true });
    assertEquals(await runDirectories(parent, now), {
      current: join(parent, "2026-01-02T03-04-05-678Z"),
      runs: [parent],
    });
    // A run itself stays a run.
    assertEquals(await runDirectories(join(parent, "old"), now), {
      current: join(parent, "old"),
      runs: [],
    });
    assertEquals(await runDirectories(`${parent}/a, ${parent}/b`, now), {
      current: `${parent}/a`,
      runs: [`${parent}/b`],
    });
    assertEquals(await runDirectories(undefined, now), {
      current: join("runs", "2026-01-02T03-04-05-678Z"),
      runs: ["runs"],
    });
  } finally {
    await Deno.remove(parent, { recursive: true });
  }
});
