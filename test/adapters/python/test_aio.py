"""webserv.aio against a real server (run by sessions_test.ts beside
test_sessions.py: idle timeout WEBSERV_IDLE_S, cap WEBSERV_MAX_SESSIONS)."""

import asyncio
import os
import time

import pytest

from webserv import WebServCapacityError
from webserv.aio import AsyncWebServClient, AsyncWebServEnv
from _support import live_sessions

URL = os.environ["WEBSERV_URL"]
IDLE = float(os.environ["WEBSERV_IDLE_S"])
CAP = int(os.environ["WEBSERV_MAX_SESSIONS"])
TASK = "demo/add-note/1"


def live() -> int:
    return live_sessions(URL)


async def solve(env: AsyncWebServEnv) -> float:
    _, info = await env.reset()
    note = info["instruction"].split('"')[1]
    await env.step({"action": "type", "id": 1, "text": note})
    await env.step({"action": "click", "id": 2})
    _, reward, done, info = await env.step({"action": "stop", "answer": "added"})
    assert done and info["status"] == "ok", info
    return reward


def test_concurrent_rollouts_past_the_cap_wait_their_turn_and_earn_rewards():
    async def main():
        envs = [AsyncWebServEnv(URL, task=TASK, capacity_wait=120) for _ in range(CAP * 2)]

        async def rollouts(env):
            async with env:
                return [await solve(env) for _ in range(2)]

        results = await asyncio.gather(*(rollouts(env) for env in envs))
        return results, sum(env.client.capacity_waits for env in envs)

    results, waits = asyncio.run(main())
    assert results == [[1.0, 1.0]] * (CAP * 2) and waits > 0
    assert live() == 0


def test_a_held_session_outlives_a_pause_and_a_reaped_one_is_reopened():
    async def main():
        async with AsyncWebServEnv(URL, task=TASK) as held:
            await held.reset()
            first = held.session_id
            await asyncio.sleep(IDLE * 2.5)
            assert await solve(held) == 1.0 and held.session_id == first and held.revived == 0
        async with AsyncWebServEnv(URL, task=TASK, keep_alive=False) as left:
            await left.reset(seed=9)
            gone = left.session_id
            await asyncio.sleep(IDLE + 1.5)
            _, info = await left.reset()
            assert left.session_id != gone and left.revived == 1 and info["task"]["seed"] == 9

    asyncio.run(main())
    assert live() == 0


def test_the_capacity_wait_has_a_bound_and_network_failures_are_typed():
    async def main():
        holders = [AsyncWebServEnv(URL, site="demo") for _ in range(CAP)]
        for env in holders:
            await env.reset()
        try:
            client = AsyncWebServClient(URL, capacity_wait=1.0)
            start = time.monotonic()
            with pytest.raises(WebServCapacityError, match="--max-sessions"):
                await client.create_session(site="demo")
            assert 1.0 <= time.monotonic() - start < 4
        finally:
            for env in holders:
                await env.close()
        with pytest.raises(Exception) as unreachable:
            await AsyncWebServClient("http://127.0.0.1:9", timeout=5).health()
        assert getattr(unreachable.value, "code", None) == "network"

    asyncio.run(main())
