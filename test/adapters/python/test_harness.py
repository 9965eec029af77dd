"""The harness-native flow against a real server and the scripted model server:
a solvable rollout earns 1, a wrong one 0, and infrastructure failures raise."""

import asyncio
import os
import socket

import pytest

from _support import server_killed_on_second_turn
from webserv.harness import HarnessError, rollout
from webserv.scripted_model import ScriptedModelServer

URL = os.environ["WEBSERV_URL"]
TASK = "demo/add-note/1"


def test_a_solving_model_earns_1_with_each_prompt_extending_the_last():
    with ScriptedModelServer(policy="solve") as model:
        result = asyncio.run(rollout(TASK, model.base_url, "scripted", server=URL))
        requests = list(model.requests)
    assert result.reward == 1.0, result.verdict
    assert result.turns == 3
    assert [r["model"] for r in requests] == ["scripted"] * 3
    assert [t["function"]["name"] for t in requests[0]["tools"]][:2] == ["click", "dblclick"]
    # Append-only: every request's messages start with the previous request's messages, and add to them.
    for before, after in zip(requests, requests[1:]):
        assert after["messages"][: len(before["messages"])] == before["messages"]
        assert len(after["messages"]) > len(before["messages"])
    assert result.messages[: len(requests[-1]["messages"])] == requests[-1]["messages"]
    assert "buy bread 1" in requests[0]["messages"][1]["content"]


def test_a_wrong_model_earns_0():
    with ScriptedModelServer(policy="wrong") as model:
        result = asyncio.run(rollout(TASK, model.base_url, "scripted", server=URL))
    assert result.reward == 0.0
    assert result.turns == 3
    assert result.verdict.reason


def test_an_unreachable_model_endpoint_raises_not_0():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with pytest.raises(HarnessError, match="model endpoint is unreachable"):
        asyncio.run(rollout(TASK, f"http://127.0.0.1:{port}/v1", "scripted", server=URL))


def test_a_server_killed_mid_episode_raises_not_0():
    with server_killed_on_second_turn("webserv-harness-") as (url, kill_on_second_turn):
        with ScriptedModelServer(policy="solve", on_request=kill_on_second_turn) as model:
            with pytest.raises(HarnessError):
                asyncio.run(rollout(TASK, model.base_url, "scripted", server=url))
            assert len(model.requests) == 2
