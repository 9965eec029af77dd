"""WebServ as a verl agent loop (``verl`` 0.9.1, ``verl.experimental.agent_loop``):
:class:`WebServAgentLoop`, registered as ``"webserv_agent"``, plays one dataset row's task with
:func:`webserv.harness.rollout` on an OpenAI-compatible endpoint and returns verl's
``AgentLoopOutput``, its ``reward_score`` the verifier's reward.

verl's agent-loop workers are Ray actors that build each loop by name from a registry, so
list it in an agent-loop config file (imported by its ``_target_`` in the worker)::

    # webserv_agent.yaml, passed as actor_rollout_ref.rollout.agent.agent_loop_config_path
    - name: webserv_agent
      _target_: webserv.integrations.verl.WebServAgentLoop

A row names the loop and its task; the WebServ server, the endpoint (the rollout servers' HTTP
address, or a proxy in front of them) and the model name come from the row or from the
trainer config's ``webserv`` section (``+webserv.server=... +webserv.base_url=...
+webserv.model=...`` on verl's command line)::

    {"prompt": [...], "agent_name": "webserv_agent",
     "extra_info": {"webserv": {"task": "demo/add-note/1"}}}

The token ids come from verl's own Continuous Token builder (the one verl picks for the
model): the first prompt is rendered from the system and task messages with the tools, each
run of tool results is merged as context (mask 0), and each assistant turn is appended as the
endpoint's ``token_ids`` when it returns them (vLLM's ``return_token_ids``), else as the chat
template's rendering of the message (mask 1); logprobs are kept when every turn carries them.
A failure of ours (server, session, endpoint) raises :class:`webserv.harness.HarnessError` out
of ``run``: verl's worker fails the batch instead of training on a reward of 0.
"""

from typing import Any, Dict, List, Optional

from verl.experimental.agent_loop.agent_loop import AgentLoopBase, AgentLoopMetrics, AgentLoopOutput, register

from ..harness import rollout

__all__ = ["WebServAgentLoop"]

# verl's sampling parameters that mean the same in a chat completion request.
_SAMPLING = ("temperature", "top_p", "top_k", "repetition_penalty")


def _setting(name: str, row: Dict[str, Any], config: Any) -> Optional[str]:
    """A setting from the row's ``extra_info.webserv``, else from the trainer config's ``webserv``."""
    value = row.get(name)
    if value is None and config is not None:
        value = config.get(name)
    return None if value is None else str(value)


@register("webserv_agent")
class WebServAgentLoop(AgentLoopBase):
    """verl's agent loop over a WebServ task: the harness-native flow, its reward the verifier's."""

    async def run(self, sampling_params: Dict[str, Any], **kwargs: Any) -> AgentLoopOutput:
        """Plays the row's task and returns the tokens, masks and reward verl trains on.

        :param sampling_params: verl's sampling parameters (``temperature``, ``top_p``, …), sent with
            each chat completion
        :param kwargs: the dataset row's fields; ``extra_info["webserv"]["task"]`` names the task
        :returns: the agent loop's output, ``reward_score`` the verifier's reward
        :raises TypeError: when the row names no task or no server, endpoint or model is set
        :raises webserv.harness.HarnessError: on a failure of ours (no output, no reward)
        """
        extra = kwargs.get("extra_info") or {}
        row = dict(extra.get("webserv") or {}) if isinstance(extra, dict) else {}
        config = self.config.get("webserv") if hasattr(self.config, "get") else None
        task = _setting("task", row, None)
        server = _setting("server", row, config)
        base_url = _setting("base_url", row, config)
        model = _setting("model", row, config)
        if not task or not server or not base_url or not model:
            raise TypeError(
                'Expected extra_info["webserv"]["task"] in the row and server, base_url and model in the row or '
                f"in the trainer config's webserv section, got task={task!r} server={server!r} "
                f"base_url={base_url!r} model={model!r}"
            )
        sampling = {k: sampling_params[k] for k in _SAMPLING if sampling_params.get(k) is not None}
        if sampling.get("top_k") == -1:
            del sampling["top_k"]  # verl's "no top-k"; OpenAI-compatible servers want it absent
        if sampling_params.get("logprobs"):
            sampling["logprobs"] = True
        result = await rollout(task, base_url, model, server=server, **sampling)
        tools = result.tools or None
        messages = result.messages
        runtime_ids = list(await self.ct_build_initial_tokens(messages[:2], tools=tools))
        prompt_length = len(runtime_ids)
        mask: List[int] = []
        choices = [completion["choices"][0] for completion in result.completions]
        # Logprobs only when every turn's sampled ids came back with one logprob each: partial ones
        # are worse than none.
        keep = bool(choices) and all(
            c.get("token_ids") and len(_logprobs(c) or []) == len(c["token_ids"]) for c in choices
        )
        logprobs: Optional[List[float]] = [] if keep else None
        turns = iter(choices)
        index = 2
        while index < len(messages):
            if messages[index].get("role") == "assistant":
                choice = next(turns)
                ids = choice.get("token_ids") or self._assistant_ids(messages[:index], messages[index], tools)
                merged, mask, logprobs = await self.ct_merge_assistant_token(
                    runtime_ids, ids, mask, logprobs, assistant_logprobs=_logprobs(choice) if keep else None,
                )
                index += 1
            else:
                # The context messages up to the next assistant turn (tool results), merged as one append.
                end = index
                while end < len(messages) and messages[end].get("role") != "assistant":
                    end += 1
                if end == len(messages):
                    break  # results after the last turn prompt nothing: no tokens were generated on them
                merged, mask, logprobs = await self.ct_merge_context_msg(
                    messages[:index], messages[:end], runtime_ids, mask, logprobs, tools=tools,
                )
                index = end
            runtime_ids = merged.token_ids
        limit = self.rollout_config.response_length
        return AgentLoopOutput(
            prompt_ids=runtime_ids[:prompt_length],
            response_ids=runtime_ids[prompt_length:][:limit],
            response_mask=mask[:limit],
            response_logprobs=logprobs[:limit] if logprobs else None,
            reward_score=result.reward,
            num_turns=len(messages),
            metrics=AgentLoopMetrics(),
            extra_fields={"webserv": {"task": task, "reason": result.verdict.reason, "turns": result.turns}},
        )

    def _assistant_ids(self, before: List[Dict[str, Any]], message: Dict[str, Any], tools: Any) -> List[int]:
        """The chat template's tokens of one assistant message after ``before`` (what the model's
        turn renders to, when the endpoint did not return its sampled ids)."""
        kwargs = dict(self.apply_chat_template_kwargs or {})
        head = self.tokenizer.apply_chat_template(before, tools=tools, add_generation_prompt=True, tokenize=True,
                                                  return_dict=False, **kwargs)
        whole = self.tokenizer.apply_chat_template(before + [message], tools=tools, add_generation_prompt=False,
                                                   tokenize=True, return_dict=False, **kwargs)
        if list(whole[:len(head)]) != list(head):
            raise ValueError("The chat template does not render an assistant turn as an extension of its prompt")
        return list(whole[len(head):])


def _logprobs(choice: Dict[str, Any]) -> Optional[List[float]]:
    """The sampled tokens' logprobs of an OpenAI-format choice, if it carries them."""
    content = ((choice.get("logprobs") or {}).get("content")) or None
    return [float(item["logprob"]) for item in content] if content else None
