"""The client side of `deno task bench:rollouts` in server mode: N concurrent
rollouts of the reference flow (``webserv.harness.rollout``, unchanged) as
asyncio tasks in this one Python process, against a running WebServ server
and the scripted model server (``webserv.scripted_model``) started here.

The run's parameters come as one JSON object, ``--job`` (the ``RolloutJob`` of
``bench/_rollouts_job.ts``, which the in-process mode reads too). Each of its
``sessions`` slots runs ``rollouts`` rollouts one after the other (a closed
loop, as a trainer's rollout workers do), after ``warmUp`` warm-up rollouts at
once that are not measured; rollout ``index`` of ``slot`` plays
``taskPrefix/seeds[(slot + index) % len(seeds)]``. The server's own CPU time is read from
``/proc/<server pid>/stat`` (user + system ticks of that process alone, not
of the browser it started) before and after the measured loop. Each step's
latency is timed around ``AsyncWebServClient.step``, the call the harness
makes per tool call; sessions open at most ``openWidth`` at a time. Prints one
JSON object on its last line.

Usage: python _rollouts_driver.py --server URL --server-pid PID --job JSON
"""

import argparse
import asyncio
import json
import os
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Dict, List

from webserv.aio import AsyncWebServClient
from webserv.harness import HarnessError, rollout
from webserv.scripted_model import ScriptedModelServer

TICKS = os.sysconf("SC_CLK_TCK")


def cpu_ms(pid: int) -> float:
    """User + system CPU of one process so far, in ms."""
    with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) * 1000.0 / TICKS


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--server", required=True)
    parser.add_argument("--server-pid", type=int, required=True)
    parser.add_argument("--job", required=True, help="the RolloutJob, as JSON")
    args = parser.parse_args()
    job: Dict[str, Any] = json.loads(args.job)
    sessions: int = job["sessions"]
    seeds: List[int] = job["seeds"]

    # The harness calls the model on a thread (asyncio.to_thread); the default
    # pool holds a handful of threads, which would cap concurrent model calls
    # far below N and measure the pool, not the server.
    asyncio.get_running_loop().set_default_executor(ThreadPoolExecutor(max_workers=sessions + 8))

    latencies: List[float] = []
    measuring = False
    original_step = AsyncWebServClient.step

    async def timed_step(self: AsyncWebServClient, *a: Any, **k: Any) -> Any:
        started = time.perf_counter()
        result = await original_step(self, *a, **k)
        if measuring:
            latencies.append((time.perf_counter() - started) * 1000.0)
        return result

    AsyncWebServClient.step = timed_step  # type: ignore[method-assign]

    # Sessions open at most openWidth at a time (a trainer ramps up; the
    # in-process mode opens envs the same way), so that 128 opens at once do
    # not all wait out their deadline on a loaded host.
    opening = asyncio.Semaphore(job["openWidth"])
    original_create = AsyncWebServClient.create_session

    async def paced_create(self: AsyncWebServClient, *a: Any, **k: Any) -> Any:
        async with opening:
            return await original_create(self, *a, **k)

    AsyncWebServClient.create_session = paced_create  # type: ignore[method-assign]

    rewards: List[float] = []
    errors: List[str] = []
    steps = 0

    with ScriptedModelServer(policy="solve", latency=job["latency"]) as model:

        async def one(slot: int, index: int) -> None:
            nonlocal steps
            task = f"{job['taskPrefix']}/{seeds[(slot + index) % len(seeds)]}"
            try:
                result = await rollout(task, model.base_url, "scripted", server=args.server)
            except HarnessError as error:
                errors.append(str(error)[:300])
                return
            if measuring:
                rewards.append(result.reward)
                # One step per tool call the model made (the last turn's plain reply has none).
                steps += sum(len(m.get("tool_calls") or []) for m in result.messages if m.get("role") == "assistant")

        await asyncio.gather(*(one(slot, 0) for slot in range(job["warmUp"])))
        warm_errors = len(errors)
        measuring = True
        cpu_before = cpu_ms(args.server_pid)
        started = time.perf_counter()

        async def slot_loop(slot: int) -> None:
            for index in range(1, job["rollouts"] + 1):
                await one(slot, index)

        await asyncio.gather(*(slot_loop(slot) for slot in range(sessions)))
        seconds = time.perf_counter() - started
        cpu = cpu_ms(args.server_pid) - cpu_before

    out: Dict[str, Any] = {
        "rollouts": len(rewards),
        "solved": sum(1 for r in rewards if r == 1.0),
        "errors": errors[warm_errors:][:5],
        "errorCount": len(errors) - warm_errors,
        "warmErrors": warm_errors,
        "steps": steps,
        "seconds": seconds,
        "cpuMs": cpu,
        "latencies": latencies,
    }
    sys.stdout.write(json.dumps(out) + "\n")


if __name__ == "__main__":
    asyncio.run(main())
