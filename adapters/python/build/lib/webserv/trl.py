"""A WebServ environment shaped for TRL's ``GRPOTrainer(environment_factory=...)``
(standard library only; TRL is not imported here)::

    from trl import GRPOTrainer
    from webserv.trl import environment_factory

    with environment_factory("http://127.0.0.1:8800") as factory:
        trainer = GRPOTrainer(model=..., train_dataset=dataset,  # rows carry "task"
                              environment_factory=factory)
        trainer.train()
    # every session the factory opened is closed here

TRL makes one instance per rollout and reuses it: ``reset(**row)`` opens or
resets the instance's session on the row's ``task`` (and ``seed``) and returns
the instruction and the first page text, which TRL appends to the prompt; every
public method is one browser action, a tool whose schema TRL builds from the
signature and docstring; ``get_reward()`` is the task verifier's reward.

Our failures never yield a reward: when the server's side fails under a
rollout (``env_error``, ``timeout``, ``expired``) the tool raises (TRL shows the
model the error) and ``get_reward()`` returns ``None``, which TRL ignores.
"""

import atexit
import logging
import os
import threading
from typing import Any, Callable, Dict, List, Optional

from .client import WebServClient, WebServError
from .env import SessionHandle
from .trajectory import ChatTrajectory

__all__ = ["EnvironmentFactory", "WebServToolEnv", "environment_factory"]

log = logging.getLogger("webserv")


class WebServToolEnv:
    """One rollout's browser: reset by TRL, driven by the model's tool calls.

    Its session is kept alive between rollouts (TRL reuses the instance while
    the optimizer steps) and reopened on the same task if the server reaped it.
    TRL never closes what its factory made: use :func:`environment_factory`,
    which closes every env it made on ``close()`` and at exit.
    """

    def __init__(
        self,
        url: Optional[str] = None,
        task: Optional[str] = None,
        token: Optional[str] = None,
        max_steps: Optional[int] = None,
        timeout: float = 120.0,
        keep_alive: bool = True,
        capacity_wait: float = 300.0,
        observation: Optional[str] = None,
        observation_options: Optional[Dict[str, int]] = None,
        max_chars: Optional[int] = None,
    ):
        self._url = url or os.environ.get("WEBSERV_URL", "http://127.0.0.1:8800")
        self._client = WebServClient(self._url, token, timeout, capacity_wait=capacity_wait)
        self._handle = SessionHandle(self._client, keep_alive=keep_alive)
        self._task = task
        self._max_steps = max_steps
        # What the model reads after each tool call: the server's mode
        # ("text", or "diff": only what changed) and options (summarise_after,
        # keep_items, max_text), and a budget in characters for the whole
        # result, cut with a note saying so (a context window is finite).
        self._observation = {k: v for k, v in (("observation", observation),
                                               ("observation_options", observation_options)) if v is not None}
        if max_chars is not None and max_chars < 100:
            raise ValueError(f"max_chars must be at least 100, got {max_chars}")
        self._max_chars = max_chars
        self._reward: Optional[float] = None
        self._failed = False
        self._done = False
        self._trajectory: Optional[ChatTrajectory] = None

    @property
    def _session(self) -> Optional[str]:
        return self._handle.id

    def reset(self, task: Optional[str] = None, seed: Optional[int] = None, **row: Any) -> str:
        """Starts an episode on the row's task (other row fields, such as the prompt, are ignored)."""
        options: Dict[str, Any] = {}
        if task is not None or self._task is not None:
            options["task"] = task if task is not None else self._task
        if seed is not None:
            options["seed"] = seed
        if self._max_steps is not None:
            options["max_steps"] = self._max_steps
        options.update(self._observation)
        created = self._handle.open_or_reset(**options)
        self._reward, self._failed, self._done = None, False, False
        instruction = created.task.instruction if created.task and created.task.instruction else "Browse the page."
        prompt = self._fit(f"Task: {instruction}\n\n{created.observation.text}")
        self._trajectory = ChatTrajectory(prompt)
        return prompt

    def _fit(self, text: str) -> str:
        if self._max_chars is None or len(text) <= self._max_chars:
            return text
        note = f"\n… ({len(text) - self._max_chars} more characters not shown)"
        return text[: self._max_chars - len(note)] + note

    def get_reward(self) -> Optional[float]:
        """The verifier's reward for the episode; ``None`` when our side failed."""
        if self._failed or self._session is None:
            return None
        if self._reward is None:
            try:
                self._reward = self._handle.verify().reward
            except WebServError as error:
                if error.status == 409:  # a session without a task
                    return 0.0
                return None
        return self._reward

    # Not public: every public method is a tool TRL offers the model.
    def _chat(self) -> Optional[ChatTrajectory]:
        """The episode so far as chat messages with tool calls, its reward once known."""
        if self._trajectory is not None and self._reward is not None:
            self._trajectory.reward = self._reward
        return self._trajectory

    def _close(self) -> None:
        """Closes the session (failures to reach the server are logged, not raised)."""
        try:
            self._handle.close()
        except WebServError as error:
            log.warning("webserv: closing session on %s failed: %s", self._url, error)

    def __enter__(self) -> "WebServToolEnv":
        return self

    def __exit__(self, *exc: Any) -> None:
        self._close()

    def _act(self, action: Dict[str, Any]) -> str:
        if self._session is None:
            raise RuntimeError("The environment was not reset")
        if self._done:
            return "The episode is over: no more actions."
        result = self._handle.step(action).raw
        status = result["status"]
        error = result["info"].get("error") or {}
        if status not in ("ok", "action_error"):
            self._failed = True
            raise RuntimeError(f"The browser failed ({status}: {error.get('message', '')}); not your action")
        self._done = bool(result["done"] or result["truncated"])
        if self._done and "verdict" in result["info"]:
            self._reward = float(result["reward"])
        text = result["observation"]["text"]
        if status == "action_error":
            text = f"Error ({error.get('code')}): {error.get('message')}\n\n{text}"
        shown = self._fit(text + ("\n\nThe episode is over." if self._done else ""))
        if self._trajectory is not None:
            self._trajectory.add(action, shown)
        return shown

    def click(self, id: int) -> str:
        """Click an element.

        Args:
            id: The element's id, the number in brackets in the page text.
        """
        return self._act({"action": "click", "id": id})

    def dblclick(self, id: int) -> str:
        """Double-click an element.

        Args:
            id: The element's id.
        """
        return self._act({"action": "dblclick", "id": id})

    def hover(self, id: int) -> str:
        """Move the mouse over an element.

        Args:
            id: The element's id.
        """
        return self._act({"action": "hover", "id": id})

    def drag(self, id: int, to: Optional[int] = None, dx: Optional[float] = None,
             dy: Optional[float] = None) -> str:
        """Drag an element onto another element, or by an offset in pixels.

        Args:
            id: The element's id.
            to: The id of the element to drop it on (or give dx and dy instead).
            dx: Pixels to the right (negative: left).
            dy: Pixels down (negative: up).
        """
        given = {k: v for k, v in (("to", to), ("dx", dx), ("dy", dy)) if v is not None}
        return self._act({"action": "drag", "id": id, **given})

    def type(self, id: int, text: str, enter: bool = False) -> str:
        """Type text into a field, replacing what it holds.

        Args:
            id: The field's id.
            text: The text to type.
            enter: Whether to press Enter after typing.
        """
        return self._act({"action": "type", "id": id, "text": text, "enter": enter})

    def press(self, keys: str) -> str:
        """Press a key or chord, such as Enter or Control+A.

        Args:
            keys: The key or chord.
        """
        return self._act({"action": "press", "keys": keys})

    def select(self, id: int, option: str) -> str:
        """Choose an option of a select, listbox or combobox by its label.

        Args:
            id: The control's id.
            option: The option's label.
        """
        return self._act({"action": "select", "id": id, "option": option})

    def check(self, id: int) -> str:
        """Check a checkbox, radio or switch.

        Args:
            id: The control's id.
        """
        return self._act({"action": "check", "id": id})

    def uncheck(self, id: int) -> str:
        """Uncheck a checkbox or switch.

        Args:
            id: The control's id.
        """
        return self._act({"action": "uncheck", "id": id})

    def scroll(self, direction: str = "down") -> str:
        """Scroll the page.

        Args:
            direction: One of up, down, left, right.
        """
        return self._act({"action": "scroll", "direction": direction})

    def goto(self, url: str) -> str:
        """Open a URL in the current tab.

        Args:
            url: The URL.
        """
        return self._act({"action": "goto", "url": url})

    def back(self) -> str:
        """Go back in history."""
        return self._act({"action": "back"})

    def forward(self) -> str:
        """Go forward in history."""
        return self._act({"action": "forward"})

    def reload(self) -> str:
        """Reload the page."""
        return self._act({"action": "reload"})

    def switch_tab(self, tab: int) -> str:
        """Switch to a tab.

        Args:
            tab: The tab's index.
        """
        return self._act({"action": "switch_tab", "tab": tab})

    def close_tab(self, tab: int) -> str:
        """Close a tab.

        Args:
            tab: The tab's index.
        """
        return self._act({"action": "close_tab", "tab": tab})

    def upload(self, id: int, files: List[str]) -> str:
        """Set the files of a file input.

        Args:
            id: The file input's id.
            files: The files' names.
        """
        return self._act({"action": "upload", "id": id, "files": files})

    def dialog(self, accept: bool, text: str = "") -> str:
        """Answer the open JavaScript dialog.

        Args:
            accept: Whether to accept it.
            text: The text to enter in a prompt dialog.
        """
        return self._act({"action": "dialog", "accept": accept, **({"text": text} if text else {})})

    def stop(self, answer: str) -> str:
        """End the episode with an answer.

        Args:
            answer: The answer, or a short note that the task is done.
        """
        return self._act({"action": "stop", "answer": answer})


class EnvironmentFactory:
    """Makes :class:`WebServToolEnv` instances for TRL and closes them all:
    on :meth:`close`, on leaving a ``with`` block, and at interpreter exit."""

    def __init__(self, make: Callable[[], WebServToolEnv]):
        self._make = make
        self._lock = threading.Lock()
        self.envs: List[WebServToolEnv] = []
        """Every env made and not yet closed."""
        atexit.register(self.close)

    def __call__(self) -> WebServToolEnv:
        env = self._make()
        with self._lock:
            self.envs.append(env)
        return env

    def close(self) -> None:
        """Closes every env made (their sessions on the server)."""
        with self._lock:
            envs, self.envs = self.envs, []
        for env in envs:
            env._close()

    def __enter__(self) -> "EnvironmentFactory":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def environment_factory(url: Optional[str] = None, **options: Any) -> EnvironmentFactory:
    """A factory for ``GRPOTrainer(environment_factory=...)`` that closes what it makes.

    ``options`` are :class:`WebServToolEnv`'s (``task``, ``token``, ``max_steps``, …)."""
    return EnvironmentFactory(lambda: WebServToolEnv(url, **options))
