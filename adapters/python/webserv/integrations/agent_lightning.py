"""WebServ as an Agent Lightning agent: a ``LitAgent`` whose rollout is
:func:`webserv.harness.rollout` on the LLM resource the trainer hands it (``agentlightning``
0.3.0, the last release that installs on Python 3.10 and 3.11)::

    import agentlightning as agl
    from webserv.integrations.agent_lightning import webserv_agent

    agent = webserv_agent("http://127.0.0.1:8800")
    trainer = agl.Trainer(n_runners=2, initial_resources={
        "main_llm": agl.LLM(endpoint="http://127.0.0.1:8000/v1", model="my-model")})
    trainer.dev(agent, train_dataset=[{"task": "demo/add-note/1"}])

A task is a dict with ``task`` (a WebServ task id). The rollout's float return is the
verifier's reward, which Agent Lightning records as the rollout's final reward. When the
trainer's LLM is a ``ProxyLLM`` the agent calls the per-rollout URL, so the proxy attributes
every token to the rollout. A failure of ours (server, session, endpoint) raises
:class:`webserv.harness.HarnessError`: Agent Lightning marks the attempt failed, and no reward
is recorded (never 0); the error is also emitted into the attempt's trace as an exception span.
Agent Lightning's default tracer (AgentOps) reports to AgentOps' cloud; on a machine that must
stay on loopback pass ``tracer=agl.OtelTracer()``.
"""

from typing import Any, Dict

import agentlightning as agl

from ..harness import HarnessError, rollout

__all__ = ["webserv_agent"]


def webserv_agent(server: str, *, max_turns: int = 16, token: str = "", **sampling: Any) -> agl.LitAgent:
    """An Agent Lightning agent that plays WebServ tasks on the trainer's LLM.

    :param server: the WebServ server's URL
    :param max_turns: model calls before an episode is cut off (then verified as it stands)
    :param token: the WebServ server's bearer token, if any
    :param sampling: passed on to each chat completion (``temperature``, ``max_tokens``, …)
    :returns: the agent, for ``Trainer.dev`` or ``Trainer.fit``
    """

    @agl.rollout
    async def webserv(task: Dict[str, Any], llm: agl.LLM) -> float:
        if not isinstance(task, dict) or not isinstance(task.get("task"), str):
            raise TypeError(f'Expected a task like {{"task": "demo/add-note/1"}}, got {task!r}')
        params = dict(llm.sampling_parameters or {}, **sampling)
        try:
            result = await rollout(task["task"], llm.endpoint, llm.model, server=server, max_turns=max_turns,
                                   token=token or None, api_key=llm.api_key or None, **params)
        except HarnessError as error:
            # Into the rollout's trace as an exception span, so the failed attempt says why (and
            # Agent Lightning's trace adapters, which refuse an attempt with no span, can read it).
            agl.emit_exception(error, {"webserv.task": task["task"]})
            raise
        return result.reward

    return webserv
