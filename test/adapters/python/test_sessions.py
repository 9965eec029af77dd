"""Sessions that outlive a training loop, against a real server whose idle
timeout (WEBSERV_IDLE_S) is shorter than the loop's pauses and whose cap
(WEBSERV_MAX_SESSIONS) is smaller than the loop's batch.

Run by sessions_test.ts with the installed package (webserv, webserv.gym,
webserv.trl) and gymnasium from the test venv.
"""

import os
import threading
import time

import pytest

from webserv import WebServCapacityError, WebServClient, WebServEnv, keepalive
from webserv.gym import WebServGymEnv
from webserv.trl import WebServToolEnv, environment_factory
from _support import live_sessions

URL = os.environ["WEBSERV_URL"]
IDLE = float(os.environ["WEBSERV_IDLE_S"])
CAP = int(os.environ["WEBSERV_MAX_SESSIONS"])
TASK = "demo/add-note/1"


def live() -> int:
    return live_sessions(URL)


def wait_until_reaped() -> None:
    """Past the idle timeout and the reaper's next round (it runs each second),
    without a request that would renew the lease."""
    time.sleep(IDLE + 1.5)


def episode(env: WebServEnv) -> float:
    text, info = env.reset()
    assert "Add a note" in text or info["instruction"]
    _, reward, done, info = env.step({"action": "stop", "answer": "done"})
    assert info["status"] == "ok" and done, info
    return reward


def test_a_held_env_outlives_pauses_longer_than_the_idle_timeout():
    with WebServEnv(URL, task=TASK) as env:
        env.reset()
        first = env.session_id
        time.sleep(IDLE * 2.5)  # an optimizer step, with the env held
        assert episode(env) == 0.0
        assert env.session_id == first and env.revived == 0
    assert keepalive.touches > 0


def test_a_reset_on_a_reaped_session_opens_a_new_one_on_the_same_task_and_seed():
    env = WebServEnv(URL, task=TASK, seed=7, keep_alive=False)
    _, info = env.reset()
    gone = env.session_id
    wait_until_reaped()
    _, again = env.reset()
    assert env.session_id != gone and env.revived == 1
    assert again["task"]["id"] == info["task"]["id"] and again["task"]["seed"] == 7
    assert again["instruction"] == info["instruction"]
    env.close()


def test_the_gym_and_trl_envs_revive_too():
    gym_env = WebServGymEnv(URL, task=TASK, keep_alive=False)
    first, _ = gym_env.reset(seed=3)
    gone = gym_env.session_id
    tool_env = WebServToolEnv(URL, keep_alive=False)
    prompt = tool_env.reset(task=TASK, seed=3)
    wait_until_reaped()
    assert gym_env.reset()[0] == first and gym_env.handle.revived == 1
    # The page's origin is the new instance's; the task and its instruction are the same.
    again = tool_env.reset(task=TASK, seed=3)
    assert again.split("\n")[0] == prompt.split("\n")[0] and tool_env._handle.revived == 1
    gym_env.close()
    tool_env._close()


def test_more_envs_than_the_cap_wait_for_a_free_session_then_give_a_clear_error():
    holders = [WebServEnv(URL, site="demo") for _ in range(CAP)]
    for env in holders:
        env.reset()
    # Nothing frees: the wait ends at its bound with a message that says what to do.
    client = WebServClient(URL, capacity_wait=1.5)
    start = time.monotonic()
    with pytest.raises(WebServCapacityError) as full:
        client.create_session(site="demo")
    assert 1.5 <= time.monotonic() - start < 5
    assert "--max-sessions" in full.value.message and client.capacity_waits >= 2
    # A session closing lets the waiting one in.
    threading.Timer(1.0, holders[0].close).start()
    waiting = WebServEnv(URL, site="demo", capacity_wait=30)
    waiting.reset()
    assert waiting.client.capacity_waits >= 1
    for env in holders + [waiting]:
        env.close()
    assert live() == 0


def test_the_trl_factory_closes_every_env_it_made():
    with environment_factory(URL, task=TASK) as factory:
        envs = [factory() for _ in range(CAP)]
        for env in envs:
            env.reset()
        assert live() == CAP
    assert live() == 0 and factory.envs == []


def test_a_loop_of_200_episodes_with_pauses_and_a_batch_over_the_cap_ends_cleanly():
    """Two envs held across the whole run (paused past the idle timeout between
    rounds), and each round a batch of CAP envs more that must share what is left."""
    rewards = []
    errors = []
    lock = threading.Lock()
    held = [WebServEnv(URL, task=TASK) for _ in range(2)]

    def transient(n: int) -> None:
        try:
            with WebServEnv(URL, task=TASK, capacity_wait=120) as env:
                for _ in range(n):
                    reward = episode(env)
                    with lock:
                        rewards.append(reward)
        except Exception as error:  # noqa: BLE001 - collected and asserted below
            errors.append(error)

    rounds = 0
    while len(rewards) < 200:
        rounds += 1
        for env in held:
            rewards.append(episode(env))
        batch = [threading.Thread(target=transient, args=(6,)) for _ in range(CAP)]
        for thread in batch:
            thread.start()
        for thread in batch:
            thread.join(timeout=300)
        assert not errors, errors
        if rounds % 3 == 0:
            time.sleep(IDLE * 1.5)  # the optimizer step: the held envs idle past their lease
    for env in held:
        assert env.revived == 0
        env.close()
    assert len(rewards) >= 200 and all(r == 0.0 for r in rewards)
    assert live() == 0
