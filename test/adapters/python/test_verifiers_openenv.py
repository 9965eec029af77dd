"""verifiers' own OpenEnv taskset (verifiers.v1.tasksets.openenv, `base_url` mode) under
vf-eval against WebServ's OpenEnv face (`/schema`, then reset and steps over `/ws` with
OpenEnv's GenericEnvClient), with the scripted model server answering in text actions:
solvable rollouts earn 1, wrong ones 0, a server killed mid-episode errs the rollout with
no reward."""

import json
import os
import tempfile
from pathlib import Path

from _support import run_vf_eval, server_killed_on_second_turn
from webserv.scripted_model import ScriptedModelServer

URL = os.environ["WEBSERV_URL"]


def vf_eval_openenv(model_url, server_url, task_ids, rollouts=1, timeout=240):
    """vf-eval of verifiers' OpenEnv taskset on our server by URL; returns the traces it wrote."""
    out = Path(tempfile.mkdtemp(prefix="webserv-vf-openenv-"))
    resets = ", ".join("{ task_id = %s, max_steps = 8 }" % json.dumps(task) for task in task_ids)
    # A TOML config: vf-eval validates the taskset's fields (base_url) before it reads flags.
    config = out / "eval.toml"
    config.write_text(f'[env.taskset]\nid = "openenv"\nbase_url = "{server_url}"\nresets = [{resets}]\n')
    return run_vf_eval(out, [
        "@", str(config),
        "--env.player.harness.id", "null", "--env.player.runtime.type", "subprocess",
    ], model_url, rollouts, timeout)


def score(episode):
    return ((episode["traces"][0]["rewards"] or {}).get("openenv_reward") or {}).get("score")


def test_solving_rollouts_earn_1_over_openenv_by_url():
    with ScriptedModelServer(policy="solve") as model:
        episodes = vf_eval_openenv(model.base_url, URL, ["demo/add-note/0", "demo/add-note/1"], rollouts=2)
        requests = list(model.requests)
    assert [e["ok"] for e in episodes] == [True] * 4, [e["errors"] for e in episodes]
    assert [score(e) for e in episodes] == [1.0] * 4
    # Text actions: the loop offered no tools, and read each move from the reply's JSON.
    assert requests and not any(r.get("tools") for r in requests)
    assert len(requests) == 4 * 3  # type, click, stop per rollout


def test_wrong_rollouts_earn_0():
    with ScriptedModelServer(policy="wrong") as model:
        episodes = vf_eval_openenv(model.base_url, URL, ["demo/add-note/1"])
    assert [e["ok"] for e in episodes] == [True], [e["errors"] for e in episodes]
    assert [score(e) for e in episodes] == [0.0]


def test_a_server_killed_mid_episode_errs_the_rollout_not_0():
    with server_killed_on_second_turn("webserv-vf-openenv-run-") as (url, kill_on_second_turn):
        with ScriptedModelServer(policy="solve", on_request=kill_on_second_turn) as model:
            episodes = vf_eval_openenv(model.base_url, url, ["demo/add-note/1"])
    assert len(episodes) == 1
    assert episodes[0]["ok"] is False
    assert episodes[0]["errors"] or episodes[0]["traces"][0]["errors"]
    assert score(episodes[0]) is None  # no reward at all, not 0
