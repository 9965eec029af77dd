"""OpenEnv's current client, openenv 0.10.0 (run by openenv10_test.ts in the
second venv: it cannot share a venv with openenv-core 0.3.0).

MCPToolClient runs in production mode by default: it opens a session with
the JSON-RPC method ``openenv/session/create`` on ``/mcp``, connects ``/ws``
with ``?session_id=`` to reset and step it, lists and calls tools on ``/mcp``
naming that session, and closes it with ``openenv/session/close``.
"""

import asyncio
import json
import os
import urllib.request

from openenv import AutoEnv
from openenv.core.mcp_client import MCPToolClient

URL = os.environ["WEBSERV_URL"]


def get(path):
    with urllib.request.urlopen(URL + path, timeout=60) as response:
        return json.load(response)


def test_mcp_tool_client_lists_tools_without_a_step_and_its_calls_act_on_its_session():
    async def main():
        async with MCPToolClient(base_url=URL) as env:
            session = env._production_session_id
            assert session and get("/health")["live"] == 1
            result = await env.reset(task="demo/add-note/1")
            instruction = result.observation.metadata["instruction"]
            assert result.observation.metadata["session_id"] == session
            tools = await env.list_tools(use_cache=False)
            assert {"click", "type", "stop", "observe"} <= {tool.name for tool in tools}
            assert get(f"/v1/sessions/{session}")["step"] == 0  # listing is not a step
            note = instruction.split('"')[1]
            typed = await env.call_tool("type", id=1, text=note)
            assert typed["isError"] is False
            await env.call_tool("click", id=2)
            stopped = await env.call_tool("stop", answer="added")
            assert "reward 1" in json.dumps(stopped) or get(f"/v1/sessions/{session}")["rewards"][-1] == 1
            assert get(f"/v1/sessions/{session}")["step"] == 3
        return session

    session = asyncio.run(main())
    # Closing the client closed its session.
    assert get("/health")["live"] == 0
    try:
        get(f"/v1/sessions/{session}")
        raise AssertionError("the session outlived its client")
    except urllib.error.HTTPError as error:
        assert error.code in (404, 410)


def test_autoenv_finds_the_installed_package_without_skip_install():
    client = AutoEnv.from_env("webserv", base_url=URL)
    assert type(client).__name__ == "WebservEnv"
    with client.sync() if hasattr(client, "sync") else client as env:
        result = env.reset(task="demo/add-note/1")
        assert "New note" in json.dumps(result.observation)
    assert get("/health")["live"] == 0


def post(path, body):
    request = urllib.request.Request(URL + path, data=json.dumps(body).encode(), method="POST",
                                     headers={"content-type": "application/json"})
    with urllib.request.urlopen(request, timeout=60) as response:
        return json.load(response)


def test_the_task_api_lists_splits_and_reset_takes_a_split_and_an_index():
    from openenv.core import GenericEnvClient

    assert {s["name"] for s in get("/webserv/splits")} >= {"train", "test"}
    count = post("/webserv/num_tasks", {"split": "test"})["num_tasks"]
    assert count > 3
    third = post("/webserv/task", {"split": "test", "index": 3})["task"]
    with GenericEnvClient(base_url=URL).sync() as env:
        result = env.reset(split="test", index=3)
        assert result.observation["metadata"]["task_id"] == third["task"]
        try:
            env.reset(split="test", index=count)
            raise AssertionError("an index past the split was accepted")
        except Exception as refused:  # OpenEnv's client raises the server's error message
            assert "VALIDATION_ERROR" in str(refused)  # the issue itself is in the message's errors
    assert get("/health")["live"] == 0
