// The dashboard's run at a glance, filters and episode viewer, in real
// Chromium driven through the engine, checked against the trajectory files
// of a small run made here: a GRPO group of 4 with mixed rewards, a group of
// 2 whose rewards are all equal, and an episode with an action error. The
// same figures come back from a server started again on the finished run.
import { assert, assertEquals, assertStringIncludes } from "@std/assert";
import { join } from "node:path";
import { Env } from "../../../mod.ts";
import { startServer } from "../../../adapters/http/server.ts";
import { WebServClient } from "../../../adapters/client/mod.ts";
import { solveAddNote, until } from "./_dashboard.ts";
import { envInternals } from "../../../engine/env.ts";

const TASK = "demo/add-note";
/** Set to write the screenshots docs/dashboard.md shows. */
const DOCS_SHOTS = Deno.env.get("WEBSERV_DASHBOARD_SHOTS");

/** Stops at once: reward 0. */
async function giveUp(client: WebServClient, id: string): Promise<void> {
  assertEquals((await client.step(id, { action: "stop", answer: "" })).reward, 0);
}

/** What the trajectory files say, counted here independently of the server. */
async function fromFiles(runDir: string) {
  let finished = 0, successes = 0, steps = 0;
  const codes = new Map<string, number>();
  const lengths: number[] = [];
  for await (const entry of Deno.readDir(runDir)) {
    if (!entry.name.endsWith(".jsonl")) continue;
    const lines = (await Deno.readTextFile(join(runDir, entry.name))).trim().split("\n")
      .map((l) => JSON.parse(l));
    for (const line of lines.filter((l) => l.type === "step")) {
      steps++;
      if (line.error) codes.set(line.error.code, (codes.get(line.error.code) ?? 0) + 1);
      if (line.verdict) {
        finished++;
        lengths.push(line.step);
        if (line.verdict.reward > 0) successes++;
      }
    }
  }
  return { finished, successes, steps, codes, lengths };
}

async function shoot(env: Env, file: string): Promise<void> {
  if (!DOCS_SHOTS) return;
  // A tall window, so the live cards are on screen and fetch their thumbnails.
  await envInternals(env).withPage((page) =>
    page.session.send("Emulation.setDeviceMetricsOverride", {
      width: 1280,
      height: 2400,
      deviceScaleFactor: 1,
      mobile: false,
    })
  );
  await until<boolean>(
    env,
    "[...document.querySelectorAll('#sessions img')].slice(0, 3).every((img) => img.naturalWidth > 0)",
    (loaded) => loaded,
  );
  const png = await envInternals(env).withPage(async (page) => {
    const { cssContentSize } = await page.session.send("Page.getLayoutMetrics");
    const shot = await page.session.send("Page.captureScreenshot", {
      format: "png",
      captureBeyondViewport: true,
      clip: { x: 0, y: 0, width: 1280, height: Math.min(cssContentSize.height, 2400), scale: 1 },
    });
    return Uint8Array.from(atob(shot.data), (c) => c.charCodeAt(0));
  });
  await Deno.writeFile(new URL(`../../../docs/${file}`, import.meta.url), png);
}

/** The figures the main page shows, read from its DOM. */
const FIGURES = `(() => {
  const row = (table, key) => document.querySelector('#' + table + ' tr[data-key="' + key + '"]');
  const cells = (tr) => tr ? { episodes: +tr.querySelector('.episodes').textContent, successes: +tr.querySelector('.successes').textContent } : null;
  return {
    refreshed: +(document.body.dataset.refreshed ?? 0),
    template: cells(row('templates', '${TASK}')),
    site: cells(row('sites', 'demo')),
    totals: document.getElementById('totals')?.textContent ?? '',
    lifecycle: Object.fromEntries([...document.querySelectorAll('#lifecycle [data-phase]')].map(e => [e.dataset.phase, +e.querySelector('b').textContent])),
    groups: [...document.querySelectorAll('#groups tr[data-group]')].map(tr => ({ group: tr.dataset.group, noSignal: tr.classList.contains('nosignal'), spread: tr.querySelector('.spread').textContent, rewards: tr.querySelector('.rewards').textContent })),
    agentErrors: Object.fromEntries([...document.querySelectorAll('#errors ul[data-kind=agent] li')].map(li => [li.dataset.code, +li.textContent.split(': ')[1]])),
    infraErrors: document.querySelectorAll('#errors ul[data-kind=infrastructure] li').length,
    rewardBins: [...document.querySelectorAll('#rewards rect')].map(r => +r.dataset.count),
    lengthBins: [...document.querySelectorAll('#lengths rect')].map(r => [+r.dataset.from, +r.dataset.to, +r.dataset.count]),
    episodes: [...document.querySelectorAll('#episodes tr[data-session]')].map(tr => tr.dataset.outcome),
  };
})()`;

interface Figures {
  refreshed: number;
  template: { episodes: number; successes: number } | null;
  site: { episodes: number; successes: number } | null;
  totals: string;
  lifecycle: Record<string, number>;
  groups: { group: string; noSignal: boolean; spread: string; rewards: string }[];
  agentErrors: Record<string, number>;
  infraErrors: number;
  rewardBins: number[];
  lengthBins: [number, number, number][];
  episodes: string[];
}

function chooseFilter(id: string, value: string): string {
  return `(() => { const s = document.getElementById('${id}'); s.value = ${
    JSON.stringify(value)
  }; s.dispatchEvent(new Event('change')); return s.value; })()`;
}

Deno.test("the dashboard shows the run's figures, filters them and steps through episodes, live and read back", async () => {
  const runDir = await Deno.makeTempDir();
  let mixed = "", equal = "", solved = "", failedId = "";
  try {
    {
      await using server = await startServer({ port: 0, runDir, maxSessions: 8 });
      const client = new WebServClient(server.url);
      await using env = await Env.create(server.browser!, { startUrl: `${server.url}/` });

      const g1 = await client.createGroup({ task: `${TASK}/1`, record_screenshots: true }, 4);
      const g2 = await client.createGroup({ task: `${TASK}/2` }, 2);
      const single = await client.createSession({ task: `${TASK}/3`, record_screenshots: true });
      mixed = g1.group;
      equal = g2.group;
      solved = g1.sessions[0]!.id;
      failedId = single.id;
      await solveAddNote(client, g1.sessions[0]!.id, 1);
      await solveAddNote(client, g1.sessions[1]!.id, 1);
      await giveUp(client, g1.sessions[2]!.id);
      await giveUp(client, g1.sessions[3]!.id);
      for (const s of g2.sessions) await giveUp(client, s.id);
      const refused = await client.step(single.id, { action: "click", id: 999 });
      assertEquals(refused.status, "action_error");
      await giveUp(client, single.id);
      await server.trajectories!.flush();

      const files = await fromFiles(runDir);
      assertEquals(files.finished, 7);
      assertEquals(files.successes, 2);
      const code = refused.info.error!.code;
      assertEquals(files.codes.get(code), 1);

      const shown = await until<Figures>(
        env,
        FIGURES,
        (f) => f.template?.episodes === files.finished && f.groups.length === 2,
      );
      assertEquals(shown.template, { episodes: files.finished, successes: files.successes });
      assertEquals(shown.site, { episodes: files.finished, successes: files.successes });
      assertStringIncludes(shown.totals, `${files.steps} steps`);
      assertEquals(shown.lifecycle.done, 7);
      assertEquals(shown.lifecycle.live, 0);
      const [first, second] = shown.groups;
      assertEquals(first, { group: equal, noSignal: true, spread: "0", rewards: "0, 0" });
      assertEquals(second?.group, mixed);
      assertEquals(second?.noSignal, false);
      assertEquals(second?.spread, "1");
      assertEquals(shown.agentErrors, { [code]: 1 });
      assertEquals(shown.infraErrors, 0);
      // Rewards 0 and 1: 5 zeros, 2 ones.
      assertEquals(shown.rewardBins.filter((n) => n > 0), [5, 2]);
      const counted = shown.lengthBins.reduce((a, [, , n]) => a + n, 0);
      assertEquals(counted, files.lengths.length);
      for (const [from, to, n] of shown.lengthBins) {
        assertEquals(n, files.lengths.filter((l) => l >= from && l <= to).length);
      }
      await shoot(env, "dashboard.png");

      // Filters filter: outcome, then error kind.
      await env.evaluate(chooseFilter("f-outcome", "success"));
      const successes = await until<Figures>(
        env,
        FIGURES,
        (f) => f.episodes.length === files.successes,
      );
      assert(successes.episodes.every((o) => o === "success"), successes.episodes.join());
      assertEquals(successes.template, { episodes: 2, successes: 2 });
      await env.evaluate(chooseFilter("f-outcome", ""));
      assertEquals(await env.evaluate(chooseFilter("f-error", code)), code);
      const withError = await until<Figures>(env, FIGURES, (f) => f.episodes.length === 1);
      assertEquals(withError.agentErrors, { [code]: 1 });
      assertEquals(withError.template, { episodes: 1, successes: 0 });
      const link = await env.evaluate(
        "document.querySelector('#episodes tr[data-session] a').getAttribute('href')",
      ) as string;
      assertStringIncludes(link, failedId);

      // The viewer: the failed episode's steps, the error on its step, a screenshot that loads.
      const viewer = await Env.create(server.browser!, {
        startUrl: `${server.url}${link}&compare=${solved}`,
      });
      try {
        await until<string>(
          viewer,
          "document.getElementById('pane-a').dataset.steps",
          (s) => s === "2",
        );
        await until<string>(
          viewer,
          "document.getElementById('pane-b').dataset.steps",
          (s) => s === "3",
        );
        // The arrow key, pressed as a user does, steps both panes.
        await viewer.step({ action: "press", keys: "ArrowRight" });
        const step1 = await until<{ index: string; action: string; status: string; error: string }>(
          viewer,
          `(() => { const p = document.getElementById('pane-a'); return { index: p.dataset.index, action: p.querySelector('.action')?.textContent ?? '', status: p.querySelector('.status')?.textContent ?? '', error: p.querySelector('.error')?.textContent ?? '' }; })()`,
          (v) => v.index === "1",
        );
        assertEquals(JSON.parse(step1.action), { action: "click", id: 999 });
        assertEquals(step1.status, "action_error");
        assertStringIncludes(step1.error, code);
        assertEquals(await viewer.evaluate("document.getElementById('pane-b').dataset.index"), "1");
        const width = await until<number>(
          viewer,
          "(() => { const img = document.querySelector('#pane-b img.shot'); return img && img.complete ? img.naturalWidth : 0; })()",
          (w) => w > 0,
        );
        assert(width > 0);
        // The slider moves to the last step: the verdict is there.
        await viewer.evaluate(
          "(() => { const s = document.querySelector('#pane-b .slider'); s.value = s.max; s.dispatchEvent(new Event('input')); })()",
        );
        const verdict = await until<string>(
          viewer,
          "document.querySelector('#pane-b .verdict')?.textContent ?? ''",
          (v) => v !== "",
        );
        assertStringIncludes(verdict, "reward 1");
        if (DOCS_SHOTS) {
          // The picture: both panes on a step with a screenshot and its element marks.
          await viewer.evaluate(
            "(() => { const s = document.querySelector('#pane-b .slider'); s.value = '2'; s.dispatchEvent(new Event('input')); })()",
          );
          await until<number>(
            viewer,
            "document.querySelectorAll('svg.marks g.mark').length",
            (n) => n >= 4,
          );
        }
        await shoot(viewer, "dashboard-viewer.png");
      } finally {
        await viewer.close();
      }

      // A live episode in the viewer grows as the session steps, without a reload.
      const growing = await client.createSession({ task: `${TASK}/4` });
      await server.trajectories!.flush();
      const live = await Env.create(server.browser!, {
        startUrl: `${server.url}/dashboard/viewer?session=${growing.id}`,
      });
      try {
        await until<string>(
          live,
          "document.getElementById('pane-a').dataset.steps",
          (s) => s === "0",
        );
        await client.step(growing.id, { action: "scroll", direction: "down" });
        await client.step(growing.id, { action: "stop", answer: "" });
        await until<string>(
          live,
          "document.getElementById('pane-a').dataset.steps",
          (s) => s === "2",
        );
      } finally {
        await live.close();
      }
    }

    // A finished run, read back from its files by a new server.
    await using again = await startServer({ port: 0, runDir, maxSessions: 1 });
    const stats = await (await fetch(`${again.url}/dashboard/stats`)).json();
    // The 7 episodes above and the one watched growing (stopped, reward 0), all closed now.
    assertEquals(stats.templates, [{ key: TASK, episodes: 8, successes: 2, rate: 0.25 }]);
    assertEquals(stats.lifecycle.closed, 8);
    assertEquals(stats.lifecycle.done, 0);
    assertEquals(stats.groups.map((g: { noSignal: boolean }) => g.noSignal), [true, false]);
    const refusedFilter = await fetch(`${again.url}/dashboard/stats?outcome=won`);
    assertEquals(refusedFilter.status, 400);
    assertStringIncludes((await refusedFilter.json()).message, "Unknown outcome");
    await using env = await Env.create(again.browser!, {
      startUrl: `${again.url}/dashboard/viewer?session=${solved}`,
    });
    await until<string>(env, "document.getElementById('pane-a').dataset.steps", (s) => s === "3");
  } finally {
    await Deno.remove(runDir, { recursive: true });
  }
});
