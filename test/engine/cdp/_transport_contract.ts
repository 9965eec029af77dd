/**
 * The contract every CDP transport passes, run once per transport by its own
 * test file (the idea of hono's `common.case.test.ts`), each case on a fresh
 * Chromium: typed commands on the browser and on flat sessions, events with
 * their session, protocol errors, timeouts, the browser killed mid-command,
 * the engine's `Browser.connect()` on top, and a clean close.
 *
 * @module
 */
import {
  assert,
  assertEquals,
  assertExists,
  assertFalse,
  assertInstanceOf,
  assertMatch,
  assertRejects,
  assertStrictEquals,
} from "@std/assert";
import { Browser, newContext } from "../../../engine/browser/browser.ts";
import { BrowserProcess } from "../../../engine/browser/browser_process.ts";
import { type CdpSession, Connection } from "../../../engine/cdp/connection.ts";
import {
  CdpTimeoutError,
  ConnectionClosedError,
  ProtocolError,
} from "../../../engine/cdp/errors.ts";
import type { CommandName } from "../../../engine/cdp/protocol.ts";
import type { Transport } from "../../../engine/cdp/transport.ts";
import { within } from "../../_util/wait.ts";

/** A transport opened by a harness, and whatever else it made to open it. */
export interface OpenedTransport {
  /** The open transport, connected at browser level. */
  transport: Transport;
  /** Releases what the harness made beside the transport, such as a puppeteer connection. */
  dispose(): Promise<void>;
}

/** How the suite drives one transport. */
export interface TransportHarness {
  /** The class name, used in test names, such as `"CriTransport"`. */
  name: string;
  /** Opens the transport on a browser-level DevTools endpoint. */
  open(wsEndpoint: string): Promise<OpenedTransport>;
}

interface Env extends AsyncDisposable {
  process: BrowserProcess;
  transport: Transport;
}

async function start(harness: TransportHarness): Promise<Env> {
  // No signal hooks: a signal listener is an op the test sanitizer would flag.
  const process = await BrowserProcess.launch({ handleSignals: false });
  let opened: OpenedTransport;
  try {
    opened = await harness.open(process.wsEndpoint);
  } catch (error) {
    await process.kill();
    throw error;
  }
  return {
    process,
    transport: opened.transport,
    async [Symbol.asyncDispose]() {
      try {
        opened.transport.close();
        await opened.dispose();
      } finally {
        await process.kill();
      }
    },
  };
}

async function openPage(connection: Connection, url = "about:blank"): Promise<CdpSession> {
  const { targetId } = await connection.send("Target.createTarget", { url });
  const { sessionId } = await connection.send("Target.attachToTarget", {
    targetId,
    flatten: true,
  });
  const session = connection.session(sessionId);
  assertExists(session, `no session for "${sessionId}"`);
  return session;
}

/** Everything a raw transport delivered, decoded, with a way to wait for one. */
class Inbox {
  messages: Record<string, unknown>[] = [];
  #waiters: { match(message: Record<string, unknown>): boolean; resolve(): void }[] = [];

  receive = (raw: unknown): void => {
    const message = (typeof raw === "string" ? JSON.parse(raw) : raw) as Record<string, unknown>;
    this.messages.push(message);
    for (const waiter of [...this.#waiters]) {
      if (waiter.match(message)) {
        this.#waiters.splice(this.#waiters.indexOf(waiter), 1);
        waiter.resolve();
      }
    }
  };

  async next(
    match: (message: Record<string, unknown>) => boolean,
    timeoutMs = 5_000,
  ): Promise<Record<string, unknown>> {
    const found = () => this.messages.find(match);
    if (!found()) {
      let timer: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([
        new Promise<void>((resolve) => this.#waiters.push({ match, resolve })),
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error("No matching message in time")), timeoutMs);
        }),
      ]).finally(() => clearTimeout(timer));
    }
    const message = found();
    assertExists(message);
    return message;
  }
}

/** Registers the contract cases for one transport. */
export function transportContract(harness: TransportHarness): void {
  const { name } = harness;

  Deno.test(`${name}.onmessage delivers answers and flat-session events intact when commands carry a sessionId`, async () => {
    await using env = await start(harness);
    const { transport } = env;
    const inbox = new Inbox();
    transport.onmessage = inbox.receive;
    transport.send({ id: 1, method: "Target.createTarget", params: { url: "about:blank" } });
    const created = await inbox.next((m) => m.id === 1);
    const { targetId } = created.result as { targetId: string };
    transport.send({ id: 2, method: "Target.attachToTarget", params: { targetId, flatten: true } });
    const attached = await inbox.next((m) => m.id === 2);
    const { sessionId } = attached.result as { sessionId: string };
    const event = await inbox.next((m) => m.method === "Target.attachedToTarget");
    assertEquals((event.params as { sessionId: string }).sessionId, sessionId);
    assertStrictEquals(event.sessionId, undefined);

    transport.send({ id: 3, method: "Runtime.enable", sessionId });
    const context = await inbox.next((m) => m.method === "Runtime.executionContextCreated");
    assertStrictEquals(context.sessionId, sessionId);
    transport.send({
      id: 4,
      method: "Runtime.evaluate",
      params: { expression: "location.href" },
      sessionId,
    });
    const answer = await inbox.next((m) => m.id === 4);
    assertEquals((answer.result as { result: { value: unknown } }).result.value, "about:blank");
  });

  Deno.test(`${name}.send() resolves typed results when sent on the browser and on a flat session`, async () => {
    await using env = await start(harness);
    const connection = new Connection(env.transport, { timeoutMs: 10_000 });
    const version = await connection.send("Browser.getVersion");
    assertMatch(version.product, /Chrome/);
    const page = await openPage(connection);
    const { result } = await page.send("Runtime.evaluate", { expression: "6 * 7" });
    assertStrictEquals(result.value, 42);
    // The answer came from this page: its main frame's id is its target id.
    const { frameTree } = await page.send("Page.getFrameTree");
    assertEquals(frameTree.frame.id, page.targetInfo?.targetId);
    connection.close();
  });

  Deno.test(`${name}.onmessage routes events to their own session when two pages emit them`, async () => {
    await using env = await start(harness);
    const connection = new Connection(env.transport, { timeoutMs: 10_000 });
    const created = connection.waitForEvent("Target.targetCreated", {
      predicate: ({ targetInfo }) => targetInfo.type === "page",
    });
    await connection.send("Target.setDiscoverTargets", { discover: true });
    await created;
    const first = await openPage(connection);
    const second = await openPage(connection);
    await first.send("Runtime.enable");
    await second.send("Runtime.enable");
    const heardElsewhere: string[] = [];
    connection.on("Runtime.consoleAPICalled", () => heardElsewhere.push("browser"));
    second.on("Runtime.consoleAPICalled", () => heardElsewhere.push("second"));
    const logged = first.waitForEvent("Runtime.consoleAPICalled", { timeoutMs: 5_000 });
    await first.send("Runtime.evaluate", { expression: "console.log('from the first page')" });
    const event = await logged;
    assertEquals(event.args[0]?.value, "from the first page");
    // A round trip on each session: anything misrouted would have arrived by now.
    await second.send("Runtime.evaluate", { expression: "1" });
    await connection.send("Browser.getVersion");
    assertEquals(heardElsewhere, []);
    connection.close();
  });

  Deno.test(`${name}.send() reaches a nested session when a page auto-attaches a worker`, async () => {
    await using env = await start(harness);
    const connection = new Connection(env.transport, { timeoutMs: 10_000 });
    const page = await openPage(connection);
    await page.send("Target.setAutoAttach", {
      autoAttach: true,
      waitForDebuggerOnStart: false,
      flatten: true,
    });
    const attached = page.waitForEvent("Target.attachedToTarget", {
      predicate: ({ targetInfo }) => targetInfo.type === "worker",
      timeoutMs: 5_000,
    });
    await page.send("Runtime.evaluate", {
      expression: "new Worker(URL.createObjectURL(new Blob(['setInterval(() => {}, 1000)'])))",
    });
    const { sessionId } = await attached;
    const worker = connection.session(sessionId);
    assertExists(worker, "the worker has no session");
    assertStrictEquals(worker.parentSessionId, page.sessionId);
    const { result } = await worker.send("Runtime.evaluate", {
      expression: "typeof WorkerGlobalScope",
    });
    assertEquals(result.value, "function");
    connection.close();
  });

  Deno.test(`${name}.send() rejects with ProtocolError carrying code and method when the method or params are bad`, async () => {
    await using env = await start(harness);
    const connection = new Connection(env.transport, { timeoutMs: 10_000 });
    const unknown = await assertRejects(
      () => connection.send("Nope.nothing" as CommandName as "Browser.getVersion"),
      ProtocolError,
    );
    assertEquals(unknown.code, -32601);
    assertEquals(unknown.method, "Nope.nothing");
    assertMatch(unknown.browserMessage, /wasn't found/);

    const page = await openPage(connection);
    const badParams = await assertRejects(
      () =>
        page.send(
          "Runtime.evaluate",
          { expression: 42 } as unknown as { expression: string },
        ),
      ProtocolError,
    );
    assertEquals(badParams.code, -32602);
    assertEquals(badParams.method, "Runtime.evaluate");
    assertEquals(badParams.sessionId, page.sessionId);
    // The session is still usable after an error.
    const { result } = await page.send("Runtime.evaluate", { expression: "'still here'" });
    assertEquals(result.value, "still here");
    connection.close();
  });

  Deno.test(`${name}.send() rejects with CdpTimeoutError when the browser does not answer in time`, async () => {
    await using env = await start(harness);
    const connection = new Connection(env.transport, { timeoutMs: 10_000 });
    const page = await openPage(connection);
    const error = await assertRejects(
      () =>
        page.send(
          "Runtime.evaluate",
          { expression: "new Promise(() => {})", awaitPromise: true },
          { timeoutMs: 200 },
        ),
      CdpTimeoutError,
    );
    assertEquals(error.method, "Runtime.evaluate");
    assertEquals(error.sessionId, page.sessionId);
    assertEquals(error.timeoutMs, 200);
    const { result } = await page.send("Runtime.evaluate", { expression: "1 + 1" });
    assertEquals(result.value, 2);
    connection.close();
  });

  // How fast they reject is a benchmark figure (bench/cdp.ts), not this test's:
  // the bound here only keeps a hang from passing, well under the 30 s timeout.
  Deno.test(`${name}.send() rejects every pending command with ConnectionClosedError when the browser is killed`, async () => {
    await using env = await start(harness);
    const connection = new Connection(env.transport, { timeoutMs: 30_000 });
    const pages = [await openPage(connection), await openPage(connection)];
    const closed = new Promise<string>((resolve) => connection.onClose(resolve));
    const pending = [
      ...pages.map((page) =>
        page.send("Runtime.evaluate", { expression: "new Promise(() => {})", awaitPromise: true })
      ),
      pages[0]!.send("Runtime.evaluate", {
        expression: "new Promise((resolve) => setTimeout(resolve, 60_000))",
        awaitPromise: true,
      }),
    ];
    // Let the commands reach the browser before it dies.
    await connection.send("Browser.getVersion");
    const killed = env.process.kill();
    const results = await within(Promise.allSettled(pending), {
      message: "the pending commands settle after the kill",
      timeoutMs: 10_000,
    });
    await killed;
    for (const result of results) {
      assert(result.status === "rejected", "a command resolved after the browser was killed");
      assertInstanceOf(result.reason, ConnectionClosedError);
    }
    assertMatch(await closed, /Connection closed/);
    await assertRejects(() => connection.send("Browser.getVersion"), ConnectionClosedError);
  });

  Deno.test(`${name}: Browser.connect() opens a context and a page that evaluates when handed the transport`, async () => {
    await using env = await start(harness);
    const browser = await Browser.connect(env.transport, { timeoutMs: 10_000 });
    try {
      const context = await newContext(browser);
      const page = await context.newPage("data:text/html,<title>Contract</title>");
      const { result } = await page.session.send("Runtime.evaluate", {
        expression: "document.title",
      });
      assertEquals(result.value, "Contract");
      await context.close();
      assert(page.closed, "the page outlived its context");
    } finally {
      await browser.close();
    }
    assertFalse(browser.connected);
  });

  Deno.test(`${name}.close() rejects pending commands and leaves no unhandled rejection when called mid-command`, async () => {
    await using env = await start(harness);
    const unhandled: unknown[] = [];
    const onUnhandled = (event: PromiseRejectionEvent) => {
      unhandled.push(event.reason);
      event.preventDefault();
    };
    globalThis.addEventListener("unhandledrejection", onUnhandled);
    try {
      let closes = 0;
      const connection = new Connection(env.transport, { timeoutMs: 10_000 });
      connection.onClose(() => closes++);
      const page = await openPage(connection);
      const pending = page.send("Runtime.evaluate", {
        expression: "new Promise(() => {})",
        awaitPromise: true,
      });
      const browserPending = connection.send("Target.getTargets");
      connection.close();
      await assertRejects(() => pending, ConnectionClosedError);
      await assertRejects(() => browserPending, ConnectionClosedError);
      await assertRejects(
        () => page.send("Runtime.evaluate", { expression: "1" }),
        ConnectionClosedError,
      );
      env.transport.close(); // a second close is harmless
      env.transport.send({ id: 999, method: "Browser.getVersion" }); // and so is a late send
      // Give late answers and socket callbacks time to surface.
      await new Promise((resolve) => setTimeout(resolve, 200));
      assertEquals(closes, 1);
      assertEquals(unhandled, []);
    } finally {
      globalThis.removeEventListener("unhandledrejection", onUnhandled);
    }
  });
}
