// A session's record and its lifecycle: changed only through `_session.ts`,
// moving opening → live → done / failed → expired / closed.
import { assert, assertEquals, assertRejects, assertThrows } from "@std/assert";
import type { Browser, Env } from "../../../mod.ts";
import {
  closed,
  enqueue,
  newEpisode,
  newSession,
  opened,
  type Session,
  stepFailed,
  stepped,
} from "../../../adapters/http/_session.ts";
import { HttpError } from "../../../adapters/http/http_error.ts";

// The lifecycle never touches the env or the browser: it is a record of them.
function session(): Session {
  return newSession({
    group: undefined,
    spec: { task: "demo/add-note/1" },
    placement: null,
    instance: undefined,
    env: {} as Env,
    task: undefined,
    browser: {} as Browser,
  });
}

Deno.test("Session cannot be changed from outside its module", () => {
  const s = session();
  // Each line is a type error: `deno check` (and this test's own check) fails
  // when a field becomes writable outside `_session.ts`.
  // @ts-expect-error the step count is the lifecycle's
  s.steps = 3;
  // @ts-expect-error the phase moves only through the lifecycle's functions
  s.phase = "done";
  // @ts-expect-error so does the spec
  s.spec = { task: "demo/add-note/2" };
  // @ts-expect-error the history is read-only outside
  s.history.push({ step: 1, action: {}, status: "ok" });
  // @ts-expect-error the retry cache too
  s.cache.set("r", Promise.resolve({} as never));
  // `closed` follows the phase: not writable by type, nor at run time.
  assertThrows(() => {
    // @ts-expect-error a getter of the record
    s.closed = true;
  }, TypeError);
  assertEquals(s.closed, false);
});

Deno.test("stepped() and newEpisode() move a session live → done → live", () => {
  const s = session();
  assertEquals(s.phase, "opening");
  opened(s);
  assertEquals(s.phase, "live");
  stepped(s, 1, false);
  assertEquals([s.phase, s.steps, s.done], ["live", 1, false]);
  stepFailed(s);
  assertEquals(s.phase, "failed");
  stepped(s, 2, true);
  assertEquals([s.phase, s.steps, s.done], ["done", 2, true]);
  // A failure of ours after the episode ended is a bug, not a phase.
  assertThrows(() => stepFailed(s), Error, "cannot go from done to failed");
  newEpisode(s);
  assertEquals([s.phase, s.steps, s.episode, s.done], ["live", 0, 1, false]);
});

Deno.test("closed() ends a session for good: expired when reaped, later moves ignored", async () => {
  const reaped = session();
  opened(reaped);
  assert(closed(reaped, true));
  assertEquals([reaped.phase, reaped.closed], ["expired", true]);
  assertEquals(closed(reaped, false), false);
  // A step that finishes after the close leaves it closed.
  stepped(reaped, 1, false);
  assertEquals(reaped.phase, "expired");
  const error = await assertRejects(() => enqueue(reaped, () => Promise.resolve(1)), HttpError);
  assertEquals(error.status, 410);

  const shut = session();
  assert(closed(shut, false));
  assertEquals(shut.phase, "closed");
});
