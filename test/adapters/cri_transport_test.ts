// The transport contract on chrome-remote-interface.
import { assertRejects, assertStringIncludes } from "@std/assert";
import CDP from "chrome-remote-interface";
import { type CriClient, CriTransport } from "../../adapters/cri_transport.ts";
import { Connection } from "../../engine/cdp/connection.ts";
import { BrowserProcess } from "../../engine/browser/browser_process.ts";
import { transportContract } from "../engine/cdp/_transport_contract.ts";

transportContract({
  name: "CriTransport",
  async open(wsEndpoint) {
    return { transport: await CriTransport.connect(wsEndpoint), dispose: async () => {} };
  },
});

Deno.test("CriTransport.connect() throws TypeError when the endpoint is not a WebSocket URL", async () => {
  await assertRejects(() => CriTransport.connect("http://127.0.0.1:9222"), TypeError);
});

Deno.test("CriTransport delivers an answer that arrives before CRI has registered its callback", async () => {
  // chrome-remote-interface registers a command's callback only when its
  // WebSocket reports the write done; under load the browser's answer can be
  // read first, and CRI dropped it. Delaying that report makes the race
  // happen every time.
  const process = await BrowserProcess.launch({ handleSignals: false });
  const client = await (CDP as unknown as (options: object) => Promise<CriClient>)({
    target: process.wsEndpoint,
    local: true,
  });
  const ws = (client as unknown as { _ws: { send: SocketSend } })._ws;
  const send = ws.send.bind(ws);
  ws.send = (data, done) => send(data, (error) => setTimeout(() => done(error), 300));
  const connection = new Connection(new CriTransport(client), { timeoutMs: 5_000 });
  try {
    const { product } = await connection.send("Browser.getVersion");
    assertStringIncludes(product, "Chrome");
  } finally {
    connection.close();
    await client.close();
    await process.kill();
  }
});

type SocketSend = (data: string, done: (error?: Error) => void) => void;
