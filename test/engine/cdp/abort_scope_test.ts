// The CDP abort scope against an in-memory transport.
import { assertEquals, assertRejects, assertStrictEquals } from "@std/assert";
import { withSignal } from "../../../engine/cdp/abort_scope.ts";
import { Connection } from "../../../engine/cdp/connection.ts";
import type { OutgoingMessage, Transport } from "../../../engine/cdp/transport.ts";

class FakeTransport implements Transport {
  sent: OutgoingMessage[] = [];
  onmessage: ((message: unknown) => void) | undefined;
  onclose: ((reason: string) => void) | undefined;
  send(message: OutgoingMessage): void {
    this.sent.push(message);
  }
  close(): void {
    this.onclose?.("fake closed");
  }
}

Deno.test("withSignal() makes pending and later CDP calls reject with the reason when it aborts", async () => {
  const transport = new FakeTransport();
  const connection = new Connection(transport);
  const controller = new AbortController();
  const reason = new Error("deadline passed");
  const work = withSignal(controller.signal, async () => {
    const pending = connection.send("Browser.getVersion");
    const event = connection.waitForEvent("Target.targetCreated");
    await Promise.resolve();
    controller.abort(reason);
    const errors = await Promise.allSettled([pending, event]);
    // After the abort nothing more is sent.
    const later = await connection.send("Browser.getVersion").catch((error) => error);
    return [...errors.map((r) => r.status === "rejected" ? r.reason : r.value), later];
  });
  const [pending, event, later] = await work;
  assertStrictEquals(pending, reason);
  assertStrictEquals(event, reason);
  assertStrictEquals(later, reason);
  assertEquals(transport.sent.length, 1);
  // Outside the scope, calls go through as before.
  const outside = connection.send("Browser.getVersion");
  transport.onmessage?.(JSON.stringify({ id: transport.sent.at(-1)!.id, result: { ok: 1 } }));
  assertEquals(await outside, { ok: 1 } as unknown);
  await assertRejects(
    () => withSignal(AbortSignal.abort(reason), () => connection.send("Browser.getVersion")),
    Error,
    "deadline passed",
  );
  connection.close();
});
