// The MCP face with the official TypeScript SDK (@modelcontextprotocol/sdk
// from npm): streamable HTTP at /mcp and stdio through `deno task mcp`, each
// bound to a session the session API minted, run an episode to the
// verifier's reward; reset, verify and reward are not tools.
import { assert, assertEquals, assertStringIncludes } from "@std/assert";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { startServer } from "../../../adapters/http/server.ts";
import { WebServClient } from "../../../adapters/client/mod.ts";

const BRIDGE = new URL("../../../adapters/http/mcp_stdio.ts", import.meta.url).pathname;

async function episode(client: WebServClient, transport: (id: string) => Transport) {
  const session = await client.createSession({ task: "demo/add-note/1" });
  const mcp = new Client({ name: "webserv-test", version: "1.0.0" });
  await mcp.connect(transport(session.id));
  try {
    const names = (await mcp.listTools()).tools.map((tool: { name: string }) => tool.name);
    for (const tool of ["click", "type", "stop", "observe", "screenshot"]) {
      assert(names.includes(tool), names.join());
    }
    for (const hidden of ["reset", "verify", "reward"]) assert(!names.includes(hidden));
    const note = session.task!.instruction.split('"')[1]!;
    const typed = await mcp.callTool({ name: "type", arguments: { id: 1, text: note } });
    assertEquals(typed.isError, false);
    const wrong = await mcp.callTool({ name: "click", arguments: { id: 999 } });
    assertEquals(wrong.isError, true);
    assertStringIncludes(JSON.stringify(wrong.content), "unknown-id");
    await mcp.callTool({ name: "click", arguments: { id: 2 } });
    const seen = await mcp.callTool({ name: "observe", arguments: {} });
    assertStringIncludes(JSON.stringify(seen.content), note);
    const shot = await mcp.callTool({ name: "screenshot", arguments: {} });
    const image = (shot.content as { type: string; data: string; mimeType: string }[])[0]!;
    assertEquals([image.type, image.mimeType], ["image", "image/png"]);
    assertEquals(
      Uint8Array.from(atob(image.data).slice(1, 4), (c) => c.charCodeAt(0)),
      new TextEncoder().encode("PNG"),
    );
    assertEquals((await client.verify(session.id)).reward, 1);
  } finally {
    await mcp.close();
    await client.close(session.id);
  }
}

Deno.test("the official MCP TypeScript SDK runs an episode over /mcp and over `deno task mcp`", async () => {
  await using server = await startServer({ port: 0, maxSessions: 2 });
  const client = new WebServClient(server.url);
  await episode(
    client,
    (id) => new StreamableHTTPClientTransport(new URL(`${server.url}/mcp?session=${id}`)),
  );
  await episode(
    client,
    (id) =>
      new StdioClientTransport({
        command: Deno.execPath(),
        args: [
          "run",
          "--allow-net",
          "--allow-env",
          BRIDGE,
          "--server",
          server.url,
          "--session",
          id,
        ],
        stderr: "inherit",
      }),
  );
  assertEquals(server.sessions.live, 0);
});
