// The MCP face with the official Python SDK (mcp from PyPI, in the venv
// .ci/python.sh makes): test_mcp.py against a real server, over streamable
// HTTP and over stdio through `deno task mcp`'s bridge.
import { startServer } from "../../../adapters/http/server.ts";
import { pytest } from "./_venv.ts";

Deno.test("the official MCP Python SDK runs episodes over /mcp and over stdio", async () => {
  await using server = await startServer({ port: 0, maxSessions: 2 });
  await pytest(["test_mcp.py"], { WEBSERV_URL: server.url, DENO: Deno.execPath() });
});
