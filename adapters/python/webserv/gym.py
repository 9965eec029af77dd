"""A gymnasium environment on the WebServ rollout server (needs ``gymnasium``;
``webserv_client`` itself stays standard library only)::

    import gymnasium as gym
    import webserv.gym  # registers "WebServ-v0"

    env = gym.make("WebServ-v0", url="http://127.0.0.1:8800", task="demo/add-note/1")
    obs, info = env.reset(seed=3)
    obs, reward, terminated, truncated, info = env.step('{"action": "click", "id": 2}')

Observations and actions are text: the page text the agent reads, and an
action as JSON (a dict is taken too). ``terminated`` is true when the agent
stopped (``{"action": "stop"}``), ``truncated`` when ``max_steps`` ran out;
the reward is the task verifier's on the step that ends the episode, else 0.
A malformed action is the agent's fault: reward 0, ``info["status"]`` is
``action_error`` and the episode goes on.

Our failures never yield a reward: when the server's side fails (a crashed
browser, a lost sandbox: ``env_error``, ``timeout``, ``expired``) ``step``
raises :class:`WebServEnvError`; drop that episode and ``reset()`` to go on.

The observation text is the same for the same task and seed, across resets
and processes: the sandbox instance's origin (its random host name and port)
is written as ``http://<site>.webserv``, and ``info`` holds only what a replay
repeats (status, step, error, verdict, answer, url). The server's JSON answer,
hosts and timings included, is ``env.unwrapped.last_result``.
"""

import json
import re
from collections.abc import Sequence
from typing import Any, Dict, List, Optional, Tuple, Union

import gymnasium
import numpy as np
from gymnasium import spaces
from gymnasium.vector.utils import create_shared_memory, read_from_shared_memory, write_to_shared_memory

from .client import WebServClient, WebServError, choose
from .env import SessionHandle

__all__ = ["PageText", "SharedPageTexts", "WebServEnvError", "WebServGymEnv", "stable_text"]

MAX_TEXT = 1 << 20
RESET_OPTIONS = ("task", "max_steps", "observation", "viewport")


class WebServEnvError(RuntimeError):
    """The server's side failed under a step (``env_error``, ``timeout`` or
    ``expired``): not the agent's doing, and never a reward."""

    def __init__(self, status: str, code: str, message: str):
        super().__init__(f"{status} ({code}): {message}")
        self.status = status
        self.code = code
        self.message = message


class PageText(spaces.Text):
    """Text of any characters (a page's text is not alphanumeric), up to ``max_length``."""

    def contains(self, x: Any) -> bool:
        return isinstance(x, str) and self.min_length <= len(x) <= self.max_length


# gymnasium's AsyncVectorEnv moves observations through shared memory, and
# its Text support writes each character's index in the space's charset: a
# page character outside that charset fails (KeyError). A PageText is kept
# there as Unicode code points plus one (0 pads), so any text up to
# max_length crosses unchanged.
@create_shared_memory.register(PageText)
def _create_page_text_memory(space: PageText, n: int = 1, ctx: Any = None) -> Any:
    import multiprocessing

    return (ctx or multiprocessing).Array(np.dtype(np.int32).char, n * space.max_length)


@write_to_shared_memory.register(PageText)
def _write_page_text(space: PageText, index: int, value: str, shared_memory: Any) -> None:
    size = space.max_length
    destination = np.frombuffer(shared_memory.get_obj(), dtype=np.int32)[index * size:(index + 1) * size]
    codes = np.frombuffer(value.encode("utf-32-le"), dtype=np.int32) + 1
    destination[: len(codes)] = codes
    destination[len(codes):] = 0


class SharedPageTexts(Sequence):
    """The texts in an AsyncVectorEnv's shared memory, read when indexed.

    gymnasium reads the shared observations once, when the vector env is made,
    and expects a view that follows later writes (a numpy array does); a
    tuple of strings would stay as it was. This reads the memory on each
    access, and a copy (``copy=True``, the default) is a tuple of the texts."""

    def __init__(self, space: PageText, shared_memory: Any, n: int):
        self._rows = np.frombuffer(shared_memory.get_obj(), dtype=np.int32).reshape((n, space.max_length))

    def __len__(self) -> int:
        return len(self._rows)

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            return tuple(self[i] for i in range(*index.indices(len(self))))
        row = self._rows[index]
        length = int(np.argmin(row)) if row[-1] == 0 else len(row)
        return (row[:length] - 1).astype(np.int32).tobytes().decode("utf-32-le")

    def __eq__(self, other: object) -> bool:
        return isinstance(other, (tuple, list, SharedPageTexts)) and tuple(self) == tuple(other)

    def __repr__(self) -> str:
        return repr(tuple(self))

    def __deepcopy__(self, memo: Dict[int, Any]) -> Tuple[str, ...]:
        return tuple(self)


@read_from_shared_memory.register(PageText)
def _read_page_text(space: PageText, shared_memory: Any, n: int = 1) -> SharedPageTexts:
    return SharedPageTexts(space, shared_memory, n)


def _origin(url: str) -> Optional[str]:
    match = re.match(r"^(https?://[^/]+)", url or "")
    return match.group(1) if match else None


def stable_text(observation: Dict[str, Any], site: Optional[str]) -> str:
    """The observation text with the sandbox instance's origin written as
    ``http://<site>.webserv``, so it does not change between instances.
    Without a site (a bare-URL session) the text is left as it is."""
    text = observation["text"]
    if not site:
        return text
    origins = {_origin(observation.get("url", ""))}
    origins.update(_origin(tab.get("url", "")) for tab in observation.get("tabs", []))
    for origin in sorted((o for o in origins if o), key=len, reverse=True):
        text = text.replace(origin, f"http://{site}.webserv")
    return text


class WebServGymEnv(gymnasium.Env):
    """One WebServ session as a ``gymnasium.Env`` (text in, text out)."""

    metadata = {"render_modes": []}

    def __init__(
        self,
        url: Union[str, Tuple[str, ...], list] = "http://127.0.0.1:8800",
        task: Optional[str] = None,
        site: Optional[str] = None,
        template: Optional[str] = None,
        seed: Optional[int] = None,
        max_steps: Optional[int] = None,
        token: Optional[str] = None,
        timeout: float = 120.0,
        max_text: int = MAX_TEXT,
        keep_alive: bool = True,
    ):
        self.urls = [url] if isinstance(url, str) else list(url)
        self.token = token
        self.timeout = timeout
        self.spec_args = {k: v for k, v in {
            "task": task, "site": site, "template": template, "seed": seed, "max_steps": max_steps,
        }.items() if v is not None}
        self.observation_space = PageText(max_length=max_text, min_length=0)
        self.action_space = PageText(max_length=4096, min_length=0)
        self.keep_alive = keep_alive
        self.client: Optional[WebServClient] = None
        self.handle: Optional[SessionHandle] = None
        self.session_id: Optional[str] = None
        self.site: Optional[str] = site
        self.instruction: Optional[str] = None
        self.last_result: Optional[Dict[str, Any]] = None
        self.forks: List["WebServGymEnv"] = []
        """The forks this env made; its close closes them."""

    def reset(
        self, *, seed: Optional[int] = None, options: Optional[Dict[str, Any]] = None,
    ) -> Tuple[str, Dict[str, Any]]:
        """Starts an episode: on ``seed`` when given (the task's site and
        template on that seed), with ``options`` ``task``, ``max_steps``,
        ``observation``, ``viewport``. The first call opens the session."""
        super().reset(seed=seed)
        options = dict(options or {})
        unknown = set(options) - set(RESET_OPTIONS)
        if unknown:
            raise ValueError(f"Unknown reset options {sorted(unknown)}: use {list(RESET_OPTIONS)}")
        change = {k: v for k, v in options.items() if v is not None}
        if seed is not None:
            change["seed"] = seed
        if self.handle is None:
            self.client = self.client or choose(self.urls, self.token)
            self.client.timeout = self.timeout
            self.handle = SessionHandle(self.client, self.spec_args, self.keep_alive)
        created = self.handle.open_or_reset(**change)
        self.session_id = created.id
        created = created.raw
        task = created.get("task") or {}
        self.site = task.get("site") or self.site
        self.instruction = task.get("instruction")
        observation = created["observation"]
        self.last_result = created
        info = {"task_id": task.get("id"), "instruction": self.instruction, "session": self.session_id}
        return stable_text(observation, self.site), info

    def step(self, action: Union[str, Dict[str, Any]]) -> Tuple[str, float, bool, bool, Dict[str, Any]]:
        """Takes one action (JSON text or a dict); raises
        :class:`WebServEnvError` when the server's side fails."""
        if self.session_id is None or self.client is None:
            raise RuntimeError("Call reset() before step()")
        if isinstance(action, str):
            try:
                parsed = json.loads(action)
            except ValueError:
                parsed = None
            # Text that is not a JSON object goes to the server as it is, which
            # refuses it as the agent's action_error.
            action = parsed if isinstance(parsed, dict) else {"action": action}
        result = self.client.step(self.session_id, action).raw
        status = result["status"]
        error = result["info"].get("error") or {}
        if status not in ("ok", "action_error"):
            raise WebServEnvError(status, error.get("code", status), error.get("message", ""))
        observation = result["observation"]
        self.last_result = result
        # info holds what is the same on a replay (no timings, no instance
        # host); the server's whole answer is self.last_result.
        keep = ("step", "error", "verdict", "answer")
        info = {key: result["info"][key] for key in keep if key in result["info"]}
        info.update(status=status, url=stable_text({"text": observation["url"], **observation}, self.site))
        return (
            stable_text(observation, self.site),
            float(result["reward"]),
            bool(result["done"]),
            bool(result["truncated"]),
            info,
        )

    def fork(self, n: int = 1) -> List["WebServGymEnv"]:
        """Forks the live episode ``n`` ways: envs on new sessions, each on a copy of the site
        and browser state, mid-episode (``step()`` goes on from the copy; ``reset()`` starts
        the task over). A fork's ``last_result`` is the server's answer, its first observation
        under ``"observation"``. The forks close with this env; raises
        :class:`webserv.WebServForkError` when the episode ended or the backend cannot fork."""
        if self.session_id is None or self.client is None:
            raise RuntimeError("Call reset() before fork()")
        forks = []
        for session in self.client.fork(self.session_id, n):
            fork = WebServGymEnv(self.client.url, token=self.token, timeout=self.timeout,
                                 keep_alive=self.keep_alive)
            fork.spec_args = dict(self.spec_args)
            fork.observation_space, fork.action_space = self.observation_space, self.action_space
            fork.client = self.client
            fork.handle = SessionHandle(self.client, fork.spec_args, self.keep_alive, session)
            fork.session_id = session.id
            fork.site, fork.instruction, fork.last_result = self.site, self.instruction, session.raw
            forks.append(fork)
        self.forks.extend(forks)
        return forks

    def close(self) -> None:
        """Closes the session and the forks it made; a server already gone is not an error here."""
        forks, self.forks = self.forks, []
        for fork in forks:
            fork.close()
        if self.handle is not None:
            try:
                self.handle.close()
            except WebServError as error:
                if error.status not in (0, 404, 410):
                    raise
        self.session_id = None
        super().close()


gymnasium.register("WebServ-v0", entry_point=WebServGymEnv)
