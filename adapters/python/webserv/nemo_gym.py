"""A NeMo Gym resources server in front of a WebServ server (standard library only).

NeMo Gym (``nemo-gym`` on PyPI) needs Python 3.13 or newer, so this module does
not subclass its ``SimpleResourcesServer``: it speaks the documented contract
its agents and clients use, the one verifiers' NeMo Gym taskset drives too:

- ``POST /seed_session`` with a dataset row opens a WebServ session on the row's
  task (``row["webserv"]["task"]``) and binds it to the caller by a cookie;
- ``POST /<tool>`` (one route per action: ``/click``, ``/type``, ``/stop``…) with
  the tool's arguments steps that session and answers the page as text (the
  agent's mistakes are text it reads; our failures are HTTP 502);
- ``POST /verify`` with the row and the agent's response answers the row, the
  response, ``reward`` and its components (``success``, ``steps``, the verifier's
  ``reason``), and closes the session. A session that met an infrastructure
  failure answers 502, never a reward of 0.

``dataset_rows()`` writes the rows: the prompt in ``responses_create_params``
holds the instruction and the first page as a fresh session shows it, and the
tools are the server's own definitions::

    from webserv.nemo_gym import ResourcesServer, dataset_rows

    with ResourcesServer("http://127.0.0.1:8800") as resources:
        rows = dataset_rows("http://127.0.0.1:8800", ["demo/add-note/1"])
        print(resources.url)
"""

import json
import secrets
import threading
from http.cookies import SimpleCookie
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Dict, List, Optional

from .client import WebServClient, WebServError

__all__ = ["COOKIE", "ResourcesServer", "dataset_rows"]

COOKIE = "webserv_nemo_session"
"""The cookie that binds a caller to its session."""

_SYSTEM = (
    "You operate a web browser through tools. Each observation lists the page; elements you can act on "
    "carry an id in brackets, like [3]. Call one tool at a time. When the task is done, call stop with "
    "your answer."
)


def dataset_rows(server: str, tasks: List[str], token: Optional[str] = None) -> List[Dict[str, Any]]:
    """NeMo Gym dataset rows for WebServ tasks (write them one JSON a line).

    :param server: the WebServ server
    :param tasks: task ids (``"demo/add-note/1"``)
    :param token: the server's bearer token, if any
    :returns: one row per task, ``responses_create_params`` holding the prompt and the tools
    """
    client = WebServClient(server, token=token)
    tools = [
        {"type": "function", "name": t["function"]["name"], "description": t["function"]["description"],
         "parameters": t["function"]["parameters"], "strict": t["function"].get("strict", False)}
        for t in client.request("GET", "/v1/tools?format=openai")["tools"]
    ]
    rows = []
    for task in tasks:
        # The first page of a fresh session, so the prompt names the ids the agent starts from.
        session = client.create_session(task=task)
        try:
            instruction = session.task.instruction if session.task else ""
            first = session.observation.text
        finally:
            client.close(session.id)
        rows.append({
            "responses_create_params": {
                "instructions": _SYSTEM,
                "input": [{"role": "user", "content": f"Task: {instruction}\n\n{first}"}],
                "tools": tools,
            },
            "webserv": {"task": task},
        })
    return rows


class _Handler(BaseHTTPRequestHandler):
    server: "_Server"

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass

    def _send(self, status: int, body: Any, cookie: Optional[str] = None) -> None:
        text = body if isinstance(body, str) else json.dumps(body)
        data = text.encode("utf-8")
        self.send_response(status)
        self.send_header("content-type", "text/plain; charset=utf-8" if isinstance(body, str) else "application/json")
        self.send_header("content-length", str(len(data)))
        if cookie is not None:
            self.send_header("set-cookie", f"{COOKIE}={cookie}; Path=/; HttpOnly; SameSite=Strict")
        self.end_headers()
        self.wfile.write(data)

    def _sid(self) -> Optional[str]:
        jar = SimpleCookie(self.headers.get("cookie") or "")
        return jar[COOKIE].value if COOKIE in jar else None

    def do_GET(self) -> None:
        self._send(200, {"status": "ok"})

    def do_POST(self) -> None:
        owner = self.server.owner
        try:
            body = json.loads(self.rfile.read(int(self.headers.get("content-length") or 0)) or b"{}")
            if not isinstance(body, dict):
                raise ValueError("expected a JSON object")
        except ValueError as error:
            self._send(400, {"code": "bad-request", "message": f"Expected a JSON object body: {error}"})
            return
        route = self.path.split("?", 1)[0].strip("/")
        if route == "seed_session":
            self._seed(owner, body)
            return
        sid = self._sid()
        entry = owner.sessions.get(sid or "")
        if entry is None:
            self._send(400, {"code": "no-session", "message": "No session: POST /seed_session first and send its cookie"})
            return
        if route == "verify":
            self._verify(owner, sid or "", entry, body)
        else:
            self._step(owner, entry, route, body)

    def _seed(self, owner: "ResourcesServer", row: Dict[str, Any]) -> None:
        task = (row.get("webserv") or {}).get("task")
        if not isinstance(task, str):
            self._send(400, {"code": "bad-request", "message": 'Expected the row to name its task: {"webserv": {"task": "site/template/seed"}}'})
            return
        try:
            session = owner.client.create_session(task=task)
        except WebServError as error:
            self._send(502, {"code": "env_error", "message": f"Could not open a session on {task!r}: {error}"})
            return
        sid = secrets.token_urlsafe(16)
        with owner.lock:
            owner.sessions[sid] = {"session": session.id, "failed": None, "steps": 0}
        self._send(200, {}, cookie=sid)

    def _step(self, owner: "ResourcesServer", entry: Dict[str, Any], tool: str, arguments: Dict[str, Any]) -> None:
        action = dict({k: v for k, v in arguments.items() if v is not None}, action=tool)
        try:
            result = owner.client.step(entry["session"], action)
        except WebServError as error:
            entry["failed"] = str(error)
            self._send(502, {"code": "env_error", "message": f"The step failed on the server's side: {error}"})
            return
        if result.ours:
            entry["failed"] = f"{result.status}: {result.info.get('error')}"
            self._send(502, {"code": result.status, "message": f"The step failed on the server's side: {entry['failed']}"})
            return
        entry["steps"] += 1
        text = result.observation.text if result.observation else ""
        if result.done:
            text = "The episode has ended."
        elif result.status == "action_error":
            error = result.info.get("error")
            text = f"Error: {error.get('message') if isinstance(error, dict) else error}\n\n{text}"
        self._send(200, text)

    def _verify(self, owner: "ResourcesServer", sid: str, entry: Dict[str, Any], body: Dict[str, Any]) -> None:
        try:
            if entry["failed"]:
                self._send(502, {"code": "env_error", "message": f"The episode met our failure, it has no reward: {entry['failed']}"})
                return
            try:
                verdict = owner.client.verify(entry["session"])
            except WebServError as error:
                self._send(502, {"code": "env_error", "message": f"Could not verify: {error}"})
                return
            self._send(200, dict(body, reward=verdict.reward, success=verdict.reward >= 1.0,
                                 steps=entry["steps"], reason=verdict.reason))
        finally:
            with owner.lock:
                owner.sessions.pop(sid, None)
            try:
                owner.client.close(entry["session"])
            except WebServError:
                pass  # reaped already: the verdict (or the error) stands


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    owner: "ResourcesServer"


class ResourcesServer:
    """The resources server, on 127.0.0.1 (port 0: a free one), in front of a WebServ server.

    :param server: the WebServ server's URL
    :param port: the port, 0 for any free one
    :param token: the WebServ server's bearer token, if any
    """

    def __init__(self, server: str, port: int = 0, token: Optional[str] = None):
        self.client = WebServClient(server, token=token)
        self.sessions: Dict[str, Dict[str, Any]] = {}
        self.lock = threading.Lock()
        self._server = _Server(("127.0.0.1", port), _Handler)
        self._server.owner = self

    @property
    def url(self) -> str:
        """The resources server's base URL."""
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def start(self) -> "ResourcesServer":
        """Serves in a background thread."""
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def close(self) -> None:
        """Stops serving; closes the sessions still open."""
        self._server.shutdown()
        self._server.server_close()
        for entry in list(self.sessions.values()):
            try:
                self.client.close(entry["session"])
            except WebServError:
                pass  # gone already

    def __enter__(self) -> "ResourcesServer":
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.close()


def main() -> None:
    """``python -m webserv.nemo_gym``: serves, or with ``--rows TASK…`` prints dataset rows and exits."""
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--server", default="http://127.0.0.1:8800", help="the WebServ server")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--rows", nargs="+", metavar="TASK", help="print these tasks' dataset rows, one a line")
    args = parser.parse_args()
    if args.rows:
        for row in dataset_rows(args.server, args.rows):
            print(json.dumps(row))
        return
    resources = ResourcesServer(args.server, args.port)
    print(resources.url, flush=True)
    try:
        resources._server.serve_forever()
    except KeyboardInterrupt:
        resources.close()


if __name__ == "__main__":
    main()
