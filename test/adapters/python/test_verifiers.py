"""WebServ's verifiers taskset (webserv_verifiers) under verifiers' own evaluation
loop (vf-eval, its null chat harness, its interception server and MCP tool
server) against a real WebServ server and the scripted model server: solvable
rollouts earn 1, wrong ones 0, and a server that dies mid-episode makes
errored rollouts, never a reward of 0."""

import os
import tempfile
from pathlib import Path

from _support import run_vf_eval, server_killed_on_second_turn
from webserv.scripted_model import ScriptedModelServer
from webserv_verifiers import WebServConfig, WebServTaskset

URL = os.environ["WEBSERV_URL"]


def vf_eval(model_url, server_url, rollouts=2, seeds=2, timeout=240):
    """Runs vf-eval on the demo site's add-note tasks; returns the traces it wrote."""
    out = Path(tempfile.mkdtemp(prefix="webserv-vf-"))
    return run_vf_eval(out, [
        "webserv_verifiers",
        "--env.taskset.server", server_url, "--env.taskset.site", "demo",
        "--env.taskset.templates", "add-note", "--env.taskset.seeds", str(seeds),
        "--env.agent.harness.id", "null", "--env.agent.runtime.type", "subprocess",
    ], model_url, rollouts, timeout)


def reward_of(episode):
    trace = episode["traces"][0]
    return ((trace["rewards"] or {}).get("webserv") or {}).get("score")


def test_solving_rollouts_earn_1_in_verifiers_eval_loop():
    with ScriptedModelServer(policy="solve") as model:
        episodes = vf_eval(model.base_url, URL)
    assert len(episodes) == 4
    assert [e["ok"] for e in episodes] == [True] * 4, [e["errors"] for e in episodes]
    assert [reward_of(e) for e in episodes] == [1.0] * 4
    # A GRPO group: both rollouts of a task ran the same task and seed, each in its own session.
    by_task = {}
    for episode in episodes:
        trace = episode["traces"][0]
        by_task.setdefault(trace["task"]["data"]["task_id"], set()).add(trace["info"]["webserv"]["session"])
    assert sorted(by_task) == ["demo/add-note/0", "demo/add-note/1"]
    assert all(len(sessions) == 2 for sessions in by_task.values())


def test_wrong_rollouts_earn_0():
    with ScriptedModelServer(policy="wrong") as model:
        episodes = vf_eval(model.base_url, URL, rollouts=1, seeds=1)
    assert [e["ok"] for e in episodes] == [True]
    assert [reward_of(e) for e in episodes] == [0.0]


def test_a_server_killed_mid_episode_errs_the_rollout_not_0():
    with server_killed_on_second_turn("webserv-vf-run-") as (url, kill_on_second_turn):
        with ScriptedModelServer(policy="solve", on_request=kill_on_second_turn) as model:
            episodes = vf_eval(model.base_url, url, rollouts=1, seeds=1)
    assert len(episodes) == 1
    assert episodes[0]["ok"] is False
    assert episodes[0]["errors"] or episodes[0]["traces"][0]["errors"]
    assert reward_of(episodes[0]) is None  # no reward at all, not 0


def test_taskset_splits_by_template():
    every = list(WebServTaskset(WebServConfig(server=URL, site="shop", seeds=2)))
    templates = sorted({t.data.template for t in every})
    assert len(templates) >= 2, templates
    held = templates[0]
    train = list(WebServTaskset(WebServConfig(server=URL, site="shop", seeds=2, test_templates=[held])))
    test = list(WebServTaskset(WebServConfig(server=URL, site="shop", seeds=2, test_templates=[held],
                                             split="test")))
    assert {t.data.template for t in test} == {held}
    assert held not in {t.data.template for t in train}
    assert len(train) + len(test) == len(every)
    assert {t.data.seed for t in test} == {0, 1}
