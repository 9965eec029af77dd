"""webserv.integrations.agent_lightning under Agent Lightning's own loop (Trainer.dev: its
Baseline algorithm enqueues the dataset, its runner claims each rollout and calls the agent with
the trainer's LLM resource, the store records the reward span) with the scripted model server
as the LLM, against a real WebServ server: solvable rollouts earn 1, wrong ones 0, a server
killed mid-episode fails the rollout with no reward recorded (never 0)."""

import asyncio
import os

# LiteLLM (imported by Agent Lightning) fetches a model price map from the web at import unless
# told to use the copy it ships; every server here is on loopback.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import agentlightning as agl  # noqa: E402
from agentlightning.emitter.reward import find_final_reward  # noqa: E402

from _support import server_killed_on_second_turn  # noqa: E402
from webserv.integrations.agent_lightning import webserv_agent  # noqa: E402
from webserv.scripted_model import ScriptedModelServer  # noqa: E402

URL = os.environ["WEBSERV_URL"]


class SpansAsTheyAre(agl.TraceAdapter):
    """Hands the algorithm an attempt's spans unchanged. Baseline's default adapter (spans to
    triplets) raises on an attempt with no spans, which a failed attempt without an LLM proxy is."""

    def adapt(self, source):
        return source


def dev(model, tasks, server=URL):
    """Trainer.dev over the tasks; returns {task: (status, final reward)} from the trainer's store."""
    # Threads in this process (the store stays readable here); the algorithm on the main thread,
    # so its end stops the runner. OpenTelemetry spans into the store: the default AgentOps tracer
    # would report to its cloud.
    trainer = agl.Trainer(n_runners=1, strategy=agl.SharedMemoryExecutionStrategy(main_thread="algorithm"),
                          tracer=agl.OtelTracer(), adapter=SpansAsTheyAre(),
                          initial_resources={"main_llm": agl.LLM(endpoint=model.base_url, model="scripted")})
    trainer.dev(webserv_agent(server), train_dataset=[{"task": task} for task in tasks])

    async def read():
        out = {}
        for rollout in await trainer.store.query_rollouts():
            spans = await trainer.store.query_spans(rollout.rollout_id)
            out[rollout.input["task"]] = (rollout.status, find_final_reward(spans))
        return out

    return asyncio.run(read())


def test_solving_rollouts_earn_1_in_trainer_dev():
    with ScriptedModelServer(policy="solve") as model:
        results = dev(model, ["demo/add-note/0", "demo/add-note/1"])
        assert len(model.requests) == 6  # three model calls per rollout, on the trainer's LLM
    assert results == {"demo/add-note/0": ("succeeded", 1.0), "demo/add-note/1": ("succeeded", 1.0)}


def test_wrong_rollouts_earn_0():
    with ScriptedModelServer(policy="wrong") as model:
        results = dev(model, ["demo/add-note/1"])
    assert results == {"demo/add-note/1": ("succeeded", 0.0)}


def test_a_server_killed_mid_episode_fails_the_rollout_not_0():
    with server_killed_on_second_turn("webserv-agl-run-") as (url, kill_on_second_turn):
        with ScriptedModelServer(policy="solve", on_request=kill_on_second_turn) as model:
            results = dev(model, ["demo/add-note/1"], server=url)
    assert results == {"demo/add-note/1": ("failed", None)}
