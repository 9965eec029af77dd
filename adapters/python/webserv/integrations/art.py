"""WebServ as an ART rollout (OpenPipe's ``openpipe-art`` 0.5.18, its core without the
``backend`` extra): :func:`webserv_rollout` plays one task with :func:`webserv.harness.rollout`
on the ``art.Model``'s inference endpoint and returns an ``art.Trajectory``, so ART's own
``TrajectoryGroup`` and ``gather_trajectory_groups`` collect it::

    import art
    from webserv.integrations.art import webserv_rollout

    model = art.Model(name="agent", project="web", inference_model_name="my-model",
                      inference_base_url="http://127.0.0.1:8000/v1", inference_api_key="none")
    groups = await art.gather_trajectory_groups(
        art.TrajectoryGroup(webserv_rollout(model, "demo/add-note/1", server=URL) for _ in range(4))
        for _ in range(1))

The trajectory's ``messages_and_choices`` holds each assistant turn as the ``Choice`` the
endpoint returned (with its logprobs when the endpoint sends them: what ART trains on) and
every other message as sent; ``tools`` holds the tools offered, ``reward`` the verifier's
reward, ``metadata`` the task and the verifier's reason. A failure of ours raises
:class:`webserv.harness.HarnessError`, which ART counts as the group's exception: never a
trajectory with reward 0.
"""

from typing import Any, List, Union

import art
from openai.types.chat.chat_completion import Choice

from ..harness import rollout
from ..types import Task

__all__ = ["webserv_rollout"]


async def webserv_rollout(
    model: art.Model, task: Union[str, Task], *, server: str, max_turns: int = 16, token: str = "",
    **sampling: Any,
) -> art.Trajectory:
    """Plays ``task`` with ``model``'s inference endpoint and returns ART's trajectory of it.

    :param model: the ART model (its ``inference_base_url``, ``inference_api_key`` and inference name)
    :param task: a WebServ task id or :class:`webserv.types.Task`
    :param server: the WebServ server's URL
    :param max_turns: model calls before the episode is cut off (then verified as it stands)
    :param token: the WebServ server's bearer token, if any
    :param sampling: passed on to each chat completion (``temperature``, ``max_tokens``, …)
    :returns: the trajectory, its reward the verifier's
    :raises TypeError: when the model has no inference endpoint
    :raises webserv.harness.HarnessError: on a failure of ours (no trajectory, no reward)
    """
    if not model.inference_base_url:
        raise TypeError(f"Expected an art.Model with an inference_base_url, got {model.name!r} without one")
    result = await rollout(
        task, model.inference_base_url, model.get_inference_name(), server=server, max_turns=max_turns,
        token=token or None, api_key=model.inference_api_key, **sampling,
    )
    choices = iter(result.completions)
    messages_and_choices: List[Any] = []
    for message in result.messages:
        if message.get("role") == "assistant":
            # The assistant turn as the endpoint answered it, so ART trains on its tokens.
            messages_and_choices.append(Choice.model_validate(next(choices)["choices"][0]))
        else:
            messages_and_choices.append(message)
    task_id = result.task.id if result.task else (task.id if isinstance(task, Task) else task)
    return art.Trajectory(
        messages_and_choices=messages_and_choices,
        tools=result.tools,
        reward=result.reward,
        metadata={"task": task_id, "reason": result.verdict.reason},
        metrics={"turns": result.turns},
    ).finish()
