"""WebServ behind rLLM's model gateway (``rllm-model-gateway`` 0.1.0, the part of rLLM on
PyPI; ``rllm`` itself is not published there): :func:`gateway_rollout` opens a gateway
session, runs :func:`webserv.harness.rollout` on that session's OpenAI-compatible URL, and
returns the rollout with the traces the gateway recorded for it (each call's messages,
response, and the token ids and logprobs the inference server returned), the data rLLM's
trainer turns into training sequences::

    from webserv.integrations.rllm import gateway_rollout

    result, traces = await gateway_rollout("demo/add-note/1", "http://127.0.0.1:9090", "my-model",
                                           server="http://127.0.0.1:8800")

The gateway (``rllm-model-gateway --host 127.0.0.1 --port 9090 --worker http://127.0.0.1:8000/v1``)
sits in front of vLLM, or of the scripted model server in tests. A failure of ours raises
:class:`webserv.harness.HarnessError` (no reward; the gateway keeps the partial traces); a
gateway that refuses a session raises ``httpx.HTTPStatusError``.
"""

from typing import Any, List, Tuple, Union

from rllm_model_gateway import AsyncGatewayClient, TraceRecord

from ..harness import Rollout, rollout
from ..types import Task

__all__ = ["gateway_rollout"]


async def gateway_rollout(
    task: Union[str, Task], gateway: str, model: str, *, server: str, max_turns: int = 16, token: str = "",
    **sampling: Any,
) -> Tuple[Rollout, List[TraceRecord]]:
    """Plays ``task`` through a session of rLLM's model gateway; returns the rollout and its traces.

    :param task: a WebServ task id or :class:`webserv.types.Task`
    :param gateway: the gateway's URL (``http://127.0.0.1:9090``)
    :param model: the model name sent with each request
    :param server: the WebServ server's URL
    :param max_turns: model calls before the episode is cut off (then verified as it stands)
    :param token: the WebServ server's bearer token, if any
    :param sampling: passed on to each chat completion (``temperature``, ``max_tokens``, …)
    :returns: the rollout (its reward the verifier's) and the gateway's traces, one per model call
    :raises webserv.harness.HarnessError: on a failure of ours (no reward)
    """
    task_id = task.id if isinstance(task, Task) else task
    async with AsyncGatewayClient(gateway) as client:
        session = await client.create_session(metadata={"webserv_task": task_id})
        result = await rollout(task, client.get_session_url(session), model, server=server, max_turns=max_turns,
                               token=token or None, **sampling)
        traces = await client.get_session_traces(session)
    return result, traces
