"""A scripted stand-in for a model: a real OpenAI-compatible HTTP server on
127.0.0.1 that answers ``POST /v1/chat/completions`` with tool calls from a
template's solver script, or with wrong ones (standard library only).

No model weights can be downloaded where WebServ's CI runs, so the harness,
verifiers and NeMo Gym adapters are tested against this server in place of a
model: it speaks the chat-completions wire format (``tools`` in,
``tool_calls`` out) exactly as vLLM or SGLang do, so the adapters under test
cannot tell it from one. Each request's JSON is kept (``requests``) so tests can
check what the harness sent::

    from webserv.scripted_model import ScriptedModelServer

    with ScriptedModelServer(policy="solve") as model:
        print(model.base_url)   # http://127.0.0.1:PORT/v1

``policy="solve"`` reads the task from the conversation and plays its
template's solver (one tool call a turn); ``policy="wrong"`` plays the same
moves with a wrong value, so a verifier that works scores it 0. A request
without ``tools`` (a loop that reads actions from the reply's text, such as
verifiers' OpenEnv taskset) gets the same move as a JSON action in the
content (``{"action": "click", "id": 3}``). Templates with
a script: ``demo/add-note`` (type the note the instruction names, click Add,
stop) and ``wordpress/post-author`` (log in with the credentials the
instruction states, open Posts, search the post's title, answer its row's
author: 7 steps). Run it alone with ``python -m webserv.scripted_model --port 8000``.
"""

import argparse
import json
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Dict, List, Optional

from .observation_text import find_id, parse_elements

__all__ = ["POLICIES", "ScriptedModelServer", "scripted_reply", "text_action"]

Call = Dict[str, Any]
"""One tool call, ``{"name": ..., "arguments": {...}}``, or a plain reply, ``{"content": ...}``."""


def _page_text(content: str) -> str:
    """A message's page text: the content itself, or the observation's text when the content is an
    OpenEnv step as JSON (``{"observation": {"text": ...}, ...}``, what text-action loops send)."""
    try:
        data = json.loads(content)
    except ValueError:
        return content
    observation = data.get("observation") if isinstance(data, dict) else None
    text = observation.get("text") if isinstance(observation, dict) else None
    return text if isinstance(text, str) else content


def _last_observation(messages: List[Dict[str, Any]]) -> str:
    """The newest page text the conversation holds (a tool result, else the prompt)."""
    for message in reversed(messages):
        content = message.get("content")
        if isinstance(content, list):  # content parts
            content = "".join(part.get("text", "") for part in content if isinstance(part, dict))
        if message.get("role") in ("tool", "user") and isinstance(content, str) and "[" in content:
            return _page_text(content)
    return ""


def text_action(call: "Call") -> Optional[str]:
    """A tool call as the JSON action a text-action loop parses (``{"action": "click", "id": 3}``),
    or ``None`` for a plain reply. Null arguments are left out, as the tool schemas make them
    optional."""
    if "name" not in call:
        return None
    return json.dumps(dict({k: v for k, v in call["arguments"].items() if v is not None}, action=call["name"]))


def _instruction(messages: List[Dict[str, Any]]) -> str:
    for message in messages:
        if message.get("role") == "user":
            content = message.get("content")
            return content if isinstance(content, str) else json.dumps(content)
    return ""




def _add_note(messages: List[Dict[str, Any]], wrong: bool) -> Call:
    """demo/add-note's solver: type the quoted note, click Add, stop."""
    turn = sum(1 for m in messages if m.get("role") == "assistant")
    page = _last_observation(messages)
    if turn == 0:
        quoted = re.search(r'says \\?"([^"\\]+)\\?"', _instruction(messages))
        note = quoted.group(1) if quoted else ""
        box = find_id(page, "textbox", "New note")
        return {"name": "type", "arguments": {
            "id": box, "text": "not the note" if wrong else note, "mode": None, "enter": None,
        }}
    if turn == 1:
        return {"name": "click", "arguments": {"id": find_id(page, "button", "Add"), "button": None, "modifiers": None}}
    if turn == 2:
        return {"name": "stop", "arguments": {"answer": "done"}}
    return {"content": "Done."}  # the episode ended: a plain reply ends the agent's loop


def _post_author(messages: List[Dict[str, Any]], wrong: bool) -> Call:
    """wordpress/post-author's solver: log in, open Posts, search the title, answer the author
    that the post's row links (``[12] Name → …author=N``)."""
    turn = sum(1 for m in messages if m.get("role") == "assistant")
    page = _last_observation(messages)
    instruction = _instruction(messages)
    if turn in (0, 1):
        found = re.search(r'username \\?"([^"\\]+)\\?" and password \\?"([^"\\]+)\\?"', instruction)
        username, password = found.groups() if found else ("", "")
        box = find_id(page, "textbox", "Username or Email Address" if turn == 0 else "Password")
        return {"name": "type", "arguments": {
            "id": box, "text": username if turn == 0 else password, "mode": None, "enter": None,
        }}
    click = {2: ("button", "Log In"), 3: ("link", "Posts"), 5: ("button", "Search Posts")}
    if turn in (2, 3, 5):
        role, name = click[turn]
        return {"name": "click", "arguments": {"id": find_id(page, role, name), "button": None, "modifiers": None}}
    titled = re.search(r"“([^”]+)”", instruction)
    title = titled.group(1) if titled else ""
    if turn == 4:
        return {"name": "type", "arguments": {
            "id": find_id(page, "searchbox", "Search Posts:"), "text": title, "mode": None, "enter": None,
        }}
    if turn == 6:
        elements = parse_elements(page)
        box = next((e for e in elements if e.get("role") == "checkbox" and e.get("name") == f"Select {title}"), None)
        row = box.get("line", "") if box else ""
        author = next((e for e in parse_elements(row)
                       if e.get("role") == "link" and re.search(r"[?&]author=\d+", e.get("href", ""))), None)
        answer = author.get("name", "") if author else ""
        return {"name": "stop", "arguments": {"answer": "not the author" if wrong else answer}}
    return {"content": "Done."}  # the episode ended: a plain reply ends the agent's loop


POLICIES: Dict[str, Callable[[List[Dict[str, Any]], bool], Call]] = {
    "add-note": _add_note,
    "post-author": _post_author,
}
"""Solver scripts by template name."""

_MARKERS: Dict[str, str] = {"add-note": "Add a note", "post-author": "Who wrote the post"}
"""A phrase of each template's instruction, for conversations that do not name the template."""


def scripted_reply(messages: List[Dict[str, Any]], policy: str) -> Call:
    """The next tool call the scripted model makes in a conversation.

    :param messages: the chat so far (system, user with the task, assistant turns, tool results)
    :param policy: ``"solve"`` or ``"wrong"``
    :returns: the tool call
    :raises ValueError: when no template's script matches the conversation
    """
    text = json.dumps(messages)
    for template, script in POLICIES.items():
        if template in text or _MARKERS[template] in text:
            return script(messages, policy == "wrong")
    raise ValueError(f"No scripted solver matches this conversation: known templates are {sorted(POLICIES)}")


class _Handler(BaseHTTPRequestHandler):
    server: "_Server"

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass

    def _send(self, status: int, body: Any) -> None:
        data = json.dumps(body).encode("utf-8")
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        if self.path.rstrip("/").endswith("/models"):
            self._send(200, {"object": "list", "data": [{"id": self.server.owner.model, "object": "model",
                                                          "created": 0, "owned_by": "webserv"}]})
        else:
            self._send(404, {"error": {"message": f"Not found: {self.path}", "type": "not_found"}})

    def do_POST(self) -> None:
        if not self.path.rstrip("/").endswith("/chat/completions"):
            self._send(404, {"error": {"message": f"Not found: {self.path}", "type": "not_found"}})
            return
        length = int(self.headers.get("content-length") or 0)
        try:
            body = json.loads(self.rfile.read(length).decode("utf-8"))
            messages = body["messages"]
        except (ValueError, KeyError, TypeError) as error:
            self._send(400, {"error": {"message": f"Expected a chat completion request: {error}",
                                       "type": "invalid_request_error"}})
            return
        owner = self.server.owner
        with owner.lock:
            owner.requests.append(body)
        if owner.on_request is not None:
            owner.on_request(body)
        try:
            call = scripted_reply(messages, owner.policy)
        except ValueError as error:
            self._send(400, {"error": {"message": str(error), "type": "invalid_request_error"}})
            return
        if owner.latency:
            time.sleep(owner.latency)
        with owner.lock:
            owner.calls += 1
            number = owner.calls
        if body.get("tools"):
            message: Dict[str, Any] = {"role": "assistant", "content": call.get("content"), "tool_calls": [{
                "id": f"call_{number}", "type": "function",
                "function": {"name": call["name"], "arguments": json.dumps(call["arguments"])},
            }] if "name" in call else None}
        else:
            # No tools offered: the loop reads actions from text (verifiers' OpenEnv taskset), so the
            # same move is answered as its JSON action.
            message = {"role": "assistant", "content": text_action(call) or call.get("content"),
                       "tool_calls": None}
        prompt_tokens = len(json.dumps(messages)) // 4
        usage = {"prompt_tokens": prompt_tokens, "completion_tokens": 16, "total_tokens": prompt_tokens + 16}
        head = {"id": f"chatcmpl-{number}", "created": int(time.time()), "model": body.get("model", owner.model)}
        if body.get("stream"):
            self._stream(head, message, usage)
            return
        finish = "tool_calls" if message["tool_calls"] else "stop"
        self._send(200, dict(head, object="chat.completion", usage=usage, choices=[
            {"index": 0, "message": message, "finish_reason": finish, "logprobs": None},
        ]))

    def _stream(self, head: Dict[str, Any], message: Dict[str, Any], usage: Dict[str, int]) -> None:
        """The same answer as server-sent chunks, the way streaming clients ask for it."""
        if message["tool_calls"]:
            calls = [dict(call, index=i) for i, call in enumerate(message["tool_calls"])]
            delta: Dict[str, Any] = {"role": "assistant", "content": None, "tool_calls": calls}
        else:
            delta = {"role": "assistant", "content": message["content"]}
        chunks = [
            {"index": 0, "delta": delta, "finish_reason": None},
            {"index": 0, "delta": {}, "finish_reason": "tool_calls" if message["tool_calls"] else "stop"},
        ]
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        self.send_header("connection", "close")
        self.end_headers()
        for choice in chunks:
            event = dict(head, object="chat.completion.chunk", choices=[choice])
            self.wfile.write(f"data: {json.dumps(event)}\n\n".encode("utf-8"))
        final = dict(head, object="chat.completion.chunk", choices=[], usage=usage)
        self.wfile.write(f"data: {json.dumps(final)}\n\ndata: [DONE]\n\n".encode("utf-8"))
        self.wfile.flush()
        self.close_connection = True


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    owner: "ScriptedModelServer"


class ScriptedModelServer:
    """The scripted model's HTTP server, started on 127.0.0.1 (port 0: a free one).

    :param policy: ``"solve"`` (the template's solver) or ``"wrong"`` (the same moves, a wrong value)
    :param port: the port, 0 for any free one
    :param latency: seconds each answer waits, to simulate a model's decoding time
    :param model: the model name it reports
    :param on_request: called with each request's JSON before it is answered (tests use it to break
        things mid-episode)
    """

    def __init__(
        self, policy: str = "solve", port: int = 0, latency: float = 0.0, model: str = "scripted",
        on_request: Optional[Callable[[Dict[str, Any]], None]] = None,
    ):
        if policy not in ("solve", "wrong"):
            raise ValueError(f"Expected policy 'solve' or 'wrong', got {policy!r}")
        self.policy = policy
        self.latency = latency
        self.model = model
        self.on_request = on_request
        self.requests: List[Dict[str, Any]] = []
        """Every chat completion request received, in order."""
        self.calls = 0
        self.lock = threading.Lock()
        self._server = _Server(("127.0.0.1", port), _Handler)
        self._server.owner = self
        self._thread: Optional[threading.Thread] = None

    @property
    def base_url(self) -> str:
        """The OpenAI-compatible base URL (``http://127.0.0.1:PORT/v1``)."""
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def start(self) -> "ScriptedModelServer":
        """Serves in a background thread."""
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return self

    def close(self) -> None:
        """Stops serving and frees the port."""
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> "ScriptedModelServer":
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.close()


def main() -> None:
    """``python -m webserv.scripted_model``: serves until interrupted."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--policy", choices=("solve", "wrong"), default="solve")
    parser.add_argument("--latency", type=float, default=0.0, help="seconds per answer")
    parser.add_argument("--record", help="append each request's JSON to this file, one a line")
    args = parser.parse_args()
    record = None
    if args.record:
        def record(body: Dict[str, Any]) -> None:
            with open(args.record, "a", encoding="utf-8") as out:
                out.write(json.dumps(body) + "\n")
    server = ScriptedModelServer(args.policy, args.port, args.latency, on_request=record)
    print(server.base_url, flush=True)
    try:
        server._server.serve_forever()
    except KeyboardInterrupt:
        server.close()


if __name__ == "__main__":
    main()
