"""webserv.client's deadline, Retry-After retries and network errors.

The refusals come from the real server (WEBSERV_URL, cap 1); the waits that
need a server which refuses on cue, or never answers, come from small
loopback servers here.
"""

import http.server
import json
import os
import socket
import threading
import time

import pytest
from webserv import WebServClient, WebServError, WebServNetworkError

URL = os.environ["WEBSERV_URL"]


def serve(handler_class):
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler_class)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def test_a_group_past_the_cap_is_refused_at_once_not_retried():
    client = WebServClient(URL, retries=5)
    with pytest.raises(WebServError) as refused:
        client.create_group(2, site="demo")
    assert refused.value.status == 400 and refused.value.code == "group-too-large"
    assert refused.value.retry_after is None
    assert "cap is 1" in refused.value.message


def test_retry_after_is_honoured_a_bounded_number_of_times():
    calls = []

    class Busy(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            calls.append(time.monotonic())
            if len(calls) <= 2:
                body, status, headers = {"code": "capacity", "message": "full"}, 429, {"Retry-After": "1"}
            else:
                body, status, headers = {"status": "healthy", "free": 1}, 200, {}
            data = json.dumps(body).encode()
            self.send_response(status)
            for name, value in {"content-type": "application/json", **headers}.items():
                self.send_header(name, value)
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args):
            pass

    server = serve(Busy)
    url = f"http://127.0.0.1:{server.server_address[1]}"
    assert WebServClient(url, retries=3).health()["status"] == "healthy"
    assert len(calls) == 3 and calls[1] - calls[0] >= 0.9
    calls.clear()
    with pytest.raises(WebServError) as refused:
        WebServClient(url, retries=1).health()
    assert refused.value.status == 429 and len(calls) == 2
    calls.clear()
    # A wait that would pass the deadline is not taken.
    with pytest.raises(WebServError):
        WebServClient(url, retries=3, timeout=0.5).health()
    assert len(calls) == 1
    server.shutdown()


def test_network_failures_are_one_typed_error():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with pytest.raises(WebServNetworkError) as refused:
        WebServClient(f"http://127.0.0.1:{port}").health()
    assert refused.value.timed_out is False and refused.value.code == "network"
    # A server that accepts and never answers: the deadline ends the call.
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(1)
    try:
        with pytest.raises(WebServNetworkError) as late:
            WebServClient(f"http://127.0.0.1:{silent.getsockname()[1]}", timeout=0.5).health()
        assert late.value.timed_out is True and late.value.code == "timeout"
    finally:
        silent.close()


def test_tasks_are_sampled_from_a_split_reproducibly_and_open_as_sessions():
    client = WebServClient(URL)
    count = client.num_tasks("test")
    drawn = client.sample_tasks("test", 5, seed=1)
    assert len(set(drawn)) == 5 and drawn == client.sample_tasks("test", 5, seed=1)
    assert drawn[0] == client.task_at("test", __import__("random").Random(1).sample(range(count), 5)[0])
    with pytest.raises(ValueError, match="Cannot draw"):
        client.sample_tasks("test", count + 1)
    with pytest.raises(WebServError) as refused:
        client.task_at("test", count)
    assert refused.value.status == 400
    session = client.create_session(task=drawn[0])
    assert session.task is not None and session.task.id == drawn[0]
    client.close(session.id)
