"""webserv.trl.WebServToolEnv in TRL's environment_factory shape.

TRL itself needs torch (GRPOTrainer imports it), which the shared test venv
does not hold (see requirements-test.txt; ``deno task test:trl`` runs the
trainer in a venv of its own, trl_grpo.py), so this runs what TRL runs on the class without
a model: its tool discovery (the public methods, found as
trl/trainer/grpo_trainer.py 1.16 finds them) turned into tool schemas by
transformers' get_json_schema (what TRL uses), and its rollout loop
(reset(**row), tool calls by name with arguments, get_reward()) driven by a
scripted policy in place of a model.
"""

import inspect
import json
import os
import urllib.request

import pytest
from transformers.utils import get_json_schema

from webserv.trl import WebServToolEnv

URL = os.environ["WEBSERV_URL"]


def tools_of(environment):
    """The tools TRL exposes for an environment instance (grpo_trainer.py's discovery)."""
    methods = {}
    for name, _ in inspect.getmembers(type(environment), predicate=inspect.isfunction):
        if name not in ("reset", "get_reward") and not name.startswith("_"):
            methods[name] = getattr(environment, name)
    return methods


def test_every_action_is_a_tool_whose_schema_transformers_builds():
    environment = WebServToolEnv(URL)
    tools = tools_of(environment)
    with urllib.request.urlopen(URL + "/v1/tools?format=anthropic", timeout=60) as response:
        actions = {tool["name"] for tool in json.load(response)["tools"]}
    assert set(tools) == actions  # one tool per action, nothing else
    schemas = {name: get_json_schema(method) for name, method in tools.items()}
    typed = schemas["type"]["function"]
    assert typed["parameters"]["required"] == ["id", "text"]
    assert typed["parameters"]["properties"]["id"]["type"] == "integer"
    assert "Type text into a field" in typed["description"]
    dragged = schemas["drag"]["function"]["parameters"]
    assert dragged["required"] == ["id"] and set(dragged["properties"]) == {"id", "to", "dx", "dy"}


def rollout(environment, row, policy):
    """TRL's loop for one rollout: reset with the row, the model's tool calls, the reward."""
    prompt = environment.reset(**row)
    tools = tools_of(environment)
    for call in policy(prompt):
        result = tools[call["name"]](**call["arguments"])
        assert isinstance(result, str)
    return environment.get_reward()


def solve(prompt):
    note = prompt.split('"')[1]
    return [
        {"name": "type", "arguments": {"id": 1, "text": note}},
        {"name": "click", "arguments": {"id": 2}},
        {"name": "stop", "arguments": {"answer": "added"}},
    ]


def test_a_scripted_policy_earns_the_verifiers_reward_and_the_instance_is_reused():
    environment = WebServToolEnv(URL)
    row = {"prompt": [{"role": "user", "content": "Do the task."}], "task": "demo/add-note/1"}
    assert rollout(environment, row, solve) == 1.0
    session = environment._session
    assert rollout(environment, dict(row, task="demo/add-note/2"), lambda p: []) == 0.0
    assert environment._session == session
    assert rollout(environment, dict(row, task="demo/add-note/2"), solve) == 1.0
    environment._close()


def test_our_failures_never_yield_a_reward():
    environment = WebServToolEnv(URL)
    environment.reset(task="demo/add-note/1")
    kill = urllib.request.Request(os.environ["WEBSERV_FAULTS"] + "/kill/" + environment._session, method="POST")
    urllib.request.urlopen(kill, timeout=60).read()
    with pytest.raises(RuntimeError, match="not your action"):
        environment.click(id=2)
    assert environment.get_reward() is None
    environment._close()


def test_the_model_can_be_shown_less_a_diff_or_a_budget_of_characters():
    full = WebServToolEnv(URL)
    prompt = full.reset(task="demo/add-note/1")
    whole = full.type(id=1, text="milk")
    full._close()
    diff = WebServToolEnv(URL, observation="diff")
    diff.reset(task="demo/add-note/1")
    changed = diff.type(id=1, text="milk")
    assert len(changed) < len(whole) and "milk" in changed
    diff._close()
    small = WebServToolEnv(URL, max_chars=120)
    shown = small.reset(task="demo/add-note/1")
    assert len(shown) == 120 and shown.startswith(prompt[:40]) and "more characters not shown" in shown
    assert len(small.type(id=1, text="milk")) <= 120
    small._close()
    with pytest.raises(ValueError, match="max_chars"):
        WebServToolEnv(URL, max_chars=10)


def test_an_episode_exports_as_chat_messages_with_tool_calls():
    environment = WebServToolEnv(URL)
    row = {"task": "demo/add-note/1"}
    assert rollout(environment, row, solve) == 1.0
    chat = environment._chat().to_json()
    trace = environment._chat().to_session_trace("episode-1", name="demo/add-note/1")
    environment._close()
    # The same episode as a Hugging Face session trace: a header, then every message in order.
    lines = [json.loads(line) for line in trace.splitlines()]
    assert lines[0] == {"type": "session", "harness": "webserv", "id": "episode-1",
                        "name": "demo/add-note/1", "reward": 1.0}
    assert [line["type"] for line in lines[1:]] == ["message"] * len(chat["messages"])
    assert [line["message"] for line in lines[1:]] == chat["messages"]
    messages = chat["messages"]
    assert chat["reward"] == 1.0
    assert [m["role"] for m in messages] == ["user"] + ["assistant", "tool"] * 3
    calls = [m["tool_calls"][0] for m in messages if m["role"] == "assistant"]
    assert [c["function"]["name"] for c in calls] == ["type", "click", "stop"]
    assert json.loads(calls[2]["function"]["arguments"]) == {"answer": "added"}
    results = [m for m in messages if m["role"] == "tool"]
    assert [r["tool_call_id"] for r in results] == [c["id"] for c in calls]
    assert results[-1]["content"].endswith("The episode is over.")
    # Every call names a tool TRL offers, with arguments its schema accepts.
    schemas = {name: get_json_schema(method)["function"]["parameters"]
               for name, method in tools_of(environment).items()}
    for call in calls:
        parameters = schemas[call["function"]["name"]]
        arguments = json.loads(call["function"]["arguments"])
        assert set(parameters.get("required", [])) <= set(arguments) <= set(parameters["properties"])
