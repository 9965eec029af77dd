// The pure parts of Observer.observe's passes: the options in one function,
// an element decoded from its wire facts, and frame lines spliced in.
import { assertEquals } from "@std/assert";
import { elementOf, observeRun, spliceFrames } from "../../../engine/observe/_observe_passes.ts";
import { FRAME_MARK } from "../../../engine/observe/format_observation.ts";
import type { DistillResult } from "../../../engine/observe/wire.ts";

Deno.test("observeRun() holds every default and limit of an observation", () => {
  const run = observeRun({}, 7);
  assertEquals(run.mode, "page");
  assertEquals(run.req, {
    nextId: 7,
    mode: "page",
    margin: 300,
    summariseAfter: 20,
    keepItems: 5,
    maxText: 100,
    tree: false,
  });
  assertEquals(observeRun({ mode: "diff" }, 1).req.mode, "page");
  assertEquals(observeRun({ mode: "viewport", maxText: 40 }, 1).req.maxText, 40);
});

Deno.test("elementOf() decodes a frame's wire facts into page coordinates", () => {
  const el = elementOf(
    [3, "button", "Go", null, "focused", "", 10, 20, 30, 40, 3, "/go", 2, "Go now"],
    "F1",
    100,
    200,
  );
  assertEquals(el, {
    id: 3,
    role: "button",
    name: "Go",
    states: ["focused"],
    cues: [],
    box: [110, 220, 30, 40],
    frame: "F1",
    inViewport: true,
    isNew: true,
    href: "/go",
    container: 2,
    description: "Go now",
  });
});

Deno.test("spliceFrames() puts a child frame's lines under its owner's iframe line", () => {
  const result = {
    lines: ["a", `  ${FRAME_MARK}0`, "b"],
    frames: [{ slot: 0, box: [0, 0, 10, 10], name: "Ad", veto: "inert" }],
  } as unknown as DistillResult;
  const lines = spliceFrames(result, (slot) => slot === 0 ? ['[5] link "x"'] : undefined);
  // One space a level: the frame's lines sit one level under its iframe line.
  assertEquals(lines, ["a", '  iframe "Ad" (inert)', '   [5] link "x"', "b"]);
});
