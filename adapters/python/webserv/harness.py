"""The harness-native flow: any agent program on an OpenAI-compatible endpoint
drives one WebServ session with native tool calls and reports the verifier's
reward (standard library only)::

    import asyncio
    from webserv.harness import rollout

    result = asyncio.run(rollout("demo/add-note/1", "http://127.0.0.1:8000/v1", "my-model",
                                 server="http://127.0.0.1:8800"))
    print(result.reward, len(result.messages))

This is the shape RL frameworks that record tokens at a per-rollout endpoint
expect (verl's agent loop, rLLM's AgentFlow, Agent Lightning, ART): the
trainer hands the agent a base URL and a model name, the proxy behind that URL
records every token, and the agent returns a reward. Two rules keep it
trainable:

- each turn's prompt is a strict extension of the last: messages are only
  appended (the assistant message exactly as the endpoint returned it, then
  one tool result per call), so the token history stays continuous and the
  trainer can treat the whole episode as one sequence;
- an infrastructure failure (the WebServ server, the session or the endpoint
  failing) raises :class:`HarnessError`; it is never a reward of 0.

The tools are the server's own definitions (``GET /v1/tools?format=openai``);
the reward comes from ``POST /v1/sessions/{id}/verify``.
"""

import asyncio
import json
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Union

from .aio import AsyncWebServClient
from .client import WebServError, WebServNetworkError
from .types import Task, Verdict

__all__ = ["HarnessError", "Rollout", "SYSTEM_PROMPT", "chat_completion", "rollout"]

SYSTEM_PROMPT = (
    "You operate a web browser through tools. Each observation lists the page; elements you can act on "
    "carry an id in brackets, like [3]. Call one tool at a time. When the task is done, call stop with "
    "your answer."
)
"""The system message a rollout starts with, unless the caller gives its own."""


class HarnessError(RuntimeError):
    """A rollout failed on the infrastructure's side (WebServ server, session or
    model endpoint): the rollout has no reward and must not be scored."""


@dataclass
class Rollout:
    """One finished rollout: the reward, the verifier's verdict and the conversation."""

    reward: float
    verdict: Verdict
    messages: List[Dict[str, Any]]
    """The whole conversation, append-only: the last request's messages plus its answer and tool results."""
    turns: int
    task: Optional[Task] = None
    completions: List[Dict[str, Any]] = field(default_factory=list)
    """Each chat completion response as the endpoint returned it (usage, token ids when the proxy adds them)."""
    tools: List[Dict[str, Any]] = field(default_factory=list)
    """The tool definitions every request offered (OpenAI's function format), for a chat template."""


def _post_json(url: str, body: Dict[str, Any], api_key: Optional[str], timeout: float) -> Dict[str, Any]:
    headers = {"content-type": "application/json", "accept": "application/json"}
    if api_key:
        headers["authorization"] = f"Bearer {api_key}"
    request = urllib.request.Request(url, json.dumps(body).encode("utf-8"), headers, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return json.loads(response.read().decode("utf-8"))
    except urllib.error.HTTPError as error:
        detail = error.read().decode("utf-8", "replace")[:500]
        raise HarnessError(f"The model endpoint refused the request: {url}: HTTP {error.code}: {detail}") from None
    except (urllib.error.URLError, OSError, ValueError) as error:
        raise HarnessError(f"The model endpoint is unreachable: {url}: {error}") from error


async def chat_completion(
    base_url: str, model: str, messages: List[Dict[str, Any]], tools: List[Dict[str, Any]],
    api_key: Optional[str] = None, timeout: float = 300.0, **sampling: Any,
) -> Dict[str, Any]:
    """One ``POST {base_url}/chat/completions`` with tools.

    :param base_url: the OpenAI-compatible base URL (``http://host:port/v1``)
    :param model: the model name
    :param messages: the conversation
    :param tools: the tool definitions
    :param api_key: a bearer token, if the endpoint wants one
    :param timeout: seconds before the call fails
    :returns: the response's JSON
    :raises HarnessError: when the endpoint is unreachable, refuses, or answers without a choice
    """
    body = dict(sampling, model=model, messages=messages, tools=tools)
    url = base_url.rstrip("/") + "/chat/completions"
    response = await asyncio.to_thread(_post_json, url, body, api_key, timeout)
    if not isinstance(response, dict) or not response.get("choices"):
        raise HarnessError(f"The model endpoint answered without a choice: {url}: {str(response)[:300]}")
    return response


def _action(call: Dict[str, Any]) -> Union[Dict[str, Any], str]:
    """A tool call as a WebServ action, or the reason it is not one (the agent's error)."""
    function = call.get("function") or {}
    name = function.get("name")
    try:
        arguments = json.loads(function.get("arguments") or "{}")
    except ValueError as error:
        return f"Error: the arguments of {name!r} are not JSON: {error}"
    if not isinstance(name, str) or not isinstance(arguments, dict):
        return f"Error: expected a tool name and an object of arguments, got {function!r}"
    # The strict tool schemas make optional fields nullable: null leaves them out.
    return dict({k: v for k, v in arguments.items() if v is not None}, action=name)


async def rollout(
    task: Union[str, Task], base_url: str, model: str, *, server: str, api_key: Optional[str] = None,
    max_turns: int = 16, system_prompt: str = SYSTEM_PROMPT, token: Optional[str] = None,
    model_timeout: float = 300.0, **sampling: Any,
) -> Rollout:
    """Runs one episode of ``task`` with the model at ``base_url`` and returns its reward.

    :param task: a task id (``"demo/add-note/1"``) or a :class:`Task`
    :param base_url: the OpenAI-compatible base URL the agent calls (a trainer's per-rollout proxy)
    :param model: the model name sent with each request
    :param server: the WebServ server's URL
    :param api_key: the model endpoint's bearer token, if any
    :param max_turns: model calls before the episode is cut off (then verified as it stands)
    :param system_prompt: the first message
    :param token: the WebServ server's bearer token, if any
    :param model_timeout: seconds each model call may take
    :param sampling: passed on to each chat completion (``temperature``, ``max_tokens``, …)
    :returns: the reward, verdict and conversation
    :raises HarnessError: on any infrastructure failure; the rollout then has no reward
    """
    task_id = task.id if isinstance(task, Task) else task
    client = AsyncWebServClient(server, token=token)
    try:
        tools = (await client.request("GET", "/v1/tools?format=openai"))["tools"]
        session = await client.create_session(task=task_id)
    except (WebServError, WebServNetworkError) as error:
        await client.disconnect()
        raise HarnessError(f"Could not open a session on {task_id!r}: {error}") from error
    try:
        instruction = session.task.instruction if session.task else ""
        messages: List[Dict[str, Any]] = [
            {"role": "system", "content": system_prompt},
            {"role": "user", "content": f"Task: {instruction}\n\n{session.observation.text}"},
        ]
        completions: List[Dict[str, Any]] = []
        turns = 0
        done = False
        while not done and turns < max_turns:
            response = await chat_completion(base_url, model, list(messages), tools, api_key, model_timeout,
                                             **sampling)
            completions.append(response)
            turns += 1
            message = response["choices"][0].get("message") or {}
            # Appended exactly as returned, so the next prompt extends this one token for token.
            messages.append(message)
            calls = message.get("tool_calls") or []
            if not calls:
                break
            for call in calls:
                if done:
                    content = "Error: the episode has ended"
                else:
                    action = _action(call)
                    content = action if isinstance(action, str) else await _step(client, session.id, action)
                    done = content is _DONE or done
                    if content is _DONE:
                        content = "The episode has ended."
                messages.append({"role": "tool", "tool_call_id": call.get("id", ""), "content": content})
        try:
            verdict = await client.verify(session.id)
        except (WebServError, WebServNetworkError) as error:
            raise HarnessError(f"Could not verify session {session.id}: {error}") from error
        return Rollout(verdict.reward, verdict, messages, turns, session.task, completions, tools)
    finally:
        try:
            await client.close(session.id)
        except (WebServError, WebServNetworkError):
            pass  # already gone: the server reaps it, and the verdict (or the error) stands
        await client.disconnect()


class _Done(str):
    pass


_DONE = _Done("done")


async def _step(client: AsyncWebServClient, session: str, action: Dict[str, Any]) -> str:
    """Steps the session; returns the tool result text, or ``_DONE`` when the episode ended."""
    try:
        result = await client.step(session, action)
    except WebServError as error:
        if error.status == 400:  # the action did not parse: the agent's error
            return f"Error: {error.message}"
        raise HarnessError(f"Step failed on session {session}: {error}") from error
    except WebServNetworkError as error:
        raise HarnessError(f"Step failed on session {session}: {error}") from error
    if result.ours:
        raise HarnessError(f"Step failed on the server's side ({result.status}): {result.info}")
    if result.done or result.truncated:
        return _DONE
    text = result.observation.text if result.observation else ""
    if result.status == "action_error":
        error = result.info.get("error")
        reason = error.get("message", error) if isinstance(error, dict) else error
        return f"Error: {reason}\n\n{text}"
    return text
