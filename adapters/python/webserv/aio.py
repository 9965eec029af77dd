"""The asyncio face of the client: the same API as :class:`webserv.WebServClient`
and :class:`webserv.WebServEnv`, awaited (standard library only: asyncio streams)::

    import asyncio
    from webserv.aio import AsyncWebServEnv

    async def rollout(url):
        async with AsyncWebServEnv(url, task="demo/add-note/1") as env:
            text, info = await env.reset()
            text, reward, done, info = await env.step({"action": "stop", "answer": "done"})
            return reward

    asyncio.run(rollout("http://127.0.0.1:8800"))

Many rollouts run concurrently on one event loop (``asyncio.gather``); each
request is one HTTP/1.1 exchange under the client's deadline, on a kept-alive
connection (a client keeps up to ``pool_size`` idle ones; ``disconnect()``
closes them). Sessions behave as the sync ones do: kept alive while held (a task
renews the lease at a third of its idle timeout), reopened on the same task
and seed when a reset finds them reaped, and opening past the server's cap
waits up to ``capacity_wait`` seconds.
"""

import asyncio
import json
import logging
import time
import urllib.parse
from typing import Any, Dict, List, Optional, Sequence, Tuple

from ._pool import retryable
from .client import (
    WebServError, WebServNetworkError, _answer, _CapacityBackoff, _clean, _fork_refusal, _retry_pause,
)
from .env import _reset_result, _step_result
from .types import Session, StepResult, Task, Verdict

__all__ = ["AsyncWebServClient", "AsyncWebServEnv"]

log = logging.getLogger("webserv")


class _Exchange:
    """What one request got to: on a reused connection, and sent whole."""

    __slots__ = ("reused", "sent")

    def __init__(self) -> None:
        self.reused = False
        self.sent = False


class AsyncWebServClient:
    """The HTTP session API of one server, awaited (see :class:`webserv.WebServClient`)."""

    def __init__(
        self, url: str, token: Optional[str] = None, timeout: float = 120.0, retries: int = 3,
        capacity_wait: float = 300.0,
    ):
        parsed = urllib.parse.urlsplit(url)
        if parsed.scheme != "http" or not parsed.hostname:
            raise ValueError(f"Expected an http:// server URL, got {url!r}")
        self.url = url.rstrip("/")
        self.host = parsed.hostname
        self.port = parsed.port or 80
        self.base = parsed.path.rstrip("/")
        self.token = token
        self.timeout = timeout
        self.retries = retries
        self.capacity_wait = capacity_wait
        self.capacity_waits = 0
        """How many times a session waited for capacity."""
        self.pool_size = 4
        """The most idle connections kept for reuse."""
        self.connections_opened = 0
        """How many connections this client opened so far (kept alive between requests)."""
        self._idle: List[Tuple[asyncio.StreamReader, asyncio.StreamWriter]] = []

    async def request(
        self, method: str, path: str, body: Any = None, accept: Sequence[int] = (),
        timeout: Optional[float] = None, retries: Optional[int] = None,
    ) -> Any:
        """Sends one request; returns the parsed JSON (bytes for PNG). Retries
        refusals that carry Retry-After (429, 503) within the deadline."""
        deadline = time.monotonic() + (self.timeout if timeout is None else timeout)
        attempt = 0
        while True:
            try:
                return await self._once(method, path, body, accept, deadline)
            except WebServError as error:
                pause = _retry_pause(error, attempt, self.retries if retries is None else retries, deadline)
                if pause is None:
                    raise
                attempt += 1
                await asyncio.sleep(pause)

    async def _once(self, method: str, path: str, body: Any, accept: Sequence[int], deadline: float) -> Any:
        url = self.url + path
        for _ in range(2):
            left = deadline - time.monotonic()
            if left <= 0:
                raise WebServNetworkError(url, True, TimeoutError("deadline passed"))
            state = _Exchange()
            try:
                status, headers, raw = await asyncio.wait_for(self._exchange(method, path, body, state), left)
            except asyncio.TimeoutError as error:
                raise WebServNetworkError(url, True, error) from None
            except (ConnectionError, OSError, asyncio.IncompleteReadError, ValueError) as error:
                if retryable(method, state.reused, state.sent, error):
                    continue  # the server had closed this kept-alive connection: a new one
                raise WebServNetworkError(url, False, error) from None
            break
        else:
            raise WebServNetworkError(url, False, ConnectionError("the server closed two connections unanswered"))
        return _answer(status, headers.get("content-type", ""), headers.get("retry-after"), raw, accept)

    async def _connection(self, state: "_Exchange") -> Tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        # An idle connection the server closed has seen its EOF (the loop read it): skip it.
        while self._idle:
            reader, writer = self._idle.pop()
            if reader.at_eof() or writer.is_closing():
                writer.close()
                continue
            state.reused = True
            return reader, writer
        self.connections_opened += 1
        return await asyncio.open_connection(self.host, self.port)

    async def _exchange(self, method: str, path: str, body: Any, state: "_Exchange") -> Tuple[int, Dict[str, str], bytes]:
        data = b"" if body is None else json.dumps(body).encode("utf-8")
        lines = [f"{method} {self.base}{path} HTTP/1.1", f"host: {self.host}:{self.port}",
                 "accept: application/json", f"content-length: {len(data)}"]
        if body is not None:
            lines.append("content-type: application/json")
        if self.token:
            lines.append(f"authorization: Bearer {self.token}")
        reader, writer = await self._connection(state)
        keep = False
        try:
            writer.write(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + data)
            await writer.drain()
            state.sent = True
            status_line = await reader.readline()
            if not status_line:
                raise ConnectionResetError("the server closed the connection without an answer")
            parts = status_line.decode("latin-1").split(" ", 2)
            if len(parts) < 2 or not parts[0].startswith("HTTP/"):
                raise ValueError(f"Not an HTTP response: {status_line[:80]!r}")
            headers: Dict[str, str] = {}
            while True:
                line = await reader.readline()
                if line in (b"\r\n", b"\n", b""):
                    break
                name, _, value = line.decode("latin-1").partition(":")
                headers[name.strip().lower()] = value.strip()
            keep = headers.get("connection", "").lower() != "close" and parts[0] == "HTTP/1.1"
            if headers.get("transfer-encoding", "").lower() == "chunked":
                raw = b""
                while True:
                    size = int((await reader.readline()).split(b";")[0].strip(), 16)
                    if size == 0:
                        await reader.readline()
                        break
                    raw += await reader.readexactly(size)
                    await reader.readline()
            elif "content-length" in headers:
                raw = await reader.readexactly(int(headers["content-length"]))
            else:
                keep = False  # the body ends with the connection
                raw = await reader.read()
            return int(parts[1]), headers, raw
        except BaseException:
            keep = False
            raise
        finally:
            # Back to the pool only when the answer was read whole (not on a
            # timeout's cancellation, which may leave half of it in the socket).
            if keep and len(self._idle) < self.pool_size:
                self._idle.append((reader, writer))
            else:
                writer.close()

    async def disconnect(self) -> None:
        """Closes the client's idle connections (a later request opens a new one)."""
        idle, self._idle = self._idle, []
        for _, writer in idle:
            writer.close()
        for _, writer in idle:
            try:
                await writer.wait_closed()
            except (ConnectionError, OSError):
                pass  # the server closed it first: closed either way

    async def health(self) -> Dict[str, Any]:
        """The server's health: status, live and free sessions."""
        return await self.request("GET", "/health")

    async def tasks(self, **query: Any) -> List[Task]:
        """A page of tasks: site=, template=, split=, offset=, limit=."""
        params = urllib.parse.urlencode(_clean(query))
        listed = await self.request("GET", "/v1/tasks" + ("?" + params if params else ""))
        return [Task.from_json(t) for t in listed["tasks"]]

    async def create_session(self, **spec: Any) -> Session:
        """Opens a session; waits for capacity up to ``capacity_wait``."""
        return Session.from_json(await self._admitted(lambda: self.request("POST", "/v1/sessions", _clean(spec), retries=0)))

    async def create_group(self, n: int, **spec: Any) -> List[Session]:
        """Opens ``n`` sessions on the same task and seed; waits for capacity."""
        created = await self._admitted(lambda: self.request("POST", "/v1/groups", dict(_clean(spec), n=n), retries=0))
        return [Session.from_json(s) for s in created["sessions"]]

    async def fork(self, session: str, n: int = 1) -> List[Session]:
        """Forks a live session ``n`` ways (see :meth:`webserv.WebServClient.fork`)."""
        async def call() -> Any:
            try:
                return await self.request("POST", f"/v1/sessions/{session}/fork", {"n": n}, retries=0)
            except WebServError as error:
                raise _fork_refusal(error) from None

        return [Session.from_json(s) for s in (await self._admitted(call))["sessions"]]

    async def _admitted(self, call: Any) -> Any:
        backoff = _CapacityBackoff(self.url, self.capacity_wait)
        while True:
            try:
                return await call()
            except WebServError as error:
                pause = backoff.pause(error)
                if pause is None:
                    raise
                self.capacity_waits += 1
                await asyncio.sleep(pause)

    async def step(self, session: str, action: Dict[str, Any], request_id: Optional[str] = None) -> StepResult:
        """One action; an expired session answers ``status == "expired"``."""
        body: Dict[str, Any] = {"action": action}
        if request_id is not None:
            body["request_id"] = request_id
        return StepResult.from_json(await self.request("POST", f"/v1/sessions/{session}/step", body, accept=(410,)))

    async def reset(self, session: str, **options: Any) -> Session:
        """Starts a new episode in the session (``seed``, ``task``, episode options)."""
        return Session.from_json(await self.request("POST", f"/v1/sessions/{session}/reset", _clean(options)))

    async def verify(self, session: str) -> Verdict:
        """The task verifier's judgement of the session as it stands."""
        return Verdict.from_json(await self.request("POST", f"/v1/sessions/{session}/verify", {}))

    async def state(self, session: str) -> Dict[str, Any]:
        """The session's state; every read renews its lease."""
        return await self.request("GET", f"/v1/sessions/{session}")

    async def close(self, session: str) -> bool:
        """Closes a session."""
        return (await self.request("DELETE", f"/v1/sessions/{session}"))["closed"]


class AsyncWebServEnv:
    """One session in the reset/step shape, awaited (see :class:`webserv.WebServEnv`)."""

    def __init__(
        self, url: str, token: Optional[str] = None, keep_alive: bool = True,
        client: Optional[AsyncWebServClient] = None, capacity_wait: float = 300.0, **spec: Any,
    ):
        self.client = client or AsyncWebServClient(url, token, capacity_wait=capacity_wait)
        self._owns_client = client is None
        self.spec = _clean(spec)
        self.keep_alive = keep_alive
        self.session_id: Optional[str] = None
        self.task_id: Optional[str] = None
        self.instruction: Optional[str] = None
        self.revived = 0
        """How many times a reset found the session gone and opened a new one."""
        self._keeper: Optional["asyncio.Task[None]"] = None
        self.forked: Optional[Session] = None
        """On a fork: the server's answer (its first observation, lease and task)."""
        self.forks: List["AsyncWebServEnv"] = []
        """The forks this env made; its close closes them."""

    async def reset(self, seed: Optional[int] = None, task: Optional[str] = None, **options: Any) -> Tuple[str, Dict[str, Any]]:
        """Starts an episode; the first call opens the session, a gone one is reopened."""
        change = _clean(dict(options, seed=seed, task=task))
        if self.session_id is None:
            created = await self._open(change)
        else:
            try:
                created = await self.client.reset(self.session_id, **change)
            except WebServError as error:
                if error.status not in (404, 410):
                    raise
                log.warning("webserv: session %s on %s is gone (%s); opening a new one",
                            self.session_id, self.client.url, error.code)
                self._forget()
                self.revived += 1
                if "task" not in change and self.task_id is not None:
                    change["task"] = self.task_id
                created = await self._open(change)
        if created.task is not None:
            self.task_id = created.task.id
        self.instruction = created.task.instruction if created.task else None
        return _reset_result(created, self.instruction)

    async def fork(self, n: int = 1) -> List["AsyncWebServEnv"]:
        """Forks the live episode ``n`` ways (see :meth:`webserv.WebServEnv.fork`); the forks
        close with this env."""
        if self.session_id is None:
            raise RuntimeError("Call reset() before fork()")
        forks = []
        for session in await self.client.fork(self.session_id, n):
            fork = AsyncWebServEnv(self.client.url, client=self.client, keep_alive=self.keep_alive, **self.spec)
            fork._adopt(session)
            fork.forked = session
            fork.instruction = session.task.instruction if session.task else self.instruction
            forks.append(fork)
        self.forks.extend(forks)
        return forks

    async def _open(self, change: Dict[str, Any]) -> Session:
        spec = dict(self.spec)
        if "task" in change:
            for key in ("site", "template", "url"):
                spec.pop(key, None)
        spec.update(change)
        return self._adopt(await self.client.create_session(**spec))

    def _adopt(self, created: Session) -> Session:
        self.session_id = created.id
        if created.task is not None:
            self.task_id = created.task.id
        if self.keep_alive:
            self._keeper = asyncio.get_running_loop().create_task(
                self._keep(created.id, max(0.2, created.lease.idle_timeout_s / 3)))
        return created

    async def _keep(self, session: str, period: float) -> None:
        while self.session_id == session:
            await asyncio.sleep(period)
            try:
                await self.client.request("GET", f"/v1/sessions/{session}", timeout=30.0, retries=0)
            except WebServError as error:
                log.warning("webserv: keep-alive of session %s failed: %s", session, error)
                if error.status in (404, 410):
                    return

    def _forget(self) -> None:
        if self._keeper is not None:
            self._keeper.cancel()
            self._keeper = None
        self.session_id = None

    async def step(self, action: Dict[str, Any], request_id: Optional[str] = None) -> Tuple[Optional[str], Optional[float], bool, Dict[str, Any]]:
        """One action: the text, the reward (``None`` on our failure), whether it ended, and info."""
        if self.session_id is None:
            raise RuntimeError("Call reset() before step()")
        result = await self.client.step(self.session_id, action, request_id)
        return _step_result(result)

    async def verify(self) -> Verdict:
        """The verifier's judgement of the session as it stands."""
        if self.session_id is None:
            raise RuntimeError("Call reset() before verify()")
        return await self.client.verify(self.session_id)

    async def close(self) -> None:
        """Closes the session and the forks it made (one already gone is not an error),
        and the connections of a client this env made."""
        forks, self.forks = self.forks, []
        await asyncio.gather(*(fork.close() for fork in forks))
        try:
            if self.session_id is not None:
                session = self.session_id
                self._forget()
                try:
                    await self.client.close(session)
                except WebServError as error:
                    if error.status not in (0, 404, 410):
                        raise
        finally:
            if self._owns_client:
                await self.client.disconnect()

    async def __aenter__(self) -> "AsyncWebServEnv":
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.close()
