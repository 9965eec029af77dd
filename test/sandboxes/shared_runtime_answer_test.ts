// The host's reading of the shared runtime's control answers: a fork's path, why it copied and the
// import's steps are kept; an older control's answer (no path) still reads; a path or steps of
// another shape are the control's error, not a fork.
import { assertEquals, assertThrows } from "@std/assert";
import { SandboxError } from "../../sandboxes/errors.ts";
import { decodeControlAnswer } from "../../sandboxes/incus/_shared_runtime_control.ts";

Deno.test("a fork by import's answer keeps its path and steps", () => {
  const phases = { read: 3.1, imported: 40.2 };
  assertEquals(
    decodeControlAnswer({ key: "k", source: "fork", path: "import", phases, slot: 4, ms: 41 }),
    { source: "fork", slot: 4, ms: 41, path: "import", phases },
  );
});

Deno.test("a fork by copy's answer keeps why it copied", () => {
  assertEquals(
    decodeControlAnswer({
      source: "fork",
      path: "copy",
      reason: "no spare was waiting",
      slot: 5,
      ms: 700,
    }),
    { source: "fork", slot: 5, ms: 700, path: "copy", reason: "no spare was waiting" },
  );
});

Deno.test("an older control's answer, without a path, still reads", () => {
  assertEquals(decodeControlAnswer({ source: "fork", slot: 2, ms: 650 }), {
    source: "fork",
    slot: 2,
    ms: 650,
  });
});

Deno.test("a path or steps of another shape are the control's error", () => {
  for (
    const odd of [{ path: "clone" }, { reason: 3 }, { phases: { read: "3" } }, { phases: null }]
  ) {
    assertThrows(
      () => decodeControlAnswer({ source: "fork", slot: 1, ms: 1, ...odd }),
      SandboxError,
      "unknown shape",
    );
  }
});
