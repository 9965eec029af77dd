"""webserv.gym.WebServGymEnv with gymnasium (pinned in requirements-test.txt):
check_env, the wrappers, a vector env, determinism, and our failures raised."""

import json
import os
import subprocess
import sys
import urllib.request

import gymnasium as gym
import pytest
from gymnasium.utils.env_checker import check_env
from gymnasium.wrappers import RecordEpisodeStatistics, TimeLimit

import webserv.gym
from webserv.gym import WebServEnvError, WebServGymEnv

URL = os.environ["WEBSERV_URL"]
TASK = "demo/add-note/2"


def test_check_env_passes():
    env = WebServGymEnv(URL, task=TASK)
    try:
        check_env(env, skip_render_check=True)
    finally:
        env.close()


def test_an_episode_ends_terminated_with_the_verifiers_reward():
    env = gym.make("WebServ-v0", url=URL, task=TASK, disable_env_checker=True)
    obs, info = env.reset()
    assert "New note" in obs and info["task_id"] == TASK
    obs, reward, terminated, truncated, info = env.step('{"action": "type", "id": 1, "text": "buy coffee 2"}')
    assert (reward, terminated, truncated) == (0.0, False, False)
    env.step({"action": "click", "id": 2})
    obs, reward, terminated, truncated, info = env.step({"action": "stop", "answer": "added"})
    assert (reward, terminated, truncated) == (1.0, True, False)
    assert info["verdict"]["reward"] == 1
    # A malformed action is the agent's: reward 0, the episode goes on.
    env.reset()
    _, reward, terminated, _, info = env.step("click the button")
    assert (reward, terminated, info["status"]) == (0.0, False, "action_error")
    env.close()


def test_time_limit_and_episode_statistics_wrap_it():
    env = RecordEpisodeStatistics(TimeLimit(WebServGymEnv(URL, task=TASK), max_episode_steps=2))
    env.reset(seed=5)
    _, _, terminated, truncated, _ = env.step({"action": "scroll", "direction": "down"})
    assert not terminated and not truncated
    _, reward, terminated, truncated, info = env.step({"action": "scroll", "direction": "down"})
    assert truncated and not terminated
    assert info["episode"]["l"] == 2 and info["episode"]["r"] == reward
    # max_steps on the server truncates too, with the verifier's judgement.
    env.reset(options={"max_steps": 1})
    _, _, terminated, truncated, info = env.step({"action": "scroll", "direction": "down"})
    assert truncated and not terminated and "verdict" in info
    env.close()


def test_a_vector_env_steps_two_sessions():
    envs = gym.vector.SyncVectorEnv([lambda: WebServGymEnv(URL, task=TASK) for _ in range(2)])
    obs, infos = envs.reset(seed=[1, 2])
    assert len(obs) == 2 and all("New note" in o for o in obs)
    obs, rewards, terminated, truncated, infos = envs.step(
        ['{"action": "type", "id": 1, "text": "x"}', '{"action": "scroll", "direction": "down"}']
    )
    assert list(rewards) == [0.0, 0.0] and not any(terminated)
    envs.close()


def test_an_async_vector_env_with_defaults_moves_page_text_through_shared_memory():
    sync = gym.vector.SyncVectorEnv([lambda: WebServGymEnv(URL, task=TASK) for _ in range(2)])
    expected, _ = sync.reset(seed=[4, 5])
    sync.close()
    envs = gym.vector.AsyncVectorEnv([lambda: WebServGymEnv(URL, task=TASK) for _ in range(2)])
    try:
        obs, _ = envs.reset(seed=[4, 5])
        assert tuple(obs) == tuple(expected)
        # gymnasium's own Text charset is alphanumeric: ':' and '"' failed there (KeyError).
        assert ":" in obs[0] and '"' in obs[0]
        assert all(envs.single_observation_space.contains(o) for o in obs)
        obs, rewards, terminated, truncated, _ = envs.step(
            ['{"action": "type", "id": 1, "text": "caf\u00e9 \u2615"}', '{"action": "scroll", "direction": "down"}']
        )
        assert "caf\u00e9 \u2615" in obs[0] and list(rewards) == [0.0, 0.0] and not any(terminated)
    finally:
        envs.close()


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_make_vec_works_in_both_modes_with_defaults(mode):
    envs = gym.make_vec("WebServ-v0", num_envs=2, vectorization_mode=mode, url=URL, task=TASK)
    try:
        obs, _ = envs.reset(seed=6)
        assert len(obs) == 2 and all("New note" in o for o in obs)
        obs, rewards, terminated, truncated, _ = envs.step(
            ['{"action": "stop", "answer": "none"}', '{"action": "stop", "answer": "none"}']
        )
        assert list(rewards) == [0.0, 0.0] and all(terminated)
    finally:
        envs.close()


def observe(seed):
    env = WebServGymEnv(URL, task=TASK)
    try:
        return env.reset(seed=seed)[0], env.reset(seed=seed)[0]
    finally:
        env.close()


def test_the_observation_is_the_same_for_a_task_and_seed_across_resets_and_processes():
    first, again = observe(11)
    assert first == again
    assert "localhost" not in first and "http://demo.webserv/" in first
    script = "import sys, json, test_gym; print(json.dumps(test_gym.observe(11)[0]))"
    other = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=True,
        env=dict(os.environ), cwd=os.path.dirname(os.path.abspath(__file__)),
    )
    assert json.loads(other.stdout) == first


def test_our_failures_raise_and_never_yield_a_reward():
    env = WebServGymEnv(URL, task=TASK)
    _, info = env.reset()
    kill = urllib.request.Request(os.environ["WEBSERV_FAULTS"] + "/kill/" + info["session"], method="POST")
    urllib.request.urlopen(kill, timeout=60).read()
    with pytest.raises(WebServEnvError) as failed:
        env.step({"action": "click", "id": 2})
    assert failed.value.status == "env_error"
    obs, _ = env.reset()
    assert "New note" in obs
    env.close()


def test_unknown_reset_options_are_refused():
    env = WebServGymEnv(URL, task=TASK)
    with pytest.raises(ValueError, match="Unknown reset options"):
        env.reset(options={"colour": "red"})
    env.close()
