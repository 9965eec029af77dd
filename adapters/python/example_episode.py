"""Runs one episode on a WebServ rollout server with a scripted policy, then a
group rollout and a batch step. The last line printed is the episode's final
reward.

    python3 adapters/python/example_episode.py --server http://127.0.0.1:8800
"""

import argparse
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from webserv_client import WebServClient, WebServEnv  # noqa: E402


def element_id(text: str, pattern: str) -> int:
    """The id on the first observation line matching ``pattern``."""
    for line in text.splitlines():
        if re.search(pattern, line):
            found = re.search(r"\[(\d+)\]", line)
            if found:
                return int(found.group(1))
    raise LookupError(f"No element matches {pattern!r}")


def policy(obs: str, instruction: str, step: int) -> dict:
    """A scripted policy for the demo site's add-note task."""
    wanted = re.search(r'"([^"]+)"', instruction).group(1)
    if step == 0:
        return {"action": "type", "id": element_id(obs, r'textbox "New note"'), "text": wanted}
    if step == 1:
        return {"action": "click", "id": element_id(obs, r'button "Add"')}
    return {"action": "stop", "answer": "done"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--server", action="append", required=True, help="a server URL (repeatable)")
    parser.add_argument("--task", default="demo/add-note/1")
    parser.add_argument("--token", default=os.environ.get("WEBSERV_TOKEN"))
    args = parser.parse_args()

    # A group rollout: two siblings on the same task and seed, stepped in one batch.
    group = WebServEnv.group(args.server, 2, token=args.token, task=args.task)
    client = group[0].client
    for env in group:
        env.reset()
    results = client.batch_step([
        {"session_id": env.session_id, "action": {"action": "reload"}} for env in group
    ])
    print("batch:", [r["result"]["status"] for r in results])
    for env in group:
        env.close()

    # One episode in the reset/step shape.
    with WebServEnv(args.server, task=args.task, token=args.token) as env:
        obs, info = env.reset()
        print("instruction:", info["instruction"])
        reward, done, step = None, False, 0
        while not done and step < 10:
            action = policy(obs, info["instruction"], step)
            next_obs, reward, done, step_info = env.step(action)
            print(f"step {step}: {action['action']} -> {step_info['status']} reward={reward}")
            if step_info["status"] not in ("ok", "action_error"):
                raise SystemExit(f"infrastructure failure: {step_info.get('error')}")
            obs = next_obs if next_obs is not None else obs
            step += 1
    print(reward)


if __name__ == "__main__":
    main()
