"""webserv.integrations.rllm: the harness-native flow through rLLM's own model gateway
(rllm-model-gateway, run as its CLI starts it) in front of the scripted model server, against
a real WebServ server: solvable rollouts earn 1 and the gateway records one trace per model
call, wrong ones earn 0, a server killed mid-episode raises HarnessError (no reward)."""

import asyncio
import os
import subprocess
import sys
import tempfile
import time

import httpx
import pytest

from _support import server_killed_on_second_turn
from webserv.harness import HarnessError
from webserv.integrations.rllm import gateway_rollout
from webserv.scripted_model import ScriptedModelServer

URL = os.environ["WEBSERV_URL"]


def _free_port():
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Gateway:
    """rLLM's model gateway, started by its own CLI on 127.0.0.1 with one worker."""

    def __init__(self, worker):
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.process = subprocess.Popen(
            [sys.executable, "-m", "rllm_model_gateway", "--host", "127.0.0.1", "--port", str(self.port),
             "--worker", worker, "--db-path", os.path.join(tempfile.mkdtemp(prefix="webserv-rllm-"), "traces.db")],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        )

    def __enter__(self):
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise AssertionError("The gateway exited: " + self.process.stdout.read())
            try:
                if httpx.get(self.url + "/health", timeout=2).status_code == 200:
                    return self
            except httpx.HTTPError:
                time.sleep(0.2)
        raise AssertionError("The gateway did not answer /health within 60 s")

    def __exit__(self, *exc):
        self.process.terminate()
        self.process.wait(30)


def test_solving_rollouts_earn_1_and_the_gateway_traces_each_call():
    with ScriptedModelServer(policy="solve") as model, Gateway(model.base_url) as gateway:
        result, traces = asyncio.run(gateway_rollout("demo/add-note/1", gateway.url, "scripted", server=URL))
        requests = list(model.requests)
    assert result.reward == 1.0 and result.turns == 3
    assert len(traces) == 3 and len(requests) == 3  # every model call went through the gateway
    names = [t.response_message["tool_calls"][0]["function"]["name"] for t in traces]
    assert names == ["type", "click", "stop"]
    # The recorded prompts are the harness's, each a strict extension of the last.
    for before, after in zip(traces, traces[1:]):
        assert after.messages[: len(before.messages)] == before.messages


def test_wrong_rollouts_earn_0():
    with ScriptedModelServer(policy="wrong") as model, Gateway(model.base_url) as gateway:
        result, traces = asyncio.run(gateway_rollout("demo/add-note/1", gateway.url, "scripted", server=URL))
    assert result.reward == 0.0 and len(traces) == 3


def test_a_server_killed_mid_episode_raises_not_0():
    with server_killed_on_second_turn("webserv-rllm-run-") as (url, kill_on_second_turn):
        with ScriptedModelServer(policy="solve", on_request=kill_on_second_turn) as model, \
                Gateway(model.base_url) as gateway:
            with pytest.raises(HarnessError):
                asyncio.run(gateway_rollout("demo/add-note/1", gateway.url, "scripted", server=url))
