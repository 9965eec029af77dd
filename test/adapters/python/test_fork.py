"""Forking a live episode from Python, against a real server (WEBSERV_URL)
whose cap is WEBSERV_MAX_SESSIONS: the sync and asyncio clients, WebServEnv,
the gymnasium env. The demo's add-note task: the parent types the note and
forks before submitting; a fork that submits earns 1, one that submits
something else earns 0, the parent never sees a fork's write.

Run by fork_test.ts with the installed package and the test venv.
"""

import asyncio
import os
import re

import pytest

from webserv import WebServCapacityError, WebServClient, WebServEnv, WebServError, WebServForkError
from webserv.aio import AsyncWebServEnv
from webserv.gym import WebServGymEnv
from _support import live_sessions

URL = os.environ["WEBSERV_URL"]
CAP = int(os.environ["WEBSERV_MAX_SESSIONS"])
TASK = "demo/add-note/2"
NOTE = "buy coffee 2"


def live() -> int:
    return live_sessions(URL)


def id_of(text: str, pattern: str) -> int:
    for line in text.split("\n"):
        if re.search(pattern, line):
            found = re.search(r"\[(\d+)\]", line)
            if found:
                return int(found.group(1))
    raise AssertionError(f"No element matches {pattern!r} in:\n{text}")


def field(text: str) -> str:
    return next((line for line in text.split("\n") if re.search(r'textbox "?New note', line)), "")


def test_env_fork_carries_the_typed_note_and_each_fork_earns_by_what_it_does():
    with WebServEnv(URL, task=TASK, capacity_wait=5.0) as parent:
        text, _ = parent.reset()
        text, _, _, info = parent.step({"action": "type", "id": id_of(text, r'textbox "?New note'), "text": NOTE})
        assert info["status"] == "ok", info
        forks = parent.fork(2)
        assert len(forks) == 2 and live() == 3
        for fork in forks:
            assert fork.session_id not in (None, parent.session_id)
            assert fork.forked is not None and fork.forked.task is not None and fork.forked.task.id == TASK
            assert NOTE in field(fork.forked.observation.text)
            assert fork.client.state(fork.session_id)["step"] == 1

        solver, other = forks
        text = solver.forked.observation.text
        _, reward, done, info = solver.step({"action": "click", "id": id_of(text, r'button "?Add\b')})
        assert info["status"] == "ok", info
        assert solver.verify().reward == 1
        assert parent.verify().reward == 0  # the parent's site never saw the fork's note

        text = other.forked.observation.text
        text, _, _, _ = other.step({"action": "type", "id": id_of(text, r'textbox "?New note'), "text": "tea"})
        other.step({"action": "click", "id": id_of(text, r'button "?Add\b')})
        assert other.verify().reward == 0

        text = parent.client.observe(parent.session_id)["text"]
        parent.step({"action": "click", "id": id_of(text, r'button "?Add\b')})
        assert parent.verify().reward == 1
        assert solver.verify().reward == 1 and other.verify().reward == 0

        # A fork's reset starts the task over.
        text, _ = solver.reset()
        assert NOTE not in field(text)
        assert solver.verify().reward == 0
        forks[1].close()  # one closed by hand; the parent's close closes the other
    assert live() == 0


def test_client_fork_refusals_are_typed():
    client = WebServClient(URL, retries=0, capacity_wait=0.5)
    parent = client.create_session(task=TASK)
    try:
        with pytest.raises(WebServCapacityError) as full:
            client.fork(parent.id, CAP)
        assert full.value.status == 429 and full.value.code == "capacity"
        with pytest.raises(WebServError) as unknown:
            client.fork("s-0000000000000000", 1)
        assert unknown.value.status == 404 and not isinstance(unknown.value, WebServForkError)
        with pytest.raises(WebServError) as bad:
            client.fork(parent.id, 17)
        assert bad.value.status == 400
        done = client.step(parent.id, {"action": "stop", "answer": ""})
        assert done.done
        with pytest.raises(WebServForkError) as ended:
            client.fork(parent.id, 1)
        assert ended.value.status == 409 and ended.value.code == "episode-ended"
        assert "reset" in ended.value.message
    finally:
        client.close(parent.id)
    assert live() == 0


def test_async_env_fork_solves_beside_its_parent_and_closes_with_it():
    async def run() -> None:
        async with AsyncWebServEnv(URL, task=TASK, capacity_wait=5.0) as parent:
            text, _ = await parent.reset()
            await parent.step({"action": "type", "id": id_of(text, r'textbox "?New note'), "text": NOTE})
            forks = await parent.fork(2)
            assert len(forks) == 2 and live() == 3
            results = await asyncio.gather(*(
                fork.step({"action": "click", "id": id_of(fork.forked.observation.text, r'button "?Add\b')})
                for fork in forks
            ))
            assert [info["status"] for _, _, _, info in results] == ["ok", "ok"]
            assert [(await fork.verify()).reward for fork in forks] == [1, 1]
            assert (await parent.verify()).reward == 0
            ended = await forks[0].step({"action": "stop", "answer": ""})
            assert ended[2]
            await forks[1].close()  # room for one more: the refusal is the ended episode's
            with pytest.raises(WebServForkError):
                await forks[0].fork(1)
        assert live() == 0

    asyncio.run(run())


def test_gym_env_fork_steps_on_from_the_copy():
    env = WebServGymEnv(URL, task=TASK)
    try:
        text, _ = env.reset()
        env.step({"action": "type", "id": id_of(text, r'textbox "?New note'), "text": NOTE})
        (fork,) = env.fork(1)
        text = fork.last_result["observation"]["text"]
        assert NOTE in field(text)
        _, _, _, _, info = fork.step({"action": "click", "id": id_of(text, r'button "?Add\b')})
        assert info["status"] == "ok" and info["step"] == 2
        assert fork.client.verify(fork.session_id).reward == 1
        assert env.client.verify(env.session_id).reward == 0
    finally:
        env.close()
    assert live() == 0


def test_the_docs_example_forks_with_the_ids_it_names():
    # docs/python.md's block, as written there.
    with WebServEnv(URL, task="demo/add-note/1") as env:
        text, info = env.reset()
        env.step({"action": "type", "id": 1, "text": info["instruction"].split('"')[1]})
        forks = env.fork(2)  # two copies of the episode, the typed note in each
        forks[0].step({"action": "click", "id": 2})  # one submits the note: it earns 1
        assert forks[0].verify().reward == 1 and env.verify().reward == 0  # the parent never saw it
    assert live() == 0
