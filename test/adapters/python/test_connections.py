"""The clients keep connections alive (run by connections_test.ts against a
real server whose guard closes connections idle past WEBSERV_CONN_IDLE_S)."""

import asyncio
import os
import re
import socket
import threading
import time
import urllib.request

import pytest

from webserv import WebServClient, WebServNetworkError
from webserv.aio import AsyncWebServClient

URL = os.environ["WEBSERV_URL"]
CONN_IDLE = float(os.environ["WEBSERV_CONN_IDLE_S"])
TASK = "demo/add-note/1"


def accepted() -> int:
    """The server's count of accepted connections (its /metrics)."""
    with urllib.request.urlopen(URL + "/metrics", timeout=30) as response:
        text = response.read().decode()
    return int(re.search(r"^webserv_connections_accepted_total (\d+)", text, re.M).group(1))


def wait_until_closed_at_server(open_before: int) -> None:
    """Waits (bounded) until the guard's idle bound closed the client's connection."""
    end = time.monotonic() + CONN_IDLE * 5 + 10
    while time.monotonic() < end:
        with urllib.request.urlopen(URL + "/metrics", timeout=30) as response:
            text = response.read().decode()
        # This probe's own connection is open while it is read.
        if int(re.search(r"^webserv_connections (\d+)", text, re.M).group(1)) <= open_before:
            return
        time.sleep(CONN_IDLE / 4)
    raise AssertionError("the server never closed the idle connection")


def solve_sync(client: WebServClient, session: str, note: str) -> None:
    client.step(session, {"action": "type", "id": 1, "text": note})
    client.step(session, {"action": "click", "id": 2})


def test_a_sync_session_steps_on_one_connection():
    client = WebServClient(URL)
    session = client.create_session(task=TASK)
    note = session.task.instruction.split('"')[1]
    before = accepted()
    solve_sync(client, session.id, note)
    assert client.verify(session.id).reward == 1.0
    assert client.state(session.id)["step"] == 2
    client.close(session.id)
    # Five requests, and the metrics probe's own connection: no new one for the client.
    assert accepted() - before == 1
    assert client.connections_opened == 1
    client.disconnect()


def test_a_sync_connection_the_server_dropped_is_reopened_without_losing_or_repeating_a_step():
    client = WebServClient(URL)
    session = client.create_session(task=TASK)
    note = session.task.instruction.split('"')[1]
    client.step(session.id, {"action": "type", "id": 1, "text": note})
    wait_until_closed_at_server(1)  # only the probe's own connection stays open
    client.step(session.id, {"action": "click", "id": 2})
    assert client.state(session.id)["step"] == 2
    assert client.verify(session.id).reward == 1.0
    assert client.connections_opened == 2
    client.close(session.id)
    client.disconnect()


def test_async_rollouts_step_on_one_connection_each():
    async def rollout() -> int:
        client = AsyncWebServClient(URL)
        session = await client.create_session(task=TASK)
        note = session.task.instruction.split('"')[1]
        await client.step(session.id, {"action": "type", "id": 1, "text": note})
        await client.step(session.id, {"action": "click", "id": 2})
        assert (await client.verify(session.id)).reward == 1.0
        assert (await client.state(session.id))["step"] == 2
        await client.close(session.id)
        await client.disconnect()
        return client.connections_opened

    async def main():
        return await asyncio.gather(*(rollout() for _ in range(3)))

    before = accepted()
    assert asyncio.run(main()) == [1, 1, 1]
    assert accepted() - before == 4  # three clients and the probe


def test_an_async_connection_the_server_dropped_is_reopened_without_losing_or_repeating_a_step():
    async def main():
        client = AsyncWebServClient(URL)
        session = await client.create_session(task=TASK)
        note = session.task.instruction.split('"')[1]
        await client.step(session.id, {"action": "type", "id": 1, "text": note})
        await asyncio.get_running_loop().run_in_executor(None, wait_until_closed_at_server, 1)
        await client.step(session.id, {"action": "click", "id": 2})
        state = await client.state(session.id)
        verdict = await client.verify(session.id)
        await client.close(session.id)
        await client.disconnect()
        return state["step"], verdict.reward, client.connections_opened

    assert asyncio.run(main()) == (2, 1.0, 2)


class _Hangup:
    """A loopback server that reads each request and closes without answering,
    counting the requests that arrived (a step lost on the way)."""

    def __init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        self.requests = 0
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with conn:
                conn.settimeout(10)
                data = b""
                while b"\r\n\r\n" not in data:
                    chunk = conn.recv(65536)
                    if not chunk:
                        break
                    data += chunk
                if data:
                    self.requests += 1

    def close(self) -> None:
        self.sock.close()


def test_a_step_the_server_hung_up_on_is_not_sent_again():
    hangup = _Hangup()
    try:
        with pytest.raises(WebServNetworkError):
            WebServClient(hangup.url, timeout=10).step("s", {"action": "click", "id": 2})
        with pytest.raises(WebServNetworkError):
            asyncio.run(AsyncWebServClient(hangup.url, timeout=10).step("s", {"action": "click", "id": 2}))
        assert hangup.requests == 2
    finally:
        hangup.close()
