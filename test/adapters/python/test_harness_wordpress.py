"""The harness-native flow on a real application: WordPress's post-author task
on the shared runtime, played by the scripted model (log in, open Posts, search
the title, answer the row's author). The solving model earns 1 in 7 steps, a
wrong answer earns 0: the verifier, not the script, decides."""

import asyncio
import os

from webserv.harness import rollout
from webserv.scripted_model import ScriptedModelServer

URL = os.environ["WEBSERV_URL"]
TASK = "wordpress/post-author/1"


def test_a_solving_model_earns_1_in_7_steps():
    with ScriptedModelServer(policy="solve") as model:
        result = asyncio.run(rollout(TASK, model.base_url, "scripted", server=URL))
    assert result.reward == 1.0, result.verdict
    calls = [c["function"]["name"] for m in result.messages if m.get("role") == "assistant"
             for c in (m.get("tool_calls") or [])]
    assert calls == ["type", "type", "click", "click", "type", "click", "stop"], calls


def test_a_wrong_answer_earns_0():
    with ScriptedModelServer(policy="wrong") as model:
        result = asyncio.run(rollout(TASK, model.base_url, "scripted", server=URL))
    assert result.reward == 0.0
    assert result.verdict.reason
