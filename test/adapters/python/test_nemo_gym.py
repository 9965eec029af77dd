"""webserv.nemo_gym's resources server driven by a NeMo Gym client: verifiers'
NeMo Gym taskset (seed_session, tool routes, verify) under vf-eval, with the
scripted model server: solvable rollouts earn 1 with the reward's components,
wrong ones 0, a server killed mid-episode errs the rollout with no reward."""

import json
import os
import tempfile
from pathlib import Path

import httpx

from _support import run_vf_eval, server_killed_on_second_turn
from webserv.nemo_gym import ResourcesServer, dataset_rows
from webserv.scripted_model import ScriptedModelServer

URL = os.environ["WEBSERV_URL"]


def vf_eval_nemo(model_url, server_url, tasks, rollouts=1, timeout=240):
    """vf-eval of verifiers' NeMo Gym taskset against our resources server; returns the traces."""
    out = Path(tempfile.mkdtemp(prefix="webserv-nemo-"))
    dataset = out / "rows.jsonl"
    dataset.write_text("".join(json.dumps(row) + "\n" for row in dataset_rows(server_url, tasks)))
    with ResourcesServer(server_url) as resources:
        # A TOML config: vf-eval 0.4.0 validates a taskset's required fields (dataset) before
        # it reads them from flags, so they go in a file.
        config = out / "eval.toml"
        config.write_text(f'[env.taskset]\nid = "nemo_gym"\ndataset = "{dataset}"\n'
                          f'[env.taskset.task]\nresources_url = "{resources.url}"\n')
        episodes = run_vf_eval(out, [
            "@", str(config),
            "--env.agent.harness.id", "null", "--env.agent.runtime.type", "subprocess",
        ], model_url, rollouts, timeout)
        assert resources.sessions == {}  # every session verified and closed
    return episodes


def score(episode):
    return ((episode["traces"][0]["rewards"] or {}).get("nemo_gym") or {}).get("score")


def test_solving_rollouts_earn_1_with_components():
    with ScriptedModelServer(policy="solve") as model:
        episodes = vf_eval_nemo(model.base_url, URL, ["demo/add-note/0", "demo/add-note/1"], rollouts=2)
    assert [e["ok"] for e in episodes] == [True] * 4, [e["errors"] for e in episodes]
    assert [score(e) for e in episodes] == [1.0] * 4
    info = episodes[0]["traces"][0]["info"]["nemo_gym"]
    assert info["success"] is True and info["steps"] == 3 and "buy" in info["reason"]


def test_wrong_rollouts_earn_0():
    with ScriptedModelServer(policy="wrong") as model:
        episodes = vf_eval_nemo(model.base_url, URL, ["demo/add-note/1"])
    assert [e["ok"] for e in episodes] == [True]
    assert [score(e) for e in episodes] == [0.0]


def test_a_server_killed_mid_episode_errs_the_rollout_not_0():
    with server_killed_on_second_turn("webserv-nemo-run-") as (url, kill_on_second_turn):
        with ScriptedModelServer(policy="solve", on_request=kill_on_second_turn) as model:
            episodes = vf_eval_nemo(model.base_url, url, ["demo/add-note/1"])
    assert [e["ok"] for e in episodes] == [False]
    assert score(episodes[0]) is None  # no reward at all, not 0


def test_routes_refuse_without_a_session():
    with ResourcesServer(URL) as resources:
        answer = httpx.post(f"{resources.url}/click", json={"id": 1})
        assert answer.status_code == 400 and "seed_session" in answer.json()["message"]
        answer = httpx.post(f"{resources.url}/seed_session", json={"responses_create_params": {}})
        assert answer.status_code == 400 and "webserv" in answer.json()["message"]
