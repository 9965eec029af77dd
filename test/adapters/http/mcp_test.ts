// The MCP face with the official TypeScript SDK (@modelcontextprotocol/sdk
// from npm): streamable HTTP at /mcp and stdio through `deno task mcp`, each
// bound to a session the session API minted, run an episode to the
// verifier's reward; reset, verify and reward are not tools. The fork tool copies the bound
// session and a fork is bound by the id it answers.
import { assert, assertEquals, assertRejects, assertStringIncludes } from "@std/assert";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { McpError } from "@modelcontextprotocol/sdk/types.js";
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

/** The JSON-RPC error the SDK throws for a refused call, with its data. */
async function refused(call: Promise<unknown>): Promise<{ message: string; data: unknown }> {
  const error = (await assertRejects(() => call, McpError)) as McpError;
  return { message: error.message, data: error.data };
}

Deno.test("the MCP SDK forks the bound session with the fork tool and binds a fork by its id", async () => {
  await using server = await startServer({ port: 0, maxSessions: 3 });
  const client = new WebServClient(server.url);
  const parent = await client.createSession({ task: "demo/add-note/1" });
  const bind = async (id: string) => {
    const mcp = new Client({ name: "webserv-test", version: "1.0.0" });
    await mcp.connect(
      new StreamableHTTPClientTransport(new URL(`${server.url}/mcp?session=${id}`)),
    );
    return mcp;
  };
  const mcp = await bind(parent.id);
  const opened: Client[] = [mcp];
  const ids: string[] = [];
  try {
    const fork = (await mcp.listTools()).tools.find((tool: { name: string }) =>
      tool.name === "fork"
    );
    assertEquals(fork?.inputSchema.properties?.n, {
      type: "integer",
      minimum: 1,
      maximum: 16,
      default: 1,
      description: "How many copies of this episode, 1 to 16",
    });
    const note = parent.task!.instruction.split('"')[1]!;
    assertEquals(
      (await mcp.callTool({ name: "type", arguments: { id: 1, text: note } })).isError,
      false,
    );

    const forked = await mcp.callTool({ name: "fork", arguments: { n: 2 } });
    assertEquals(forked.isError, false);
    ids.push(
      ...(forked.structuredContent as { sessions: { id: string }[] }).sessions.map((s) => s.id),
    );
    assertEquals(ids.length, 2);
    assertStringIncludes(JSON.stringify(forked.content), ids[0]!);
    assertEquals((await client.state(ids[0]!)).step, 1);

    // A fork bound by its id takes the last action: it earns 1, the parent never saw the write.
    const first = await bind(ids[0]!);
    opened.push(first);
    assertStringIncludes(JSON.stringify((await first.callTool({ name: "observe" })).content), note);
    await first.callTool({ name: "click", arguments: { id: 2 } });
    assertEquals((await client.verify(ids[0]!)).reward, 1);
    assertEquals((await client.verify(parent.id)).reward, 0);
    await mcp.callTool({ name: "click", arguments: { id: 2 } });
    assertEquals((await client.verify(parent.id)).reward, 1);

    // Refusals are JSON-RPC errors naming the status and code: a bad n, the cap, an ended episode.
    const bad = await refused(mcp.callTool({ name: "fork", arguments: { n: 17 } }));
    assertStringIncludes(bad.message, "Invalid fork arguments");
    const full = await refused(mcp.callTool({ name: "fork", arguments: {} }));
    assertEquals(full.data, { status: 429, code: "capacity" });
    await client.close(ids[1]!);
    await first.callTool({ name: "stop", arguments: { answer: "done" } });
    const ended = await refused(first.callTool({ name: "fork", arguments: { n: 1 } }));
    assertEquals(ended.data, { status: 409, code: "episode-ended" });
  } finally {
    for (const open of opened) await open.close();
    for (const id of [parent.id, ...ids]) {
      await server.sessions.close(id);
    }
  }
  assertEquals(server.sessions.live, 0);
});
