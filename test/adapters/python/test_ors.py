"""The Open Reward Standard's own client (ors-sdk, pinned in
requirements-test.txt) against the rollout server's ORS routes: tasks of a
split, a session's prompt and tools, an episode to its reward, a wrong answer,
an infrastructure failure the client raises, a bad task refused.

Run by test/adapters/python/ors_test.ts, which starts the server and passes
WEBSERV_URL (and WEBSERV_FAULTS, a test-only hook that kills a session's
sandbox instance).
"""

import json
import os
import urllib.request

import pytest
from ors.client import ORS, AuthenticationError, Task, ToolCallError
from ors.client._session import SessionTerminatedError

URL = os.environ["WEBSERV_URL"]
TASK = "demo/add-note/2"
NOTE = "buy coffee 2"


@pytest.fixture(scope="module")
def env():
    with ORS(URL) as client:
        yield client.environment("webserv")


def task(id_):
    return Task(environment_name="webserv", task_spec={"task": id_})


def live_session(task_id):
    """The WebServ session behind an ORS session, found by its task."""
    with urllib.request.urlopen(URL + "/v1/sessions", timeout=60) as response:
        sessions = json.load(response)["sessions"]
    return next(s["id"] for s in sessions if s["task"] and s["task"]["id"] == task_id)


def test_splits_and_tasks_come_from_the_catalog(env):
    assert env.list_splits() == ["train", "test"]
    train = env.list_tasks("train")
    assert len(train) == 50
    assert all(t.environment_name == "webserv" for t in train)
    ids = [t.task_spec["task"] for t in train]
    assert all(int(i.rsplit("/", 1)[1]) < 1000 for i in ids)
    test = env.get_task_range("test", 0, 3)
    assert [int(t.task_spec["task"].rsplit("/", 1)[1]) for t in test] == [1000] * len(test)
    assert env.get_task("train", 1).task_spec == train[1].task_spec
    assert env.num_tasks("train") % 1000 == 0 and env.num_tasks("train") >= 1000
    with pytest.raises(Exception, match="bad-split"):
        env.list_tasks("validation")


def test_an_episode_runs_to_reward_1(env):
    with env.session(task(TASK)) as session:
        prompt = session.get_prompt()
        assert [b.type for b in prompt] == ["text", "text"]
        assert NOTE in prompt[0].text
        assert "New note" in prompt[1].text
        tools = {t.name: t for t in session.list_tools()}
        assert {"click", "type", "stop"} <= set(tools)
        assert tools["type"].input_schema["type"] == "object"
        first = session.call_tool("type", {"id": 1, "text": NOTE})
        assert first.finished is False and first.reward == 0
        assert first.metadata["status"] == "ok" and first.metadata["step"] == 1
        session.call_tool("click", {"id": 2})
        last = session.call_tool("stop", {"answer": "added"})
        assert last.finished is True
        assert last.reward == 1
        assert last.metadata["verdict"]["reward"] == 1


def test_a_wrong_answer_is_reward_0(env):
    with env.session(task(TASK)) as session:
        session.call_tool("type", {"id": 1, "text": "something else"})
        session.call_tool("click", {"id": 2})
        last = session.call_tool("stop", {"answer": "added"})
        assert last.finished is True and last.reward == 0


def test_an_agents_mistake_is_text_it_reads_and_the_episode_goes_on(env):
    with env.session(task(TASK)) as session:
        bad = session.call_tool("click", {"id": 9999})
        assert bad.metadata["status"] == "action_error" and bad.finished is False
        assert bad.blocks[0].text.startswith("Error (")
        malformed = session.call_tool("type", {"id": "one"})
        assert malformed.blocks[0].text.startswith("Error (invalid-action)")
        with pytest.raises(ToolCallError, match="not a valid tool"):
            session.call_tool("fly", {})
        assert session.call_tool("scroll", {"direction": "down"}).metadata["status"] == "ok"


def test_an_infrastructure_failure_is_raised_never_a_reward(env):
    killed = "demo/add-note/5"
    with env.session(task(killed)) as session:
        session.call_tool("scroll", {"direction": "down"})
        kill = urllib.request.Request(
            os.environ["WEBSERV_FAULTS"] + "/kill/" + live_session(killed), method="POST"
        )
        urllib.request.urlopen(kill, timeout=60).read()
        with pytest.raises(ToolCallError, match="env_error"):
            session.call_tool("scroll", {"direction": "down"})


def test_a_bad_task_is_refused(env):
    with pytest.raises(Exception, match="unknown-site"):
        with env.session(task("nosuch/add-note/1")):
            pass
    with pytest.raises(Exception, match="400"):
        with env.session(task("not a task id")):
            pass


def test_the_session_is_closed_when_the_client_leaves(env):
    with env.session(task("demo/add-note/3")):
        assert live_session("demo/add-note/3")
    with pytest.raises(StopIteration):
        live_session("demo/add-note/3")


def test_the_servers_token_is_the_clients_api_key():
    """Run only by the token server of ors_test.ts (WEBSERV_TOKEN set)."""
    token = os.environ["WEBSERV_TOKEN"]
    with ORS(URL, api_key="wrong") as client:
        with pytest.raises(AuthenticationError):
            client.environment("webserv").list_splits()
    with ORS(URL, api_key=token) as client:
        env = client.environment("webserv")
        assert env.list_splits() == ["train", "test"]
        with env.session(task(TASK)) as session:
            assert NOTE in session.get_prompt()[0].text


def test_an_expired_session_is_raised_never_a_reward(env):
    expired = "demo/add-note/6"
    with env.session(task(expired)) as session:
        reap = urllib.request.Request(
            os.environ["WEBSERV_FAULTS"] + "/expire/" + live_session(expired), method="POST"
        )
        urllib.request.urlopen(reap, timeout=60).read()
        # The call's {ok: false}, or, when the client's 10 s ping saw the 410
        # first, its SessionTerminatedError: raised either way, never a reward.
        with pytest.raises((ToolCallError, SessionTerminatedError), match="expired"):
            session.call_tool("scroll", {"direction": "down"})
