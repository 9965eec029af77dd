"""Kept-alive HTTP/1.1 connections to one server, for the sync client.

A rollout sends a dozen requests a second to one server; a connection each
costs a TCP handshake on both sides and, at the server, a relay through its
connection guard. So each client keeps a few idle connections (``size``) and
reuses them. Standard library only (``http.client``).

A connection the server closed while it sat idle (its idle bound, a restart)
is noticed before reuse: a closed socket turns readable (EOF), and an idle
one has nothing else to read. The check cannot close the race where the
server closes just as a request leaves; :func:`retryable` says when a request
that failed on a reused connection may be sent again.
"""

import http.client
import os
import select
import socket
import threading
from typing import List, Optional, Tuple

__all__ = ["ConnectionPool", "IDEMPOTENT", "retryable"]

IDEMPOTENT = frozenset(("GET", "HEAD", "PUT", "DELETE", "OPTIONS"))
"""The methods a server handles the same when sent twice (RFC 9110, section 9.2.2)."""


def retryable(method: str, reused: bool, sent: bool, error: BaseException) -> bool:
    """Whether a request that failed with ``error`` may go again on a new connection.

    Only on a reused connection (a fresh one failing is the server's answer),
    and only when the request never left (the send failed: the server had
    closed its end and reads nothing more) or when it is idempotent and the
    server closed without a byte of answer. A POST (a step) that may have
    been read is never sent twice: the caller gets the network error."""
    if not reused:
        return False
    if not sent:
        return isinstance(error, (ConnectionError, OSError))
    closed = isinstance(error, (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError))
    return closed and method in IDEMPOTENT


def dropped(sock: Optional[socket.socket]) -> bool:
    """Whether an idle connection's socket was closed by its peer (readable: EOF or stray bytes)."""
    if sock is None:
        return True
    try:
        readable, _, _ = select.select([sock], [], [], 0)
    except (OSError, ValueError):
        return True
    return bool(readable)


class ConnectionPool:
    """At most ``size`` idle connections to ``host:port``; thread-safe, fork-aware."""

    def __init__(self, scheme: str, host: str, port: Optional[int], size: int = 4):
        self.scheme = scheme
        self.host = host
        self.port = port
        self.size = size
        self.opened = 0
        """Connections opened so far (for tests and logs)."""
        self._reinit()

    def _reinit(self) -> None:
        # A forked child (a gymnasium worker) shares the parent's sockets:
        # it starts with none, and a lock nobody holds.
        self._pid = os.getpid()
        self._lock = threading.Lock()
        self._idle: List[http.client.HTTPConnection] = []

    def take(self, timeout: float) -> Tuple[http.client.HTTPConnection, bool]:
        """A connection with ``timeout`` on its socket, and whether it was used before."""
        if self._pid != os.getpid():
            self._reinit()
        while True:
            with self._lock:
                connection = self._idle.pop() if self._idle else None
            if connection is None:
                break
            if dropped(connection.sock):
                connection.close()
                continue
            assert connection.sock is not None
            connection.sock.settimeout(timeout)
            return connection, True
        self.opened += 1
        kind = http.client.HTTPSConnection if self.scheme == "https" else http.client.HTTPConnection
        return kind(self.host, self.port, timeout=timeout), False

    def give(self, connection: http.client.HTTPConnection) -> None:
        """Returns a connection whose answer was read whole; closes it past ``size``."""
        if self._pid == os.getpid():
            with self._lock:
                if len(self._idle) < self.size:
                    self._idle.append(connection)
                    return
        connection.close()

    def clear(self) -> None:
        """Closes every idle connection."""
        with self._lock:
            idle, self._idle = self._idle, []
        for connection in idle:
            connection.close()
