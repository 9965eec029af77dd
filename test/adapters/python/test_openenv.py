"""OpenEnv's own client (openenv-core, pinned in requirements-test.txt) against
the rollout server: GenericEnvClient and AutoEnv run episodes over /ws, and
OpenEnv's runtime validator checks the HTTP routes.

Run by test/adapters/python/trainers_test.ts, which starts the server and
passes WEBSERV_URL (and WEBSERV_FAULTS, a test-only hook that kills a
session's sandbox instance).
"""

import json
import os
import urllib.request

import pytest
from openenv import AutoEnv
from openenv.cli._validation import validate_running_environment
from openenv.core import GenericEnvClient

URL = os.environ["WEBSERV_URL"]
TASK = "demo/add-note/2"
NOTE = 'buy coffee 2'


def solve(env, result):
    """The demo task's scripted policy: type the note, add it, stop."""
    assert "New note" in result.observation["text"]
    result = env.step({"action": "type", "id": 1, "text": NOTE})
    assert result.done is False and result.reward == 0
    result = env.step({"action": "click", "id": 2})
    return env.step({"action": "stop", "answer": "added"})


def test_generic_client_runs_an_episode_to_its_reward():
    with GenericEnvClient(base_url=URL).sync() as env:
        result = env.reset(task_id=TASK)
        assert result.reward is None and result.done is False
        assert result.observation["metadata"]["task_id"] == TASK
        final = solve(env, result)
        assert final.done is True
        assert final.reward == 1
        assert final.observation["metadata"]["verdict"]["reward"] == 1
        state = env.state()
        assert state["step_count"] == 3 and state["task_id"] == TASK


def test_the_ws_url_the_readme_names_works_too():
    ws = URL.replace("http://", "ws://") + "/ws"
    with GenericEnvClient(base_url=ws).sync() as env:
        result = env.reset(task=TASK)
        assert result.observation["metadata"]["task_id"] == TASK


def test_a_truncated_episode_is_done_with_the_reason_in_metadata():
    with GenericEnvClient(base_url=URL).sync() as env:
        env.reset(task=TASK, max_steps=2)
        first = env.step({"action": "scroll", "direction": "down"})
        assert first.done is False
        second = env.step({"action": "scroll", "direction": "down"})
        assert second.done is True
        meta = second.observation["metadata"]
        assert meta["truncated"] is True and meta["terminated"] is False
        assert meta["truncation_reason"] == "max_steps"
        # Every reset's options count; a key a reset leaves out keeps its last value.
        env.reset(task=TASK)
        assert env.step({"action": "scroll", "direction": "down"}).done is False
        assert env.step({"action": "scroll", "direction": "down"}).done is True
        env.reset(max_steps=5)
        for _ in range(4):
            assert env.step({"action": "scroll", "direction": "down"}).done is False
        assert env.step({"action": "scroll", "direction": "down"}).done is True


def test_seeds_and_tasks_count_on_every_reset():
    with GenericEnvClient(base_url=URL).sync() as env:
        first = env.reset(seed=42)
        # The first listed task's site and template, on seed 42.
        assert first.observation["metadata"]["task_id"].endswith("/42")
        again = env.reset(seed=7)
        assert again.observation["metadata"]["task_id"].endswith("/7")
        other = env.reset(task_id=TASK)
        assert other.observation["metadata"]["task_id"] == TASK
        reseeded = env.reset(seed=3)
        assert reseeded.observation["metadata"]["task_id"] == "demo/add-note/3"
        assert reseeded.observation["metadata"]["instruction"].endswith(' 3"')


def test_unknown_reset_options_are_refused_in_openenvs_shape():
    with GenericEnvClient(base_url=URL).sync() as env:
        with pytest.raises(RuntimeError, match="VALIDATION_ERROR"):
            env.reset(task=TASK, sed=4)
        # The connection stays usable.
        assert env.reset(task=TASK).observation["metadata"]["task_id"] == TASK
    request = urllib.request.Request(
        URL + "/reset", data=json.dumps({"sed": 4}).encode(), method="POST",
        headers={"content-type": "application/json"},
    )
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(request, timeout=60)
    assert refused.value.code == 422
    detail = json.loads(refused.value.read())["detail"]
    assert detail[0]["type"] == "extra_forbidden" and detail[0]["loc"] == ["body", "sed"]


def test_an_env_error_is_raised_by_the_generic_client_never_a_step():
    with GenericEnvClient(base_url=URL).sync() as env:
        result = env.reset(task=TASK)
        session = result.observation["metadata"]["session_id"]
        kill = urllib.request.Request(os.environ["WEBSERV_FAULTS"] + "/kill/" + session, method="POST")
        urllib.request.urlopen(kill, timeout=60).read()
        with pytest.raises(RuntimeError, match="env_error"):
            env.step({"action": "click", "id": 1})
        # A reset on the same connection recovers.
        assert "New note" in env.reset().observation["text"]


def test_auto_env_connects_to_a_running_server():
    client = AutoEnv.from_env("webserv", base_url=URL, skip_install=True)
    with client.sync() as env:
        final = solve(env, env.reset(task_id=TASK))
        assert final.done is True and final.reward == 1


def test_auto_env_finds_the_installed_package_without_skip_install():
    # The package installs as "openenv-webserv" with webserv/client.py's
    # WebservEnv and webserv/openenv.yaml: OpenEnv's discovery convention.
    client = AutoEnv.from_env("webserv", base_url=URL)
    assert type(client).__name__ == "WebservEnv"
    with client.sync() as env:
        final = solve(env, env.reset(task_id=TASK))
        assert final.done is True and final.reward == 1


def test_openenvs_runtime_validator_passes():
    report = validate_running_environment(URL, timeout_s=60)
    failed = [c for c in report["criteria"] if not c["passed"]]
    assert report["passed"], json.dumps(failed, indent=2)
    assert report["mode"] == "simulation"


def test_an_expired_session_reopens_on_reset_over_the_same_connection():
    with GenericEnvClient(base_url=URL).sync() as env:
        first = env.reset(task=TASK)
        session = first.observation["metadata"]["session_id"]
        expire = urllib.request.Request(os.environ["WEBSERV_FAULTS"] + "/expire/" + session, method="POST")
        urllib.request.urlopen(expire, timeout=60).read()
        with pytest.raises(RuntimeError, match="SESSION_ERROR"):
            env.step({"action": "click", "id": 1})
        again = env.reset()
        assert again.observation["metadata"]["session_id"] != session
        assert again.observation["metadata"]["task_id"] == TASK
        assert env.step({"action": "type", "id": 1, "text": NOTE}).done is False


def test_the_mcp_message_lists_and_calls_the_action_tools():
    import asyncio

    async def run():
        async with GenericEnvClient(base_url=URL) as env:
            await env.reset(task=TASK)
            listed = await env._send_and_receive(
                {"type": "mcp", "data": {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}}
            )
            assert listed["type"] == "mcp"
            names = [tool["name"] for tool in listed["data"]["result"]["tools"]]
            assert "click" in names and "type" in names and "reset" not in names
            called = await env._send_and_receive({"type": "mcp", "data": {
                "jsonrpc": "2.0", "id": 2, "method": "tools/call",
                "params": {"name": "type", "arguments": {"id": 1, "text": NOTE}},
            }})
            result = called["data"]["result"]
            assert result["isError"] is False and "New note" in result["content"][0]["text"]
            state = await env.state()
            assert state["step_count"] == 1

    asyncio.run(run())


def test_openenvs_mcp_tool_client_in_its_default_mode_lists_without_a_step_and_calls_tools():
    """openenv-core's MCPToolClient sends list_tools and call_tool as steps over /ws."""
    import asyncio

    from openenv.core.mcp_client import MCPToolClient

    def session_state(session):
        with urllib.request.urlopen(f"{URL}/v1/sessions/{session}", timeout=60) as response:
            return json.load(response)

    async def run():
        async with MCPToolClient(base_url=URL) as env:
            assert not getattr(env, "use_production_mode", False)
            result = await env.reset(task=TASK)
            session = result.observation.metadata["session_id"]
            tools = await env.list_tools(use_cache=False)
            assert {"click", "type", "stop"} <= {tool.name for tool in tools}
            assert session_state(session)["step"] == 0  # listing the tools is not a step
            typed = await env.call_tool("type", id=1, text=NOTE)
            assert "New note" in json.dumps(typed)
            await env.call_tool("click", id=2)
            step = await env.step(__import__("openenv.core.env_server.mcp_types", fromlist=["x"])
                                  .CallToolAction(tool_name="stop", arguments={"answer": "added"}))
            assert step.done is True and step.reward == 1
            assert session_state(session)["step"] == 3
            with pytest.raises(RuntimeError, match="no_such_tool|No tool"):
                await env.call_tool("no_such_tool")

    asyncio.run(run())


def test_the_manifest_names_the_server_the_metadata_describes():
    import yaml

    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..")
    with open(os.path.join(root, "openenv.yaml")) as file:
        manifest = yaml.safe_load(file)
    with urllib.request.urlopen(URL + "/metadata", timeout=60) as response:
        metadata = json.load(response)
    assert manifest["spec_version"] == 1 and manifest["name"] == metadata["name"]
    assert manifest["app"] == "adapters/http/serve.ts"
    assert os.path.exists(os.path.join(root, manifest["app"]))


def post(path, body):
    request = urllib.request.Request(
        URL + path, data=json.dumps(body).encode(), method="POST",
        headers={"content-type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=120) as response:
        return json.load(response)


def test_the_stateless_http_routes_answer_in_openenvs_shapes():
    reset = post("/reset", {"task_id": TASK, "episode_id": "e-1"})
    assert reset["reward"] is None and reset["done"] is False
    assert reset["observation"]["metadata"] == {
        "episode_id": "e-1", "task_id": TASK, "instruction": 'Add a note that says "buy coffee 2"',
    }
    step = post("/step", {"action": {"action": "scroll", "direction": "down"}})
    assert step["reward"] == 0 and step["done"] is False and "text" in step["observation"]
    with urllib.request.urlopen(URL + "/state", timeout=60) as response:
        assert json.load(response) == {"episode_id": None, "step_count": 0}
    with urllib.request.urlopen(URL + "/schema", timeout=60) as response:
        schemas = json.load(response)
    assert "oneOf" in schemas["action"] and "text" in schemas["observation"]["properties"]
