"""One session that outlives a training loop, and the reset/step env on it.

A :class:`SessionHandle` is what every env of this package (the plain
:class:`WebServEnv`, the gymnasium env, TRL's tool env, the Ray pool's
sessions) holds: it opens its session on the first reset, keeps its lease
alive while held (:mod:`webserv.keepalive`), and when a reset finds the
session gone (reaped after a pause longer than the lease, the server
restarted its sessions, a hard lifetime passed) opens a new one on the same
task and seed, logs it and counts it in ``revived``. Asking for more
sessions than the server has free waits (see ``WebServClient.capacity_wait``).
"""

import logging
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

from .client import WebServClient, WebServError, _clean, choose, place
from .keepalive import keepalive as _keepalive
from .types import Session, StepResult, Verdict

__all__ = ["SessionHandle", "WebServEnv"]

log = logging.getLogger("webserv")

# What a reset may change without opening a new session (the server's ResetRequest).
RESET_KEYS = ("seed", "task", "max_steps", "observation", "observation_options", "viewport")


class SessionHandle:
    """A session opened on demand, kept alive while held, reopened when gone.

    ``spec`` is what the session opens with (``task``, or ``site`` +
    ``template`` + ``seed``, or ``url``, and options). The handle pickles as
    the server's URL, token, spec and session id: a copy in another process
    (a Ray worker) drives the same session.
    """

    def __init__(
        self, client: WebServClient, spec: Optional[Dict[str, Any]] = None, keep_alive: bool = True,
        session: Optional[Session] = None,
    ):
        self.client = client
        self.spec = _clean(dict(spec or {}))
        self.keep_alive = keep_alive
        self.id: Optional[str] = None
        self.task_id: Optional[str] = None
        self.revived = 0
        """How many times a gone session was replaced by a new one."""
        self._held: Optional[str] = None
        if session is not None:
            self._adopt(session)

    def open_or_reset(self, **change: Any) -> Session:
        """Opens the session, or starts a new episode in it with ``change``
        (``seed``, ``task``, episode options); a session found gone is
        replaced by a new one on the same task and seed."""
        change = _clean(change)
        if self.id is None:
            return self._open(change)
        try:
            return self._adopt(self.client.reset(self.id, **change))
        except WebServError as error:
            if error.status not in (404, 410):
                raise
            gone = self.id
            self._forget()
            self.revived += 1
            log.warning("webserv: session %s on %s is gone (%s); opening a new one on %s",
                        gone, self.client.url, error.code, change.get("task") or self.task_id or self.spec)
            if "task" not in change and self.task_id is not None:
                change["task"] = self.task_id
            return self._open(change)

    def step(self, action: Dict[str, Any], request_id: Optional[str] = None) -> StepResult:
        """One action in the open session."""
        if self.id is None:
            raise RuntimeError("Call reset() before step()")
        return self.client.step(self.id, action, request_id)

    def verify(self) -> Verdict:
        """The verifier's judgement of the open session."""
        if self.id is None:
            raise RuntimeError("Call reset() before verify()")
        return self.client.verify(self.id)

    def close(self) -> None:
        """Closes the session (a session already gone is not an error)."""
        if self.id is None:
            return
        session = self.id
        self._forget()
        try:
            self.client.close(session)
        except WebServError as error:
            if error.status not in (0, 404, 410):
                raise

    def _open(self, change: Dict[str, Any]) -> Session:
        spec = dict(self.spec)
        if "task" in change:  # a task names its site, template and seed
            for key in ("site", "template", "url"):
                spec.pop(key, None)
        spec.update(change)
        return self._adopt(self.client.create_session(**spec))

    def _adopt(self, session: Session) -> Session:
        if session.id != self.id:
            self._forget()
            self.id = session.id
            if self.keep_alive:
                self._held = _keepalive.hold(self.client, session.id, session.lease.idle_timeout_s)
        if session.task is not None:
            self.task_id = session.task.id
        return session

    def _forget(self) -> None:
        _keepalive.release(self._held)
        self._held = None
        self.id = None

    def __getstate__(self) -> Dict[str, Any]:
        # A client is plain data (URL, token, deadlines); the keep-alive stays
        # with the process that opened the session.
        state = dict(self.__dict__)
        state["_held"] = None
        return state

    def __setstate__(self, state: Dict[str, Any]) -> None:
        self.__dict__.update(state)

    def __del__(self) -> None:
        _keepalive.release(getattr(self, "_held", None))


class WebServEnv:
    """One session in the reset/step shape: ``obs, info = reset()``, ``obs, reward, done, info = step(a)``.

    ``obs`` is the observation text (``info["observation"]`` holds the whole
    observation). The session opens on the first ``reset()``, on the server
    with the most free capacity among ``url`` (one or several), is kept alive
    while the env is open, and is reopened by a reset when the server reaped
    it. ``reward`` is ``None`` when the step failed on our side.
    """

    def __init__(
        self,
        url: Union[str, Sequence[str]],
        task: Optional[str] = None,
        site: Optional[str] = None,
        template: Optional[str] = None,
        seed: Optional[int] = None,
        start_url: Optional[str] = None,
        token: Optional[str] = None,
        observation: Optional[str] = None,
        observation_options: Optional[Dict[str, int]] = None,
        max_steps: Optional[int] = None,
        session: Optional[Union[Session, Dict[str, Any]]] = None,
        client: Optional[WebServClient] = None,
        keep_alive: bool = True,
        capacity_wait: Optional[float] = None,
    ):
        self.urls = [url] if isinstance(url, str) else list(url)
        self.token = token
        self.spec = _clean({
            "task": task, "site": site, "template": template, "seed": seed, "url": start_url,
            "observation": observation, "observation_options": observation_options,
            "max_steps": max_steps,
        })
        self.keep_alive = keep_alive
        self.capacity_wait = capacity_wait
        self.client = client
        if isinstance(session, dict):
            session = Session.from_json(session)
        self.created: Optional[Session] = session
        self.handle: Optional[SessionHandle] = None
        if session is not None:
            assert client is not None, "a given session needs its client"
            self.handle = SessionHandle(client, self.spec, keep_alive, session)
        self.instruction: Optional[str] = None
        self.forked: Optional[Session] = None
        """On a fork: the server's answer (its first observation, lease and task)."""
        self.forks: List["WebServEnv"] = []
        """The forks this env made and has not seen closed; its close closes them."""

    @property
    def session_id(self) -> Optional[str]:
        """The open session's id, or ``None``."""
        return self.handle.id if self.handle else None

    @property
    def revived(self) -> int:
        """How many times a reset found the session gone and opened a new one."""
        return self.handle.revived if self.handle else 0

    @classmethod
    def attach(
        cls, url: str, session_id: str, token: Optional[str] = None, task_id: Optional[str] = None,
        spec: Optional[Dict[str, Any]] = None, keep_alive: bool = False,
    ) -> "WebServEnv":
        """An env on a session opened elsewhere (another process, a Ray worker's
        driver): ``step()`` acts in it at once, ``reset()`` starts a new episode
        in it. The opener keeps its lease alive unless ``keep_alive``."""
        client = WebServClient(url, token)
        env = cls(url, token=token, client=client, keep_alive=keep_alive)
        env.spec = dict(spec or {})
        env.handle = SessionHandle(client, env.spec, keep_alive)
        env.handle.id, env.handle.task_id = session_id, task_id
        if keep_alive:
            env.handle._held = _keepalive.hold(client, session_id, 60.0)
        return env

    def __reduce__(self) -> Any:
        # Plain data: the server's URL, the token, the session id and the spec.
        handle = self.handle
        return (_attached, (self.client.url if self.client else self.urls[0], self.session_id, self.token,
                                    handle.task_id if handle else None, self.spec))

    @classmethod
    def group(cls, url: Union[str, Sequence[str]], n: int, token: Optional[str] = None, **spec: Any) -> List["WebServEnv"]:
        """Opens ``n`` sessions on the same task and seed (GRPO), each already reset."""
        urls = [url] if isinstance(url, str) else list(url)
        client = place(urls, token, need=n)
        return [cls(client.url, token=token, session=s, client=client) for s in client.create_group(n, **_clean(spec))]

    def _handle(self) -> SessionHandle:
        if self.handle is None:
            self.client = self.client or choose(self.urls, self.token)
            if self.capacity_wait is not None:
                self.client.capacity_wait = self.capacity_wait
            self.handle = SessionHandle(self.client, self.spec, self.keep_alive)
        return self.handle

    def reset(self, seed: Optional[int] = None, task: Optional[str] = None) -> Tuple[str, Dict[str, Any]]:
        """Starts an episode (on ``seed`` or ``task`` when given); returns the text and info."""
        if self.created is not None and seed is None and task is None:
            created = self.created  # a group's session arrives already reset
        else:
            created = self._handle().open_or_reset(seed=seed, task=task)
        self.created = None
        self.instruction = created.task.instruction if created.task else None
        return _reset_result(created, self.instruction)

    def step(self, action: Dict[str, Any], request_id: Optional[str] = None) -> Tuple[Optional[str], Optional[float], bool, Dict[str, Any]]:
        """One action: the text, the reward (``None`` on our failure), whether the episode ended, and info."""
        if self.handle is None or self.handle.id is None:
            raise RuntimeError("Call reset() before step()")
        self.created = None
        result = self.handle.step(action, request_id)
        return _step_result(result)

    def verify(self) -> Verdict:
        """The verifier's judgement of the session as it stands."""
        if self.handle is None:
            raise RuntimeError("Call reset() before verify()")
        return self.handle.verify()

    def fork(self, n: int = 1) -> List["WebServEnv"]:
        """Forks the live episode ``n`` ways: envs on new sessions, each on a copy of the
        site and browser state, mid-episode (``step()`` goes on from the copy, ``reset()``
        starts the task over). ``fork.forked`` holds the server's answer (the first
        observation). The forks close with this env; raises :class:`WebServForkError` when
        the episode ended or the backend cannot fork."""
        if self.handle is None or self.handle.id is None or self.client is None:
            raise RuntimeError("Call reset() before fork()")
        forks = [self._forked(session) for session in self.client.fork(self.handle.id, n)]
        self.forks.extend(forks)
        return forks

    def _forked(self, session: Session) -> "WebServEnv":
        """An env on one of this env's forks, mid-episode (a subclass makes its own kind)."""
        fork = WebServEnv(self.client.url if self.client else self.urls[0], token=self.token, session=session,
                          client=self.client, keep_alive=self.keep_alive)
        self._adopt_fork(fork, session)
        return fork

    def _adopt_fork(self, fork: "WebServEnv", session: Session) -> None:
        fork.spec = dict(self.spec)
        fork.handle.spec = dict(self.spec)  # type: ignore[union-attr]
        # Mid-episode: the first reset() starts the task over, as on any session.
        fork.created, fork.forked = None, session
        fork.instruction = session.task.instruction if session.task else self.instruction

    def close(self) -> None:
        """Closes the session and the forks it made; the env may be reset again, which opens a new one."""
        forks, self.forks = self.forks, []
        for fork in forks:
            fork.close()
        if self.handle is not None:
            self.handle.close()

    def __enter__(self) -> "WebServEnv":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def _attached(
    url: str, session_id: str, token: Optional[str], task_id: Optional[str], spec: Dict[str, Any],
) -> WebServEnv:
    # A module-level function, which pickles by reference (a classmethod
    # would be pickled by value, with everything its module holds).
    return WebServEnv.attach(url, session_id, token, task_id, spec)


# The reset/step shapes of an env, one for this env and the asyncio one.


def _reset_result(created: Session, instruction: Optional[str]) -> Tuple[str, Dict[str, Any]]:
    """``reset()``'s text and info from the server's answer."""
    info = {"observation": created.observation.raw, "lease": created.lease.raw,
            "task": created.task.raw if created.task else None,
            "instruction": instruction, "session": created.id}
    return created.observation.text, info


def _step_result(result: StepResult) -> Tuple[Optional[str], Optional[float], bool, Dict[str, Any]]:
    """``step()``'s text, reward (``None`` on our failure), end and info from the server's answer:
    an expired session ends the episode too."""
    text = result.observation.text if result.observation else None
    done = bool(result.done or result.truncated or result.status == "expired")
    info = dict(result.info, status=result.status, truncated=result.truncated,
                observation=result.observation.raw if result.observation else None)
    return text, result.reward, done, info
