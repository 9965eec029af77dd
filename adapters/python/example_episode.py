"""Runs one episode on a WebServ rollout server with a scripted policy, then a
group rollout and a batch step. The last line printed is the episode's final
reward.

    python3 adapters/python/example_episode.py --server http://127.0.0.1:8800
"""

import argparse
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from webserv import WebServClient, WebServEnv  # noqa: E402


def element_id(observation: dict, role: str, name: str) -> int:
    """The id of the element of the JSON observation with this role and name."""
    for element in observation.get("elements", []):
        if element.get("role") == role and element.get("name") == name:
            return int(element["id"])
    raise LookupError(f"No {role} named {name!r} in the observation")


def members(observation: dict, slug: str) -> int:
    """The member count on the forums table's row of ``f/slug``.

    A row reads: [id] f/slug → /f/slug | description | members | posts.
    """
    link = element_id(observation, "link", f"f/{slug}")
    for line in observation["text"].splitlines():
        if line.strip().startswith(f"[{link}]"):
            cells = [cell.strip() for cell in line.split("|")]
            return int(cells[-2])
    raise LookupError(f"No table row for f/{slug}")


def policy(observation: dict, instruction: str, step: int) -> dict:
    """A scripted policy for the forum's bigger-forum task: open the forums
    list, read the members of the two forums the instruction names, answer
    how many more the bigger one has."""
    slugs = re.findall(r"f/([a-z0-9]+)", instruction)[:2]
    if step == 0:
        return {"action": "click", "id": element_id(observation, "link", "Forums")}
    counts = [members(observation, slug) for slug in slugs]
    return {"action": "stop", "answer": str(abs(counts[0] - counts[1]))}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--server", action="append", required=True, help="a server URL (repeatable)")
    parser.add_argument("--task", default="forum/bigger-forum/1")
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
    # The policy reads the JSON observation: info["observation"] holds its elements.
    with WebServEnv(args.server, task=args.task, token=args.token, observation="json") as env:
        _, info = env.reset()
        observation = info["observation"]
        print("instruction:", info["instruction"])
        reward, done, step = None, False, 0
        while not done and step < 10:
            action = policy(observation, info["instruction"], step)
            _, reward, done, step_info = env.step(action)
            print(f"step {step}: {json.dumps(action)} -> {step_info['status']} reward={reward}")
            if step_info["status"] not in ("ok", "action_error"):
                raise SystemExit(f"infrastructure failure: {step_info.get('error')}")
            observation = step_info["observation"] or observation
            step += 1
    print(reward)


if __name__ == "__main__":
    main()
