// Unit tests of the connection against an in-memory transport: exact control
// over what the "browser" answers and when.
import {
  assert,
  assertEquals,
  assertInstanceOf,
  assertRejects,
  assertStrictEquals,
  assertThrows,
} from "@std/assert";
import { Connection } from "../../../engine/cdp/connection.ts";
import {
  CdpTimeoutError,
  ConnectionClosedError,
  ProtocolError,
  TargetClosedError,
} from "../../../engine/cdp/errors.ts";
import type { OutgoingMessage, Transport } from "../../../engine/cdp/transport.ts";

class FakeTransport implements Transport {
  sent: OutgoingMessage[] = [];
  closed = false;
  onmessage: ((message: unknown) => void) | undefined;
  onclose: ((reason: string) => void) | undefined;
  send(message: OutgoingMessage): void {
    this.sent.push(message);
  }
  close(): void {
    this.closed = true;
    this.onclose?.("fake closed");
  }
  /** Delivers a message as the browser would, as JSON text. */
  deliver(message: unknown): void {
    this.onmessage?.(JSON.stringify(message));
  }
  last(): OutgoingMessage {
    const message = this.sent.at(-1);
    assert(message, "nothing was sent");
    return message;
  }
}

const ATTACHED = {
  method: "Target.attachedToTarget",
  params: {
    sessionId: "S1",
    targetInfo: {
      targetId: "T1",
      type: "page",
      title: "",
      url: "about:blank",
      attached: true,
      canAccessOpener: false,
    },
    waitingForDebugger: false,
  },
};

Deno.test("Connection.send() resolves with the result of the matching id", async () => {
  const transport = new FakeTransport();
  const connection = new Connection(transport);
  const pending = connection.send("Runtime.evaluate", { expression: "1" });
  const { id, method, params } = transport.last();
  assertEquals(method, "Runtime.evaluate");
  assertEquals(params, { expression: "1" });
  transport.deliver({ id: id + 1000, result: {} }); // unknown ids are ignored
  transport.deliver({ id, result: { result: { type: "number", value: 1 } } });
  const { result } = await pending;
  assertEquals(result.value, 1);
  connection.close();
});

Deno.test("Connection.send() rejects with ProtocolError carrying code and method", async () => {
  const transport = new FakeTransport();
  const connection = new Connection(transport);
  const pending = connection.send("DOM.describeNode", { nodeId: 42 });
  transport.deliver({
    id: transport.last().id,
    error: { code: -32000, message: "Could not find node with given id" },
  });
  const error = await assertRejects(() => pending, ProtocolError, "DOM.describeNode");
  assertEquals(error.code, -32000);
  assertEquals(error.method, "DOM.describeNode");
  assertEquals(error.browserMessage, "Could not find node with given id");
  assert(error.stack?.includes("connection_test.ts"), "the caller's stack survives");
  connection.close();
});

Deno.test("Connection.send() rejects with CdpTimeoutError naming method and session", async () => {
  const transport = new FakeTransport();
  const connection = new Connection(transport);
  transport.deliver(ATTACHED);
  const session = connection.session("S1");
  assert(session);
  const error = await assertRejects(
    () => session.send("Runtime.evaluate", { expression: "1" }, { timeoutMs: 20 }),
    CdpTimeoutError,
  );
  assertEquals(error.method, "Runtime.evaluate");
  assertEquals(error.sessionId, "S1");
  assertEquals(
    error.message,
    'CDP command "Runtime.evaluate" on session "S1" timed out after 20 ms',
  );
  // A late answer to a timed-out call is dropped without harm.
  transport.deliver({ id: transport.last().id, sessionId: "S1", result: {} });
  connection.close();
});

/** A connection with a page attached, and a call pending on the browser and one on the page. */
function withPendingCalls() {
  const transport = new FakeTransport();
  const connection = new Connection(transport);
  transport.deliver(ATTACHED);
  const calls = [
    connection.send("Browser.getVersion"),
    connection.session("S1")!.send("Page.enable"),
  ];
  return { transport, connection, calls };
}

Deno.test("Connection.close() rejects every pending call at once with ConnectionClosedError", async () => {
  const { transport, connection, calls } = withPendingCalls();
  let heard = "";
  connection.onClose((reason) => heard = reason);
  transport.onclose?.("socket dropped");
  for (const call of calls) {
    await assertRejects(() => call, ConnectionClosedError, "socket dropped");
  }
  assertStrictEquals(heard, "Connection closed: socket dropped");
  // Later calls fail at once, too; the browser's side dropped it: a lost browser, not a shutdown.
  const later = await assertRejects(
    () => connection.send("Browser.getVersion"),
    ConnectionClosedError,
  );
  assertStrictEquals(later.byClient, false);
  assertInstanceOf(new ConnectionClosedError("x"), TargetClosedError);
  assertStrictEquals(connection.closedByClient, false);
  connection.close();
  assertStrictEquals(connection.closedByClient, false, "closing it again changes nothing");
});

Deno.test("Connection.close() marks the calls it cuts short, and later ones, as closed by the client", async () => {
  const { connection, calls } = withPendingCalls();
  connection.close();
  assertStrictEquals(connection.closedByClient, true);
  for (const call of [...calls, connection.send("Browser.getVersion")]) {
    const error = await assertRejects(() => call, ConnectionClosedError, "fake closed");
    assertStrictEquals(error.byClient, true);
  }
});

Deno.test("Connection routes events by sessionId and creates sessions on attach", async () => {
  const transport = new FakeTransport();
  const connection = new Connection(transport);
  const seenAtAttach: boolean[] = [];
  connection.on("Target.attachedToTarget", (event) => {
    seenAtAttach.push(connection.session(event.sessionId) !== undefined);
  });
  transport.deliver(ATTACHED);
  assertEquals(seenAtAttach, [true]);
  const session = connection.session("S1")!;
  assertEquals(session.targetInfo?.targetId, "T1");
  const rootEvents: string[] = [];
  const sessionEvents: string[] = [];
  connection.on("Page.loadEventFired", () => rootEvents.push("root"));
  session.on("Page.loadEventFired", () => sessionEvents.push("S1"));
  const next = session.waitForEvent("Page.loadEventFired", { timeoutMs: 1000 });
  transport.deliver({ method: "Page.loadEventFired", params: { timestamp: 1 }, sessionId: "S1" });
  assertEquals((await next).timestamp, 1);
  assertEquals(rootEvents, []);
  assertEquals(sessionEvents, ["S1"]);
  const sent = session.send("Page.enable");
  assertEquals(transport.last().sessionId, "S1");
  transport.deliver({ id: transport.last().id, sessionId: "S1", result: {} });
  await sent;
  connection.close();
});

Deno.test("CdpSession rejects pending calls with TargetClosedError when detached", async () => {
  const transport = new FakeTransport();
  const connection = new Connection(transport);
  transport.deliver(ATTACHED);
  transport.deliver({
    method: "Target.attachedToTarget",
    sessionId: "S1",
    params: {
      ...ATTACHED.params,
      sessionId: "S2",
      targetInfo: { ...ATTACHED.params.targetInfo, targetId: "T2", type: "iframe" },
    },
  });
  const child = connection.session("S2")!;
  assertEquals(child.parentSessionId, "S1");
  const pending = connection.session("S1")!.send("Runtime.evaluate", { expression: "1" });
  const childPending = child.send("Runtime.evaluate", { expression: "1" });
  const waiting = child.waitForEvent("Page.loadEventFired");
  transport.deliver({ method: "Target.detachedFromTarget", params: { sessionId: "S1" } });
  await assertRejects(() => pending, TargetClosedError, "Target detached");
  await assertRejects(() => childPending, TargetClosedError);
  await assertRejects(() => waiting, TargetClosedError);
  assertEquals(connection.session("S1"), undefined);
  assertEquals(connection.session("S2"), undefined, "children go with their parent");
  await assertRejects(() => child.send("Page.enable"), TargetClosedError);
  connection.close();
});

Deno.test("Connection keeps delivering when a listener throws or a message is garbage", async () => {
  const transport = new FakeTransport();
  const connection = new Connection(transport);
  const heard: number[] = [];
  connection.on("Page.loadEventFired", () => {
    throw new Error("listener bug");
  });
  connection.on("Page.loadEventFired", ({ timestamp }) => heard.push(timestamp));
  transport.onmessage?.("not json");
  transport.onmessage?.(42);
  transport.deliver({ method: "Page.loadEventFired", params: { timestamp: 7 } });
  // Parsed objects are accepted as well as text (adapters hand those over).
  transport.onmessage?.({ method: "Page.loadEventFired", params: { timestamp: 8 } });
  assertEquals(heard, [7, 8]);
  const call = connection.send("Browser.getVersion");
  transport.onmessage?.({ id: transport.last().id, result: { product: "x" } });
  assertEquals((await call).product, "x");
  connection.close();
});

Deno.test("new Connection() throws RangeError for a non-positive timeout", () => {
  assertThrows(() => new Connection(new FakeTransport(), { timeoutMs: 0 }), RangeError, "positive");
});
