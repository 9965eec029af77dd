"""A dependency-free client of the WebServ rollout server (`deno task serve`).

Standard library only (urllib), Python 3.9+. The shape trainers expect::

    from webserv_client import WebServEnv
    env = WebServEnv("http://127.0.0.1:8800", task="demo/add-note/1")
    obs, info = env.reset()
    obs, reward, done, info = env.step({"action": "click", "id": 3})
    env.close()

``reward`` is the verifier's when the episode ends on a task, else 0; it is
``None`` when the step failed on the server's side (``info["status"]`` is
``env_error``, ``timeout`` or ``expired``), so an infrastructure failure is
never read as a reward. Several server URLs may be given: each new session is
placed on the server with the most free capacity (from ``/health``).
"""

import json
import socket
import time
import urllib.error
import urllib.parse
import urllib.request
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

__all__ = ["WebServError", "WebServNetworkError", "WebServClient", "WebServEnv", "place"]


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


class WebServClient:
    """The HTTP session API of one server.

    ``timeout`` is the deadline of one call in seconds, retries included. A
    call refused with ``Retry-After`` (429 past the cap, 503 while our side
    recovers: the refusals where waiting helps) is tried again after the wait
    the server names, at most ``retries`` times and never past the deadline.
    """

    def __init__(self, url: str, token: Optional[str] = None, timeout: float = 120.0, retries: int = 3):
        self.url = url.rstrip("/")
        self.token = token
        self.timeout = timeout
        self.retries = retries

    def request(
        self, method: str, path: str, body: Any = None, accept: Sequence[int] = (), timeout: Optional[float] = None,
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
                waits = error.status in (429, 503) and error.retry_after is not None
                if not waits or attempt >= self.retries or time.monotonic() + error.retry_after >= deadline:
                    raise
                attempt += 1
                time.sleep(error.retry_after)

    def _once(self, method: str, path: str, body: Any, accept: Sequence[int], deadline: float) -> Any:
        data = None if body is None else json.dumps(body).encode("utf-8")
        headers = {"accept": "application/json"}
        if data is not None:
            headers["content-type"] = "application/json"
        if self.token:
            headers["authorization"] = f"Bearer {self.token}"
        url = self.url + path
        request = urllib.request.Request(url, data=data, method=method, headers=headers)
        left = deadline - time.monotonic()
        if left <= 0:
            raise WebServNetworkError(url, True, TimeoutError("deadline passed"))
        try:
            with urllib.request.urlopen(request, timeout=left) as response:
                return _decode(response.headers.get("content-type", ""), response.read())
        except urllib.error.HTTPError as error:
            raw = error.read()
            if error.code in accept:
                return _decode(error.headers.get("content-type", ""), raw)
            try:
                parsed = json.loads(raw.decode("utf-8"))
                code, message = parsed.get("code", "http-error"), parsed.get("message", "")
            except ValueError:
                code, message = "http-error", raw.decode("utf-8", "replace")
            retry = error.headers.get("retry-after")
            raise WebServError(error.code, code, message, float(retry) if retry else None) from None
        except urllib.error.URLError as error:
            timed_out = isinstance(error.reason, (socket.timeout, TimeoutError))
            raise WebServNetworkError(url, timed_out, error.reason) from None
        except (socket.timeout, TimeoutError) as error:
            raise WebServNetworkError(url, True, error) from None
        except (ConnectionError, OSError) as error:
            raise WebServNetworkError(url, False, error) from None

    def health(self) -> Dict[str, Any]:
        return self.request("GET", "/health")

    def tasks(self, **query: Any) -> List[Dict[str, Any]]:
        """A page of tasks: site=, template=, split="train"|"test", offset=, limit=."""
        params = urllib.parse.urlencode(_clean(query))
        return self.request("GET", "/v1/tasks" + ("?" + params if params else ""))["tasks"]

    def tools(self, format: str = "openai") -> List[Dict[str, Any]]:
        return self.request("GET", f"/v1/tools?format={format}")["tools"]

    def create_session(self, **spec: Any) -> Dict[str, Any]:
        return self.request("POST", "/v1/sessions", _clean(spec))

    def create_group(self, n: int, **spec: Any) -> Dict[str, Any]:
        return self.request("POST", "/v1/groups", dict(_clean(spec), n=n))

    def step(self, session: str, action: Dict[str, Any], request_id: Optional[str] = None) -> Dict[str, Any]:
        body: Dict[str, Any] = {"action": action}
        if request_id is not None:
            body["request_id"] = request_id
        return self.request("POST", f"/v1/sessions/{session}/step", body, accept=(410,))

    def batch_step(self, steps: List[Dict[str, Any]]) -> List[Dict[str, Any]]:
        return self.request("POST", "/v1/batch/step", {"steps": steps})["results"]

    def reset(self, session: str, seed: Optional[int] = None, task: Optional[str] = None) -> Dict[str, Any]:
        return self.request("POST", f"/v1/sessions/{session}/reset", _clean({"seed": seed, "task": task}))

    def observe(self, session: str, mode: Optional[str] = None) -> Dict[str, Any]:
        return self.request("GET", f"/v1/sessions/{session}/observe" + (f"?mode={mode}" if mode else ""))

    def screenshot(self, session: str, marks: bool = False) -> bytes:
        return self.request("GET", f"/v1/sessions/{session}/screenshot?marks={'true' if marks else 'false'}")

    def verify(self, session: str) -> Dict[str, Any]:
        return self.request("POST", f"/v1/sessions/{session}/verify", {})

    def state(self, session: str) -> Dict[str, Any]:
        return self.request("GET", f"/v1/sessions/{session}")

    def close(self, session: str) -> bool:
        return self.request("DELETE", f"/v1/sessions/{session}")["closed"]


def place(urls: Sequence[str], token: Optional[str] = None, need: int = 1) -> WebServClient:
    """The client of the server with the most free sessions (at least ``need``)."""
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


class WebServEnv:
    """One session in the reset/step shape: ``obs, info = reset()``, ``obs, reward, done, info = step(a)``.

    ``obs`` is the observation text (``info["observation"]`` holds the whole
    observation object). The session opens on the first ``reset()``.
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
        session: Optional[Dict[str, Any]] = None,
        client: Optional[WebServClient] = None,
    ):
        self.urls = [url] if isinstance(url, str) else list(url)
        self.token = token
        self.spec = _clean({
            "task": task, "site": site, "template": template, "seed": seed, "url": start_url,
            "observation": observation, "observation_options": observation_options,
            "max_steps": max_steps,
        })
        self.client = client
        self.session_id: Optional[str] = None
        self.created: Optional[Dict[str, Any]] = session
        if session is not None:
            self.session_id = session["id"]
        self.instruction: Optional[str] = None

    @classmethod
    def group(cls, url: Union[str, Sequence[str]], n: int, token: Optional[str] = None, **spec: Any) -> List["WebServEnv"]:
        """Opens ``n`` sessions on the same task and seed (GRPO), each already reset."""
        urls = [url] if isinstance(url, str) else list(url)
        client = place(urls, token, need=n)
        created = client.create_group(n, **_clean(spec))
        return [cls(client.url, token=token, session=s, client=client) for s in created["sessions"]]

    def reset(self, seed: Optional[int] = None, task: Optional[str] = None) -> Tuple[str, Dict[str, Any]]:
        if self.session_id is None:
            self.client = self.client or place(self.urls, self.token)
            spec = dict(self.spec)
            if seed is not None:
                spec["seed"] = seed
            if task is not None:
                spec["task"] = task
            created = self.client.create_session(**spec)
            self.session_id = created["id"]
        elif self.created is not None and seed is None and task is None:
            created = self.created  # a group's session arrives already reset
        else:
            assert self.client is not None
            created = self.client.reset(self.session_id, seed=seed, task=task)
        self.created = None
        task_info = created.get("task") or {}
        self.instruction = task_info.get("instruction")
        info = {"observation": created["observation"], "lease": created["lease"], "task": created.get("task"),
                "instruction": self.instruction, "session": self.session_id}
        return created["observation"]["text"], info

    def step(self, action: Dict[str, Any], request_id: Optional[str] = None) -> Tuple[Optional[str], Optional[float], bool, Dict[str, Any]]:
        if self.session_id is None or self.client is None:
            raise RuntimeError("Call reset() before step()")
        self.created = None
        result = self.client.step(self.session_id, action, request_id)
        observation = result.get("observation")
        text = observation["text"] if observation else None
        reward = result.get("reward")  # None unless ok or action_error
        done = bool(result["done"] or result["truncated"] or result["status"] == "expired")
        info = dict(result["info"], status=result["status"], truncated=result["truncated"], observation=observation)
        return text, reward, done, info

    def verify(self) -> Dict[str, Any]:
        assert self.client is not None and self.session_id is not None
        return self.client.verify(self.session_id)

    def close(self) -> None:
        if self.client is not None and self.session_id is not None:
            try:
                self.client.close(self.session_id)
            except WebServError as error:
                if error.status not in (404, 410):
                    raise
        self.session_id = None

    def __enter__(self) -> "WebServEnv":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def _clean(spec: Dict[str, Any]) -> Dict[str, Any]:
    return {key: value for key, value in spec.items() if value is not None}


def _decode(content_type: str, raw: bytes) -> Any:
    if content_type.startswith("image/"):
        return raw
    return json.loads(raw.decode("utf-8")) if raw else None
