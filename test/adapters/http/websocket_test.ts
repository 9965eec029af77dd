// /ws against a client written from OpenEnv's message spec
// (src/openenv/core/env_server/types.py: WSResetMessage, WSStepMessage,
// WSStateMessage, WSCloseMessage; WSObservationResponse, WSStateResponse,
// WSErrorResponse).
import { assertEquals, assertMatch } from "@std/assert";
import { startServer } from "../../../adapters/http/server.ts";
import { waitFor, within } from "../../_util/wait.ts";

interface Reply {
  type: "observation" | "state" | "error";
  data: Record<string, unknown>;
}

/** A minimal OpenEnv-style client: one request, one reply, in order. */
class OpenEnvSocket {
  #socket: WebSocket;
  #replies: Reply[] = [];
  #waiters: ((reply: Reply) => void)[] = [];
  closed: Promise<CloseEvent>;

  private constructor(socket: WebSocket) {
    this.#socket = socket;
    socket.onmessage = (event) => {
      const reply = JSON.parse(event.data) as Reply;
      const waiter = this.#waiters.shift();
      if (waiter) waiter(reply);
      else this.#replies.push(reply);
    };
    this.closed = new Promise((resolve) => socket.onclose = resolve);
  }

  static async open(url: string): Promise<OpenEnvSocket> {
    const socket = new WebSocket(url);
    await new Promise((resolve, reject) => {
      socket.onopen = resolve;
      socket.onerror = reject;
    });
    return new OpenEnvSocket(socket);
  }

  send(message: unknown): Promise<Reply> {
    this.#socket.send(typeof message === "string" ? message : JSON.stringify(message));
    const ready = this.#replies.shift();
    return ready ? Promise.resolve(ready) : new Promise((resolve) => this.#waiters.push(resolve));
  }

  sendOnly(message: unknown): void {
    this.#socket.send(JSON.stringify(message));
  }
}

function idOf(text: string, pattern: RegExp): number {
  const line = text.split("\n").find((l) => pattern.test(l));
  return Number(line?.match(/\[(\d+)\]/)?.[1]);
}

Deno.test("/ws runs an episode with OpenEnv's reset, step, state and close messages", async () => {
  await using server = await startServer({ port: 0 });
  const ws = await OpenEnvSocket.open(`${server.url.replace("http", "ws")}/ws`);

  const early = await ws.send({ type: "step", data: { action: "reload" } });
  assertEquals([early.type, early.data.code], ["error", "SESSION_ERROR"]);

  const reset = await ws.send({
    type: "reset",
    data: { task: "demo/add-note/6", episode_id: "ep-1" },
  });
  assertEquals(reset.type, "observation");
  assertEquals([reset.data.reward, reset.data.done], [null, false]);
  const text = (reset.data.observation as { text: string }).text;
  assertMatch(text, /textbox "?New note/);

  const typed = await ws.send({
    type: "step",
    data: { action: "type", id: idOf(text, /textbox/), text: "buy grapes 6", enter: true },
  });
  assertEquals(typed.type, "observation");
  assertEquals([typed.data.status, typed.data.reward, typed.data.done], ["ok", 0, false]);

  const state = await ws.send({ type: "state" });
  assertEquals(state.type, "state");
  assertEquals([state.data.episode_id, state.data.step_count], ["ep-1", 1]);

  const stop = await ws.send({ type: "step", data: { action: "stop", answer: "done" } });
  assertEquals([stop.data.reward, stop.data.done], [1, true]);

  const unknown = await ws.send({ type: "dance" });
  assertEquals([unknown.type, unknown.data.code], ["error", "UNKNOWN_TYPE"]);
  const garbage = await ws.send("{not json");
  assertEquals([garbage.type, garbage.data.code], ["error", "INVALID_JSON"]);

  const again = await ws.send({ type: "reset", data: {} });
  assertEquals([again.type, again.data.done], ["observation", false]);
  assertEquals(server.sessions.live, 1);

  ws.sendOnly({ type: "close" });
  const closed = await ws.closed;
  assertEquals(closed.code, 1000);
  assertEquals(server.sessions.live, 0);
});

Deno.test("/ws closes the session when the client disconnects", async () => {
  await using server = await startServer({ port: 0 });
  const socket = new WebSocket(`${server.url.replace("http", "ws")}/ws`);
  await new Promise((resolve) => socket.onopen = resolve);
  const reply = new Promise<string>((resolve) => socket.onmessage = (e) => resolve(e.data));
  socket.send(JSON.stringify({ type: "reset", data: { site: "demo" } }));
  assertEquals(JSON.parse(await reply).type, "observation");
  assertEquals(server.sessions.live, 1);
  const closed = new Promise((resolve) => socket.onclose = resolve);
  socket.close();
  await within(closed, { message: "the socket closes" });
  // The server learns of the close on its own side, later: bounded, and a
  // server that never closes the session fails here instead of hanging.
  await waitFor(() => server.sessions.live === 0 && server.sessions.list().length === 0, {
    message: "the server closes the session of a disconnected client",
  });
});
