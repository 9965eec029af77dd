"""webserv.integrations.art under ART's own gathering (art.TrajectoryGroup,
art.gather_trajectory_groups) with an art.Model whose inference endpoint is the scripted model
server, against a real WebServ server: solvable trajectories earn 1 and carry each assistant
turn as the endpoint's Choice, wrong ones 0, a server killed mid-episode is the group's
exception and never a trajectory with reward 0."""

import asyncio
import os

import art
import pytest
from openai.types.chat.chat_completion import Choice

from _support import server_killed_on_second_turn
from webserv.harness import HarnessError
from webserv.integrations.art import webserv_rollout
from webserv.scripted_model import ScriptedModelServer

URL = os.environ["WEBSERV_URL"]


def model_at(base_url):
    return art.Model(name="webserv-agent", project="webserv", inference_model_name="scripted",
                     inference_base_url=base_url, inference_api_key="none")


def gather(model, task, n, server=URL, max_exceptions=0):
    async def run():
        return await art.gather_trajectory_groups(
            [art.TrajectoryGroup(webserv_rollout(model, task, server=server) for _ in range(n))],
            pbar_desc=None, max_exceptions=max_exceptions,
        )
    return asyncio.run(run())


def test_solving_trajectories_earn_1_in_arts_gather():
    with ScriptedModelServer(policy="solve") as model:
        groups = gather(model_at(model.base_url), "demo/add-note/1", 2)
    assert len(groups) == 1 and [t.reward for t in groups[0].trajectories] == [1.0, 1.0]
    trajectory = groups[0].trajectories[0]
    kinds = [type(item).__name__ if isinstance(item, Choice) else item["role"]
             for item in trajectory.messages_and_choices]
    assert kinds == ["system", "user", "Choice", "tool", "Choice", "tool", "Choice", "tool"]
    assert [t["function"]["name"] for t in trajectory.tools][:2] == ["click", "dblclick"]
    assert trajectory.metadata["task"] == "demo/add-note/1" and trajectory.metrics["turns"] == 3


def test_wrong_trajectories_earn_0():
    with ScriptedModelServer(policy="wrong") as model:
        groups = gather(model_at(model.base_url), "demo/add-note/1", 1)
    assert [t.reward for t in groups[0].trajectories] == [0.0]


def test_a_server_killed_mid_episode_is_an_exception_not_0():
    with server_killed_on_second_turn("webserv-art-run-") as (url, kill_on_second_turn):
        with ScriptedModelServer(policy="solve", on_request=kill_on_second_turn) as model:
            # ART's default: an exception fails the gather.
            with pytest.raises(HarnessError):
                gather(model_at(model.base_url), "demo/add-note/1", 1, server=url)
            # Tolerated, it is recorded as the group's exception, with no trajectory (no reward).
            groups = gather(model_at(model.base_url), "demo/add-note/1", 1, server=url, max_exceptions=1)
    assert all(not group.trajectories for group in groups)
    assert sum(len(group.exceptions) for group in groups) <= 1
