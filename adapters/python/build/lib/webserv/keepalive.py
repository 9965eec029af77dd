"""Keeps the leases of open sessions alive while a training loop pauses.

The server reaps a session left idle past its lease's ``idle_timeout_s``
(``--idle-timeout``, default 300 s) and renews the lease on every use, a read
of ``GET /v1/sessions/{id}`` included. A trainer pauses between rollouts for
as long as an optimizer step takes, often longer than that, so an env that is
held but not stepped is touched here at a third of its idle timeout.

One daemon thread serves every session of the process (a batch of 256 envs
is not 256 threads); it sleeps until the earliest touch is due. A touch that
fails is logged and never raised: the env notices an expired session on its
next reset and opens a new one.
"""

import heapq
import itertools
import logging
import os
import threading
import time
from typing import Any, Dict, List, Optional, Tuple

__all__ = ["KeepAlive", "keepalive"]

log = logging.getLogger("webserv")


class KeepAlive:
    """Touches registered sessions at a third of their idle timeout."""

    def __init__(self) -> None:
        self._reinit()
        # A forked child (gymnasium's AsyncVectorEnv workers) starts with no
        # thread and may inherit the lock held: it starts afresh, holding nothing.
        if hasattr(os, "register_at_fork"):
            os.register_at_fork(after_in_child=self._reinit)

    def _reinit(self) -> None:
        self._lock = threading.Condition()
        self._heap: List[Tuple[float, int, str]] = []
        self._entries: Dict[str, Tuple[Any, str, float, int]] = {}
        self._count = itertools.count()
        self._thread: Optional[threading.Thread] = None
        self.touches = 0
        """Touches sent so far."""
        self.failures = 0
        """Touches that failed (the session was gone or the server unreachable)."""

    def hold(self, client: Any, session: str, idle_timeout_s: float) -> str:
        """Keeps ``session`` alive through ``client`` until :meth:`release`; returns the handle."""
        period = max(0.2, float(idle_timeout_s) / 3)
        key = f"{client.url} {session}"
        with self._lock:
            generation = next(self._count)
            self._entries[key] = (client, session, period, generation)
            heapq.heappush(self._heap, (time.monotonic() + period, generation, key))
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run, name="webserv-keepalive", daemon=True)
                self._thread.start()
            self._lock.notify()
        return key

    def release(self, key: Optional[str]) -> None:
        """Stops touching a session (it was closed or replaced)."""
        if key is None:
            return
        with self._lock:
            self._entries.pop(key, None)

    def held(self) -> int:
        """How many sessions are kept alive now."""
        with self._lock:
            return len(self._entries)

    def _run(self) -> None:
        while True:
            with self._lock:
                while True:
                    # Drop heap items of released or re-held sessions.
                    while self._heap and self._stale(self._heap[0]):
                        heapq.heappop(self._heap)
                    if not self._heap:
                        self._lock.wait(timeout=60)
                        continue
                    due, _, key = self._heap[0]
                    wait = due - time.monotonic()
                    if wait <= 0:
                        heapq.heappop(self._heap)
                        client, session, period, generation = self._entries[key]
                        heapq.heappush(self._heap, (time.monotonic() + period, generation, key))
                        break
                    self._lock.wait(timeout=wait)
            self._touch(client, session, key, generation)

    def _stale(self, item: Tuple[float, int, str]) -> bool:
        entry = self._entries.get(item[2])
        return entry is None or entry[3] != item[1]

    def _touch(self, client: Any, session: str, key: str, generation: int) -> None:
        try:
            client.request("GET", f"/v1/sessions/{session}", timeout=min(30.0, client.timeout), retries=0)
            self.touches += 1
        except Exception as error:  # noqa: BLE001 - a touch is best effort; the env revives on reset
            self.failures += 1
            log.warning("webserv: keep-alive of session %s failed: %s", session, error)
            status = getattr(error, "status", 0)
            if status in (404, 410):
                with self._lock:
                    entry = self._entries.get(key)
                    if entry is not None and entry[3] == generation:
                        del self._entries[key]


keepalive = KeepAlive()
"""The process's keep-alive, shared by every env."""
