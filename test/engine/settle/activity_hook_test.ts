import { assertEquals } from "@std/assert";
import { activityHookSource, decodeActivityReport } from "../../../engine/settle/_activity_hook.ts";

Deno.test("decodeActivityReport() reads counts when the payload is well formed", () => {
  assertEquals(decodeActivityReport("2|0|17"), { timers: 2, frames: 0, mutations: 17 });
});

Deno.test("decodeActivityReport() returns undefined when the payload is not a report", () => {
  for (const payload of ["", "1|2", "1|2|x", "-1|0|0", "1|2|3|4", "1.5|0|0"]) {
    assertEquals(decodeActivityReport(payload), undefined, payload);
  }
});

Deno.test("activityHookSource() builds a self-contained script when given options", () => {
  const source = activityHookSource({ binding: "__b", timerMs: 1000, chainMs: 1000 });
  // It must parse on its own: no imports, no references to module scope.
  new Function(source);
  assertEquals(source.includes('"binding":"__b"'), true);
});
