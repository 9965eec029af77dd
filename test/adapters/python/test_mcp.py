"""The MCP face with the official Python SDK (mcp, pinned in
requirements-test.txt): streamable HTTP at /mcp and stdio through the bridge
`deno task mcp` runs, each bound to a session the session API minted, run an
episode to the verifier's reward."""

import asyncio
import os

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from webserv import WebServClient

URL = os.environ["WEBSERV_URL"]
BRIDGE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "adapters", "http", "mcp_stdio.ts")


async def episode(client, session, streams):
    read, write = streams[0], streams[1]
    async with ClientSession(read, write) as mcp:
        await mcp.initialize()
        names = [tool.name for tool in (await mcp.list_tools()).tools]
        assert "click" in names and "type" in names and "reset" not in names
        note = session["task"]["instruction"].split('"')[1]
        typed = await mcp.call_tool("type", {"id": 1, "text": note})
        assert not typed.is_error
        await mcp.call_tool("click", {"id": 2})
    assert client.verify(session["id"])["reward"] == 1
    client.close(session["id"])


def test_streamable_http_runs_an_episode_to_its_reward():
    client = WebServClient(URL)
    session = client.create_session(task="demo/add-note/1")

    async def run():
        async with streamable_http_client(f"{URL}/mcp?session={session['id']}") as streams:
            await episode(client, session, streams)

    asyncio.run(run())


def test_stdio_runs_an_episode_to_its_reward():
    client = WebServClient(URL)
    session = client.create_session(task="demo/add-note/1")
    params = StdioServerParameters(
        command=os.environ["DENO"],
        args=["run", "--allow-net", "--allow-env", BRIDGE, "--server", URL, "--session", session["id"]],
    )

    async def run():
        async with stdio_client(params) as streams:
            await episode(client, session, streams)

    asyncio.run(run())
