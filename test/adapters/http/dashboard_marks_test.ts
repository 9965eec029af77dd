// The episode viewer draws each step's element marks over its recorded
// screenshot, from the boxes the step's own observation reported: checked in
// real Chromium against the observation the client received for that step,
// and hidden by the page's toggle.
import { assert, assertEquals } from "@std/assert";
import { join } from "node:path";
import { Env } from "../../../mod.ts";
import { startServer } from "../../../adapters/http/server.ts";
import { WebServClient } from "../../../adapters/client/mod.ts";
import { until } from "./_dashboard.ts";
import { decodePng } from "../../../engine/observe/_png.ts";

/** An element as the client's JSON observation reports it. */
interface Seen {
  id: number;
  role: string;
  box: [number, number, number, number];
  inViewport: boolean;
}

function elementsOf(
  observation: { elements?: Record<string, unknown>[] | undefined } | null,
): Seen[] {
  return (observation?.elements ?? []) as unknown as Seen[];
}

function near(actual: number, expected: number, tolerance: number, what: string): void {
  assert(
    Math.abs(actual - expected) <= tolerance,
    `${what}: ${actual} is not within ${tolerance} of ${expected}`,
  );
}

interface Shown {
  label: string;
  box: number[];
  /** The box as drawn on screen, relative to the image and in the image's CSS pixels. */
  drawn: number[];
  scale: number;
  marks: number;
}

Deno.test("the viewer draws the step's element marks over its screenshot, and the toggle hides them", async () => {
  const runDir = await Deno.makeTempDir();
  try {
    await using server = await startServer({ port: 0, runDir, maxSessions: 2 });
    const client = new WebServClient(server.url);
    const session = await client.createSession({
      task: "demo/add-note/1",
      record_screenshots: true,
      observation: "json",
    });
    const box = elementsOf(session.observation).find((e) => e.role === "textbox");
    assert(box, session.observation.text);
    const step = await client.step(session.id, { action: "type", id: box.id, text: "buy milk" });
    assertEquals(step.status, "ok");
    const inView = elementsOf(step.observation).filter((e) => e.inViewport);
    assert(inView.length >= 2, step.observation?.text);
    const button = inView.find((e) => e.role === "button");
    assert(button, step.observation?.text);
    await server.trajectories!.flush();

    // The step's line keeps the boxes with its screenshot; the picture itself is raw.
    const lines = (await Deno.readTextFile(join(runDir, `${session.id}.jsonl`))).trim().split("\n")
      .map((l) => JSON.parse(l));
    const recorded = lines.find((l) => l.type === "step" && l.step === 1);
    assert(recorded?.screenshot && recorded.marks, JSON.stringify(recorded));
    assertEquals(
      recorded.marks.elements.map((m: { id: number }) => m.id),
      inView.map((e) => e.id),
    );

    // The recorded picture is raw: along the button's top edge, where the
    // engine's set-of-marks draws its box, it shows what a plain screenshot shows.
    const raw = await decodePng(await Deno.readFile(join(runDir, recorded.screenshot)));
    const plain = await decodePng(await client.screenshot(session.id, false));
    const marked = await decodePng(await client.screenshot(session.id, true));
    const scale = raw.width / recorded.marks.viewport[0];
    const pixel = (image: typeof raw, x: number, y: number) => {
      const at = (Math.round(y * scale) * image.width + Math.round(x * scale)) * 4;
      return [...image.data.slice(at, at + 4)].join();
    };
    const [bx, by, bw] = button.box;
    const edge = [0.25, 0.5, 0.75].flatMap((f) => [0, 1].map((dy) => [bx + bw * f, by + dy]));
    assertEquals(
      edge.map(([x, y]) => pixel(raw, x!, y!)),
      edge.map(([x, y]) => pixel(plain, x!, y!)),
    );
    assert(
      edge.some(([x, y]) => pixel(marked, x!, y!) !== pixel(plain, x!, y!)),
      "the set-of-marks screenshot draws no box there: the comparison proves nothing",
    );

    await using viewer = await Env.create(server.browser!, {
      startUrl: `${server.url}/dashboard/viewer?session=${session.id}`,
    });
    await until<string>(
      viewer,
      "document.getElementById('pane-a').dataset.steps",
      (s) => s === "1",
    );
    await viewer.step({ action: "press", keys: "ArrowRight" });
    const shown = await until<Shown | null>(
      viewer,
      `(() => {
        const img = document.querySelector('#pane-a img.shot');
        const g = document.querySelector('#pane-a svg.marks g.mark[data-id="${button.id}"]');
        if (!img || !img.complete || img.naturalWidth === 0 || !g) return null;
        const rect = g.querySelector('rect.box');
        const r = rect.getBoundingClientRect(), i = img.getBoundingClientRect();
        const scale = (i.width - 2) / ${recorded.marks.viewport[0]};
        return {
          label: g.querySelector('text').textContent,
          box: ['x', 'y', 'width', 'height'].map((a) => +rect.getAttribute(a)),
          drawn: [(r.left - i.left - 1) / scale, (r.top - i.top - 1) / scale, r.width / scale, r.height / scale],
          scale,
          marks: document.querySelectorAll('#pane-a svg.marks g.mark').length,
        };
      })()`,
      (v) => v !== null,
    );
    assertEquals(shown!.label, String(button.id));
    assertEquals(shown!.marks, inView.length);
    // Where the mark is drawn over the picture is where the element was.
    for (let i = 0; i < 4; i++) {
      near(shown!.box[i]!, button.box[i]!, 0.1, `recorded box [${i}]`);
      near(shown!.drawn[i]!, button.box[i]!, 2 / shown!.scale, `drawn box [${i}]`);
    }

    // The toggle, clicked as a user does, hides the marks and shows them again.
    const toggle = (await viewer.observe()).elements.find((e) =>
      e.role === "checkbox" && e.name.includes("element marks")
    );
    assert(toggle, "no marks toggle");
    const visible =
      "getComputedStyle(document.querySelector('#pane-a svg.marks')).display !== 'none'";
    assertEquals(await viewer.evaluate(visible), true);
    await viewer.step({ action: "click", id: toggle.id });
    assertEquals(await until<boolean>(viewer, visible, (v) => !v), false);
    await viewer.step({ action: "click", id: toggle.id });
    assertEquals(await until<boolean>(viewer, visible, (v) => v), true);
  } finally {
    await Deno.remove(runDir, { recursive: true });
  }
});
