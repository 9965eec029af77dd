"""The HTTP session API of one WebServ rollout server (``deno task serve``).

Standard library only (http.client, connections kept alive: ``_pool.py``), Python 3.9+. Results are typed
(:mod:`webserv.types`). A session refused for capacity (429) waits with a
bounded backoff, up to ``capacity_wait`` seconds, then raises
:class:`WebServCapacityError` saying what was full and for how long.
"""

import http.client
import json
import logging
import random
import socket
import time
import urllib.parse
from typing import Any, Dict, List, Optional, Sequence, Tuple

from ._pool import ConnectionPool, retryable
from .types import Session, StepResult, Task, Verdict

__all__ = [
    "WebServCapacityError", "WebServError", "WebServForkError", "WebServNetworkError", "WebServClient", "place",
]



class WebServError(Exception):
    """The server refused a request: HTTP status, error code and message."""

    def __init__(self, status: int, code: str, message: str, retry_after: Optional[float] = None):
        super().__init__(f"{status} {code}: {message}")
        self.status = status
        self.code = code
        self.message = message
        self.retry_after = retry_after


class WebServNetworkError(WebServError):
    """The server could not be reached or did not answer within the deadline
    (status 0, code ``network`` or ``timeout``): a network failure, not a refusal."""

    def __init__(self, url: str, timed_out: bool, cause: BaseException):
        message = f"No answer from {url} within the deadline" if timed_out else f"Cannot reach {url}: {cause}"
        super().__init__(0, "timeout" if timed_out else "network", message)
        self.url = url
        self.timed_out = timed_out


class WebServCapacityError(WebServError):
    """No session could open within the client's ``capacity_wait``: every
    session the server allows (``--max-sessions``) stayed live that long."""

    def __init__(self, url: str, waited: float, last: WebServError):
        super().__init__(
            429, "capacity",
            f"No free session on {url} after waiting {waited:.1f} s ({last.message}): close sessions, "
            "raise the server's --max-sessions, or raise capacity_wait",
            last.retry_after,
        )
        self.url = url
        self.waited = waited


class WebServForkError(WebServError):
    """A live session could not be forked (409): its episode ended (code
    ``episode-ended``: reset it, or fork before the last action) or its
    backend cannot copy a running instance (``fork-unsupported``)."""


# What the sync and the asyncio client decide alike lives here, once: how an
# answer reads, when a refused request goes again, and how long a session
# waits for capacity. Each client only does the waiting and the I/O its way.


def _answer(status: int, content_type: str, retry_after: Optional[str], raw: bytes, accept: Sequence[int]) -> Any:
    """The body of a success (or of an ``accept``-ed status), else the refusal raised as a
    :class:`WebServError` with the server's code, message and ``Retry-After``."""
    if status < 400 or status in accept:
        return _decode(content_type, raw)
    try:
        parsed = json.loads(raw.decode("utf-8"))
        code, message = parsed.get("code", "http-error"), parsed.get("message", "")
    except ValueError:
        code, message = "http-error", raw.decode("utf-8", "replace")
    raise WebServError(status, code, message, float(retry_after) if retry_after else None)


def _retry_pause(error: WebServError, attempt: int, limit: int, deadline: float) -> Optional[float]:
    """How long to wait before sending a refused request again, or ``None`` when it must not
    go again: only a refusal that names a wait (429, 503 with ``Retry-After``), at most
    ``limit`` times, and never when the wait would pass the ``deadline``."""
    if error.status not in (429, 503) or error.retry_after is None:
        return None
    if attempt >= limit or time.monotonic() + error.retry_after >= deadline:
        return None
    return error.retry_after


class _CapacityBackoff:
    """The wait of one session opened past the server's cap: a jittered backoff from 0.25 s,
    doubling up to the server's ``Retry-After`` (5 s without one), for at most
    ``capacity_wait`` seconds in all."""

    def __init__(self, url: str, capacity_wait: float):
        self._url = url
        self._limit = capacity_wait
        self._start = time.monotonic()
        self._delay = 0.25

    def pause(self, error: WebServError) -> Optional[float]:
        """The pause before the next try; ``None`` when ``error`` is no capacity refusal (the
        caller raises it); raises :class:`WebServCapacityError` once the wait is spent."""
        if error.status != 429 or error.code not in ("capacity", "seed-capacity"):
            return None
        waited = time.monotonic() - self._start
        if waited >= self._limit:
            raise WebServCapacityError(self._url, waited, error) from None
        cap = error.retry_after if error.retry_after else 5.0
        pause = min(random.uniform(self._delay / 2, self._delay), self._limit - waited)
        self._delay = min(self._delay * 2, cap)
        return pause


def _fork_refusal(error: WebServError) -> WebServError:
    # One mapping for the sync and the asyncio client: a 409 from the fork
    # route is the fork's own refusal; anything else stays as it came.
    if error.status == 409:
        return WebServForkError(error.status, error.code, error.message, error.retry_after)
    return error


class WebServClient:
    """The HTTP session API of one server.

    ``timeout`` is the deadline of one call in seconds, retries included. A
    call refused with ``Retry-After`` (429 past the cap, 503 while our side
    recovers: the refusals where waiting helps) is tried again after the wait
    the server names, at most ``retries`` times and never past the deadline.

    Opening sessions past the server's cap is different: a training loop
    asking for more sessions than are free should wait for one to close. So
    ``create_session`` and ``create_group`` wait on 429 ``capacity`` with a
    jittered backoff (0.25 s doubling up to the server's Retry-After) for at
    most ``capacity_wait`` seconds, then raise :class:`WebServCapacityError`.
    """

    def __init__(
        self, url: str, token: Optional[str] = None, timeout: float = 120.0, retries: int = 3,
        capacity_wait: float = 300.0,
    ):
        self.url = url.rstrip("/")
        self.token = token
        self.timeout = timeout
        self.retries = retries
        self.capacity_wait = capacity_wait
        self.capacity_waits = 0
        """How many times a session waited for capacity (for a trainer's logs)."""
        self._base = urllib.parse.urlsplit(self.url).path
        self._pool = _pool_for(self.url)

    def request(
        self, method: str, path: str, body: Any = None, accept: Sequence[int] = (), timeout: Optional[float] = None,
        retries: Optional[int] = None,
    ) -> Any:
        """Sends one request; returns the parsed JSON (bytes for PNG).

        Raises ``WebServError`` when the server refuses, ``WebServNetworkError``
        when it cannot be reached in time.
        """
        deadline = time.monotonic() + (self.timeout if timeout is None else timeout)
        attempt = 0
        while True:
            try:
                return self._once(method, path, body, accept, deadline)
            except WebServError as error:
                pause = _retry_pause(error, attempt, self.retries if retries is None else retries, deadline)
                if pause is None:
                    raise
                attempt += 1
                time.sleep(pause)

    def _once(self, method: str, path: str, body: Any, accept: Sequence[int], deadline: float) -> Any:
        data = None if body is None else json.dumps(body).encode("utf-8")
        headers = {"accept": "application/json"}
        if data is not None:
            headers["content-type"] = "application/json"
        if self.token:
            headers["authorization"] = f"Bearer {self.token}"
        url = self.url + path
        for _ in range(2):
            left = deadline - time.monotonic()
            if left <= 0:
                raise WebServNetworkError(url, True, TimeoutError("deadline passed"))
            connection, reused = self._pool.take(left)
            sent = False
            try:
                connection.request(method, self._base + path, body=data, headers=headers)
                sent = True
                response = connection.getresponse()
                raw = response.read()
            except (socket.timeout, TimeoutError) as error:
                connection.close()
                raise WebServNetworkError(url, True, error) from None
            except (OSError, http.client.HTTPException) as error:
                connection.close()
                if retryable(method, reused, sent, error):
                    continue  # the server had closed this kept-alive connection: a new one
                raise WebServNetworkError(url, False, error) from None
            if response.will_close:
                connection.close()
            else:
                self._pool.give(connection)
            headers = response.headers
            return _answer(response.status, headers.get("content-type", ""), headers.get("retry-after"), raw, accept)
        raise WebServNetworkError(url, False, ConnectionError("the server closed two connections unanswered"))

    @property
    def connections_opened(self) -> int:
        """How many connections this client opened so far (kept alive between requests)."""
        return self._pool.opened

    def disconnect(self) -> None:
        """Closes the client's idle connections (a later request opens a new one)."""
        self._pool.clear()

    def __getstate__(self) -> Dict[str, Any]:
        # Plain data travels (URL, token, deadlines); connections stay with their process.
        state = dict(self.__dict__)
        del state["_pool"]
        return state

    def __setstate__(self, state: Dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._pool = _pool_for(self.url)

    def health(self) -> Dict[str, Any]:
        """The server's health: status, live and free sessions."""
        return self.request("GET", "/health")

    def tasks(self, **query: Any) -> List[Task]:
        """A page of tasks: site=, template=, split="train"|"test", offset=, limit=."""
        params = urllib.parse.urlencode(_clean(query))
        return [Task.from_json(t) for t in self.request("GET", "/v1/tasks" + ("?" + params if params else ""))["tasks"]]

    def num_tasks(self, split: str) -> int:
        """How many tasks a split (``train`` or ``test``) holds (OpenEnv's and ORS's Task API)."""
        return int(self.request("POST", "/webserv/num_tasks", {"split": split})["num_tasks"])

    def task_at(self, split: str, index: int) -> str:
        """The id of a split's task at ``index`` (what ``reset(split=, index=)`` runs)."""
        return str(self.request("POST", "/webserv/task", {"split": split, "index": index})["task"]["task"])

    def sample_tasks(self, split: str, k: int, seed: Optional[int] = None) -> List[str]:
        """``k`` distinct task ids drawn uniformly from a split, reproducibly for a ``seed``."""
        count = self.num_tasks(split)
        if not 0 <= k <= count:
            raise ValueError(f"Cannot draw {k} distinct tasks from split {split!r}: it has {count}")
        return [self.task_at(split, index) for index in random.Random(seed).sample(range(count), k)]

    def tools(self, format: str = "openai") -> List[Dict[str, Any]]:
        """The actions as LLM tool schemas (``openai`` or ``anthropic``)."""
        return self.request("GET", f"/v1/tools?format={format}")["tools"]

    def create_session(self, **spec: Any) -> Session:
        """Opens a session on a task (``task=``), a site (``site=``, ``template=``, ``seed=``) or ``url=``;
        waits for capacity up to ``capacity_wait``."""
        return Session.from_json(self._admitted(lambda: self.request("POST", "/v1/sessions", _clean(spec), retries=0)))

    def create_group(self, n: int, **spec: Any) -> List[Session]:
        """Opens ``n`` sessions on the same task and seed (GRPO), each reset; waits for capacity."""
        created = self._admitted(lambda: self.request("POST", "/v1/groups", dict(_clean(spec), n=n), retries=0))
        return [Session.from_json(s) for s in created["sessions"]]

    def fork(self, session: str, n: int = 1) -> List[Session]:
        """Forks a live session ``n`` ways (1 to 16): new sessions, each on a copy of its site
        and browser state, with its task, seed, step count and trajectory prefix. Each is a
        session like any other (step, verify, reset to the task's start, close), its writes
        its own. Waits for capacity like ``create_session``; raises
        :class:`WebServForkError` when the episode ended or the backend cannot fork."""
        def call() -> Any:
            try:
                return self.request("POST", f"/v1/sessions/{session}/fork", {"n": n}, retries=0)
            except WebServError as error:
                raise _fork_refusal(error) from None

        return [Session.from_json(s) for s in self._admitted(call)["sessions"]]

    def _admitted(self, call: Any) -> Any:
        backoff = _CapacityBackoff(self.url, self.capacity_wait)
        while True:
            try:
                return call()
            except WebServError as error:
                pause = backoff.pause(error)
                if pause is None:
                    raise
                self.capacity_waits += 1
                # The logger is looked up here, not held by the module: Ray
                # pickles this module by value, and a logger holds a lock.
                logging.getLogger("webserv").debug("webserv: %s is full, waiting %.2f s for a session", self.url, pause)
                time.sleep(pause)

    def step(self, session: str, action: Dict[str, Any], request_id: Optional[str] = None) -> StepResult:
        """One action; an expired session answers ``status == "expired"`` (never a reward)."""
        body: Dict[str, Any] = {"action": action}
        if request_id is not None:
            body["request_id"] = request_id
        return StepResult.from_json(self.request("POST", f"/v1/sessions/{session}/step", body, accept=(410,)))

    def batch_step(self, steps: List[Dict[str, Any]]) -> List[Dict[str, Any]]:
        """Steps several sessions at once: ``[{"session_id", "action", "request_id"?}]``."""
        return self.request("POST", "/v1/batch/step", {"steps": steps})["results"]

    def reset(self, session: str, seed: Optional[int] = None, task: Optional[str] = None, **options: Any) -> Session:
        """Starts a new episode in the session (a new seed or task, episode options)."""
        body = _clean(dict(options, seed=seed, task=task))
        return Session.from_json(self.request("POST", f"/v1/sessions/{session}/reset", body))

    def observe(self, session: str, mode: Optional[str] = None) -> Dict[str, Any]:
        """The current observation, in ``mode`` (``text``, ``json``, ``diff``)."""
        return self.request("GET", f"/v1/sessions/{session}/observe" + (f"?mode={mode}" if mode else ""))

    def screenshot(self, session: str, marks: bool = False) -> bytes:
        """A PNG of the page, with set-of-marks boxes when ``marks``."""
        return self.request("GET", f"/v1/sessions/{session}/screenshot?marks={'true' if marks else 'false'}")

    def verify(self, session: str) -> Verdict:
        """The task verifier's judgement of the session as it stands."""
        return Verdict.from_json(self.request("POST", f"/v1/sessions/{session}/verify", {}))

    def state(self, session: str) -> Dict[str, Any]:
        """The session's state; every read renews its lease."""
        return self.request("GET", f"/v1/sessions/{session}")

    def close(self, session: str) -> bool:
        """Closes a session (its browser context and sandbox instance)."""
        return self.request("DELETE", f"/v1/sessions/{session}")["closed"]


def place(urls: Sequence[str], token: Optional[str] = None, need: int = 1) -> WebServClient:
    """The client of the server with the most free sessions (at least ``need``).

    Raises :class:`WebServError` 429 when none has that many free."""
    best: Optional[Tuple[int, WebServClient]] = None
    for url in urls:
        client = WebServClient(url, token)
        try:
            free = int(client.health().get("free", 0))
        except (OSError, WebServError, ValueError):
            continue
        if free >= need and (best is None or free > best[0]):
            best = (free, client)
    if best is None:
        raise WebServError(429, "capacity", f"No server has {need} free session(s): {list(urls)}")
    return best[1]


def __getattr__(name: str) -> Any:
    # OpenEnv's AutoEnv imports `<module>.client` and takes `WebservEnv` from
    # it (its naming convention). Made on first use, so the module itself
    # stays standard library only: it needs openenv-core (the openenv extra).
    if name == "WebservEnv":
        from ._openenv_client import WebservEnv

        return WebservEnv
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def choose(urls: Sequence[str], token: Optional[str] = None) -> WebServClient:
    """The client an env opens its session on: the one server given, else the
    server with the most free sessions; when every server is full, the first
    reachable one, where the session waits for capacity (``capacity_wait``)."""
    if len(urls) == 1:
        return WebServClient(urls[0], token)
    try:
        return place(urls, token)
    except WebServError:
        for url in urls:
            client = WebServClient(url, token)
            try:
                client.health()
                return client
            except (OSError, WebServError):
                continue
        raise


def _pool_for(url: str) -> ConnectionPool:
    parsed = urllib.parse.urlsplit(url)
    if parsed.scheme not in ("http", "https") or not parsed.hostname:
        raise ValueError(f"Expected an http:// or https:// server URL, got {url!r}")
    return ConnectionPool(parsed.scheme, parsed.hostname, parsed.port)


def _clean(spec: Dict[str, Any]) -> Dict[str, Any]:
    return {key: value for key, value in spec.items() if value is not None}


def _decode(content_type: str, raw: bytes) -> Any:
    if content_type.startswith("image/"):
        return raw
    return json.loads(raw.decode("utf-8")) if raw else None
