/**
 * `deno task mcp`: the rollout server's MCP face over stdio, for agent apps
 * that launch their tools as a process. Each JSON-RPC line from stdin goes
 * to the server's `POST /mcp?session=<id>` and its answer comes back as a
 * line on stdout (notifications answer nothing), in order. The session is a
 * handle the session API minted (`POST /v1/sessions`); reset, verify and
 * reward stay with whoever opened it.
 *
 *     deno task mcp --server http://127.0.0.1:8800 --session s-… [--token …]
 *
 * (`WEBSERV_URL`, `WEBSERV_SESSION` and `WEBSERV_TOKEN` stand in for the flags.)
 *
 * @module
 */
import { parseArgs } from "node:util";
import { RpcCode, rpcError } from "./_rpc.ts";

/** Where the bridge sends its messages. */
export interface StdioBridgeOptions {
  /** The server's base URL. */
  server: string;
  /** The session the tools act on. */
  session: string;
  /** The server's bearer token. */
  token?: string;
}

/**
 * Bridges JSON-RPC lines to the server's `/mcp` until the input ends.
 *
 * @param options the server, session and token
 * @param input the lines in (stdin)
 * @param output where the answers go (stdout)
 */
export async function bridgeStdio(
  options: StdioBridgeOptions,
  input: ReadableStream<Uint8Array>,
  output: WritableStream<Uint8Array>,
): Promise<void> {
  const writer = output.getWriter();
  const encoder = new TextEncoder();
  const url = `${options.server.replace(/\/+$/, "")}/mcp?session=${
    encodeURIComponent(options.session)
  }`;
  let buffered = "";
  const decoder = new TextDecoder();
  const answer = async (line: string) => {
    if (line.trim() === "") return;
    let id: string | number | null = null;
    try {
      const parsed = JSON.parse(line) as { id?: unknown };
      if (typeof parsed.id === "string" || typeof parsed.id === "number") id = parsed.id;
    } catch {
      // The server answers a line that is not JSON with a parse error.
    }
    let reply: string | undefined;
    try {
      const response = await fetch(url, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          ...(options.token ? { authorization: `Bearer ${options.token}` } : {}),
        },
        body: line,
      });
      const text = await response.text();
      if (response.status === 202) return;
      reply = response.ok
        ? text
        : JSON.stringify(rpcError(id, RpcCode.SERVER_ERROR, `HTTP ${response.status}: ${text}`));
    } catch (error) {
      reply = JSON.stringify(
        rpcError(id, RpcCode.INTERNAL_ERROR, `Cannot reach ${options.server}: ${error}`),
      );
    }
    await writer.write(encoder.encode(reply.replace(/\n/g, " ") + "\n"));
  };
  for await (const chunk of input) {
    buffered += decoder.decode(chunk, { stream: true });
    let newline: number;
    while ((newline = buffered.indexOf("\n")) !== -1) {
      const line = buffered.slice(0, newline);
      buffered = buffered.slice(newline + 1);
      await answer(line);
    }
  }
  await answer(buffered);
  await writer.close();
}

if (import.meta.main) {
  const { values } = parseArgs({
    args: Deno.args,
    options: {
      server: { type: "string" },
      session: { type: "string" },
      token: { type: "string" },
    },
  });
  const server = values.server ?? Deno.env.get("WEBSERV_URL") ?? "http://127.0.0.1:8800";
  const session = values.session ?? Deno.env.get("WEBSERV_SESSION");
  const token = values.token ?? Deno.env.get("WEBSERV_TOKEN");
  if (!session) {
    console.error("Name the session: --session <id> (from POST /v1/sessions) or WEBSERV_SESSION");
    Deno.exit(2);
  }
  await bridgeStdio(
    { server, session, ...(token ? { token } : {}) },
    Deno.stdin.readable,
    Deno.stdout.writable,
  );
}
