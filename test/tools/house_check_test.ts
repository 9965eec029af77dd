// The tree names no ticket, session or round: comments, test names, scripts
// and pages say what a thing does (tools/house_check.ts).
import { assertEquals } from "@std/assert";
import { findHits, formatHits, houseCheck } from "../../tools/house_check.ts";

Deno.test("findHits() names ticket, session and round numbers by file and line", () => {
  const text = [
    "// Task proposals (issue 21): the server's side",
    "const a = 1; // see issue #23",
    "Measured in session 12; the session-13 runs below",
    "| round 3 (`main` at 42e8660) |",
    "rounds 6 to 8 measured 29% to 35%",
  ].join("\n");
  assertEquals(
    findHits("bench/x.ts", text).map((hit) => `${hit.file}:${hit.line} ${hit.name} ${hit.text}`),
    [
      "bench/x.ts:1 issue number issue 21",
      "bench/x.ts:2 issue number issue #23",
      "bench/x.ts:3 session number session 12",
      "bench/x.ts:4 round number round 3",
      "bench/x.ts:5 round number rounds 6",
    ],
  );
});

Deno.test("findHits() leaves durations, flags, round trips and Redmine's own issues alone", () => {
  const text = [
    "a session 3 ms after the first; a first session 10.3 s",
    "deno task bench:soak --sessions 4 --hostile 4",
    "a round trip to the page; 12 rounds of short blocks",
    "Redmine's issue 1 through its edit form",
    "the session id is sent with every step",
  ].join("\n");
  assertEquals(findHits("bench/x.ts", text), []);
  assertEquals(findHits("fixtures/sites/redmine/tasks/_solve.ts", "as `issue #42`"), []);
});

Deno.test("no tracked file names a ticket, session or round", async () => {
  const hits = await houseCheck();
  assertEquals(formatHits(hits), "", "say what the thing does instead");
});
