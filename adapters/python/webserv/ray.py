"""A pool of WebServ rollout servers on a Ray cluster (needs ``ray``, imported
only when a pool starts; ``webserv_client`` itself stays standard library
only). The pool joins the trainer's cluster, it never starts or stops one::

    import ray
    from webserv_ray import WebServPool

    ray.init(address="auto")  # the trainer's cluster (verl, SkyRL, OpenRLHF, ...)
    with WebServPool.start(repo="/opt/webserv", max_sessions=8) as pool:
        env = pool.session(task="demo/add-note/1")   # on the server with the most room
        obs, info = env.reset()
        group = pool.group(8, task="demo/add-note/1", seed=3)  # GRPO: all 8 on one server

One server actor per node (``ServerProcess``, pinned there with a node
affinity) runs ``deno task serve`` from a checkout of this repository at
``repo`` on that node, behind a bearer token the pool makes. Every server
listens on loopback unless told otherwise: ``off_loopback=True`` puts it on
the node's Ray address, which a cluster of several nodes needs for the
trainer's clients to reach it. Placement reads ``free`` from each server's ``/health``; a session
stays on the server that holds it; a group of ``n`` (GRPO) is placed whole on
one server with ``n`` free sessions or refused with :class:`PoolCapacityError`.

A server that dies is never restarted behind the caller's back: its sessions
(and their sandboxes) died with it, so every later call on them raises
:class:`SessionLostError` (code ``env_error``: our failure, never a reward),
and new sessions go to the servers still alive. :meth:`WebServPool.restart`
brings it back once the caller has closed the sessions it lost.
"""

import ipaddress
import os
import secrets
import signal
import socket
import subprocess
import sys
import threading
import time
from collections import deque
from typing import Any, Dict, List, Optional, Sequence

from .client import WebServClient, WebServError, WebServNetworkError, _fork_refusal
from .env import WebServEnv, _attached
from .types import Session

__all__ = ["PoolCapacityError", "PoolSession", "ServerProcess", "SessionLostError", "WebServPool"]

def _repo() -> str:
    """The checkout ``deno task serve`` runs in: ``$WEBSERV_REPO``, else the
    tree this module lies in (a source checkout), else the working directory."""
    if os.environ.get("WEBSERV_REPO"):
        return os.environ["WEBSERV_REPO"]
    here = os.path.dirname(os.path.abspath(__file__))
    for _ in range(4):
        here = os.path.dirname(here)
        if os.path.exists(os.path.join(here, "adapters", "http", "serve.ts")):
            return here
    return os.getcwd()


REPO = _repo()


class SessionLostError(WebServError):
    """``env_error``: the server holding this session died, and the session and
    its sandbox with it. Our failure, not the agent's: drop the episode."""

    def __init__(self, session: Optional[str], server: str, reason: str):
        super().__init__(503, "env_error", f"Session {session} on {server} is lost: {reason}")
        self.session = session
        self.server = server
        self.reason = reason


class PoolCapacityError(WebServError):
    """No live server has room for the sessions asked for (a group is never
    split across servers). ``free`` maps each live server to its free sessions."""

    def __init__(self, need: int, free: Dict[str, int], largest: int):
        if need > largest:
            why = f"a group of {need} is larger than any server's --max-sessions ({largest})"
        else:
            why = f"no live server has {need} free session(s) (free: {free}); retry when sessions close"
        super().__init__(429 if need <= largest else 400, "capacity", why)
        self.need = need
        self.free = free


def _ray() -> Any:
    try:
        import ray
    except ImportError as error:
        raise ImportError("webserv_ray needs Ray: pip install ray") from error
    return ray


class ServerProcess:
    """Runs and watches one ``deno task serve`` on this node (the body of the
    pool's server actor). The server listens on loopback (127.0.0.1) unless
    told otherwise: ``off_loopback=True`` puts it on ``host`` (default the
    node's Ray address), and then needs ``token``; a ``host`` off loopback
    needs ``off_loopback=True``. It is started in its own process group,
    stopped with the group, and told to stop when this process dies."""

    def __init__(
        self,
        repo: str = REPO,
        host: Optional[str] = None,
        port: Optional[int] = None,
        token: Optional[str] = None,
        max_sessions: int = 8,
        backend: str = "fixture",
        run_dir: Optional[str] = None,
        deno: str = "deno",
        startup_timeout: float = 240.0,
        off_loopback: bool = False,
    ):
        if off_loopback:
            if not token:
                raise ValueError("A server off loopback needs a token: pass token=...")
            if host is None:
                host = _ray().util.get_node_ip_address()
        elif host is None:
            host = "127.0.0.1"
        elif not _loopback(host):
            raise ValueError(f"Host {host!r} is off loopback: pass off_loopback=True (and a token) to listen there")
        self.host = host
        self.token = token
        args = [deno, "task", "serve", "--host", host, "--backend", backend,
                "--max-sessions", str(max_sessions)]
        if port is not None:
            args += ["--port", str(port)]
        if run_dir is not None:
            # One per node (the nodes may share a disk): named for the node's address.
            args += ["--run-dir", os.path.join(run_dir, host if off_loopback else _node_address())]
        env = dict(os.environ)
        if token:
            env["WEBSERV_TOKEN"] = token  # not on the command line, where ps shows it
        self.tail: deque = deque(maxlen=40)
        self.url: Optional[str] = None
        self._ready = threading.Event()
        self.process = subprocess.Popen(
            args, cwd=repo, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT, text=True, start_new_session=True, preexec_fn=_death_signal(),
        )
        threading.Thread(target=self._read, daemon=True).start()
        if not self._ready.wait(startup_timeout) or self.url is None:
            self.stop()
            raise RuntimeError(
                f"deno task serve on {host} did not start within {startup_timeout} s:\n" + "\n".join(self.tail)
            )

    def _read(self) -> None:
        assert self.process.stdout is not None
        marker = "WebServ rollout server on "
        for line in self.process.stdout:
            self.tail.append(line.rstrip())
            if self.url is None and marker in line:
                self.url = line.split(marker, 1)[1].split()[0]
                self._ready.set()
        self._ready.set()  # exited: the constructor stops waiting

    def info(self) -> Dict[str, Any]:
        """The server's URL, its process id (also its process group's) and host."""
        return {"url": self.url, "pid": self.process.pid, "host": self.host}

    def status(self, timeout: float = 10.0) -> Dict[str, Any]:
        """Whether the process runs, its exit code, and its ``/health`` (None
        when it does not answer within ``timeout``)."""
        code = self.process.poll()
        health = None
        if code is None and self.url is not None:
            try:
                health = WebServClient(self.url, self.token, timeout=timeout, retries=0).health()
            except WebServError:
                health = None
        return {"running": code is None, "exit_code": code, "health": health, "tail": list(self.tail)[-5:]}

    def stop(self, timeout: float = 30.0) -> Optional[int]:
        """SIGTERM to the server's group (it closes every session and the
        browser), SIGKILL after ``timeout``; returns the exit code."""
        for sig, wait in ((signal.SIGTERM, timeout), (signal.SIGKILL, 10.0)):
            if self.process.poll() is not None:
                break
            try:
                os.killpg(self.process.pid, sig)
            except ProcessLookupError:
                break
            try:
                self.process.wait(wait)
            except subprocess.TimeoutExpired:
                continue
        return self.process.poll()


def _node_address() -> str:
    """This node's Ray address, or its host name where Ray is not installed."""
    try:
        return _ray().util.get_node_ip_address()
    except ImportError:
        return socket.gethostname()


def _loopback(host: str) -> bool:
    """Whether ``host`` is a loopback address (127.0.0.0/8, ::1, localhost)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _death_signal() -> Any:
    # Linux: the server gets SIGTERM when the actor's process dies, so a
    # killed actor does not leave a server behind. prctl is looked up here,
    # before the fork: the child only calls it.
    if not sys.platform.startswith("linux"):
        return None
    import ctypes

    prctl = ctypes.CDLL(None, use_errno=True).prctl
    return lambda: prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG



class _Server:
    """The pool's record of one server: its actor, URL and sessions."""

    def __init__(self, actor: Any, node: str, info: Dict[str, Any], token: str):
        self.actor = actor
        self.node = node
        self.url: str = info["url"]
        self.pid: int = info["pid"]
        self.host: str = info["host"]
        self.client = WebServClient(self.url, token, timeout=120.0)
        self.dead: Optional[str] = None
        self.sessions: Dict[str, "PoolSession"] = {}

    def describe(self) -> Dict[str, Any]:
        return {"url": self.url, "node": self.node, "host": self.host, "pid": self.pid,
                "dead": self.dead, "sessions": len(self.sessions)}


class PoolSession(WebServEnv):
    """One session pinned to the server that holds it (the ``WebServEnv``
    shape). Every call after that server died raises :class:`SessionLostError`."""

    def __init__(self, pool: "WebServPool", server: _Server, created: Any):
        super().__init__(server.url, token=pool.token, session=created, client=server.client)
        self.pool = pool
        self.server = server
        server.sessions[created["id"]] = self

    def _guard(self, call: Any, *args: Any) -> Any:
        if self.server.dead is not None:
            raise SessionLostError(self.session_id, self.server.url, self.server.dead)
        try:
            return call(*args)
        except WebServNetworkError:
            # Unreachable: lost if the server died, else the network's error.
            if self.pool.check(self.server) is not None:
                raise SessionLostError(self.session_id, self.server.url, str(self.server.dead)) from None
            raise
        except WebServError as error:
            # 404/410 from a live server on a session we hold: it was reaped.
            if error.status in (404, 410) and self.pool.check(self.server) is not None:
                raise SessionLostError(self.session_id, self.server.url, str(self.server.dead)) from None
            raise

    def reset(self, seed: Optional[int] = None, task: Optional[str] = None) -> Any:
        return self._guard(super().reset, seed, task)

    def step(self, action: Dict[str, Any], request_id: Optional[str] = None) -> Any:
        return self._guard(super().step, action, request_id)

    def verify(self) -> Any:
        return self._guard(super().verify)

    def fork(self, n: int = 1) -> List["WebServEnv"]:
        """Forks the live episode ``n`` ways on this session's server, where its site's
        copies are made: :class:`PoolSession` objects in that server's slots, guarded like
        this one (lost with the server), closed with this session and by the pool's close.
        A fork never waits for room nor moves to another server: a server with fewer than
        ``n`` free sessions raises :class:`PoolCapacityError`; 409 (the episode ended, or a
        backend that cannot copy an instance) raises :class:`webserv.WebServForkError`."""
        if self.handle is None or self.handle.id is None:
            raise RuntimeError("Call reset() before fork()")
        parent = self.handle.id

        def call() -> List[Session]:
            try:
                created = self.server.client.request("POST", f"/v1/sessions/{parent}/fork", {"n": n}, retries=0)
            except WebServError as error:
                if error.status == 429 and error.code == "capacity":
                    health = self.pool.health().get(self.server.url) or {}
                    raise PoolCapacityError(n, {self.server.url: int(health.get("free", 0))},
                                            int(health.get("max", n))) from None
                raise _fork_refusal(error) from None
            return [Session.from_json(s) for s in created["sessions"]]

        forks = [self._forked(session) for session in self._guard(call)]
        self.forks.extend(forks)
        return forks

    def _forked(self, session: Session) -> "WebServEnv":
        fork = PoolSession(self.pool, self.server, session.raw)
        self._adopt_fork(fork, session)
        return fork

    def close(self) -> None:
        """Closes the session and the forks it made; on a dead server it only forgets them."""
        session = self.session_id
        forks, self.forks = self.forks, []
        for fork in forks:
            fork.close()
        try:
            if self.server.dead is None:
                super().close()
        except WebServNetworkError:
            pass
        finally:
            if self.handle is not None:
                self.handle._forget()
            self.server.sessions.pop(session or "", None)

    def __reduce__(self) -> Any:
        # The pool (its actors, its watcher thread) stays in the driver: a copy
        # sent to a Ray worker is the session itself, reached by URL and id.
        handle = self.handle
        return (_attached, (self.server.url, self.session_id, self.token,
                                    handle.task_id if handle else None, self.spec))


class WebServPool:
    """Rollout servers on the nodes of the trainer's Ray cluster (see the module)."""

    def __init__(self, servers: List[_Server], token: str, actor_class: Any, options: Dict[str, Any],
                 watch_interval: Optional[float] = 5.0):
        self.servers = servers
        self.token = token
        self._actor_class = actor_class
        self._options = options
        self._lock = threading.RLock()
        self._stop = threading.Event()
        self._watcher: Optional[threading.Thread] = None
        if watch_interval:
            self._watcher = threading.Thread(target=self._watch, args=(watch_interval,), daemon=True)
            self._watcher.start()

    @classmethod
    def start(
        cls,
        repo: str = REPO,
        nodes: Optional[Sequence[str]] = None,
        resource: Optional[str] = None,
        max_sessions: int = 8,
        backend: str = "fixture",
        port: Optional[int] = None,
        token: Optional[str] = None,
        run_dir: Optional[str] = None,
        deno: str = "deno",
        startup_timeout: float = 240.0,
        watch_interval: Optional[float] = 5.0,
        off_loopback: bool = False,
        host: Optional[str] = None,
    ) -> "WebServPool":
        """Starts one server actor on each node: ``nodes`` (Ray node ids or
        addresses), else every alive node that has ``resource`` (every alive
        node when None). ``repo`` is this repository's checkout on the nodes;
        ``run_dir`` where the servers write trajectories, each under
        ``<run_dir>/<node address>`` (default: ``runs/<time>`` under ``repo``). Needs ``ray.init(...)`` done
        by the caller. The servers listen on their node's loopback, which serves a trainer on the
        same node; ``off_loopback=True`` puts each on its node's Ray address (behind the pool's
        token), for a trainer whose clients run on other nodes. ``host`` is the address each
        server listens on (default 127.0.0.1; one off loopback needs ``off_loopback=True``)."""
        ray = _ray()
        if not ray.is_initialized():
            raise RuntimeError("Call ray.init(address=...) first: the pool joins a cluster, it does not start one")
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        # The actor's code travels with it: the nodes need the repository
        # for `deno task serve`, not this module on their Python path.
        ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])
        ray.cloudpickle.register_pickle_by_value(sys.modules[WebServClient.__module__])
        alive = [n for n in ray.nodes() if n["Alive"]]
        if nodes is not None:
            wanted = set(nodes)
            alive = [n for n in alive if n["NodeID"] in wanted or n["NodeManagerAddress"] in wanted]
        elif resource is not None:
            alive = [n for n in alive if n["Resources"].get(resource, 0) > 0]
        if not alive:
            raise RuntimeError(f"No alive Ray node to run a server on (nodes={nodes}, resource={resource})")
        token = token or secrets.token_urlsafe(24)
        options = dict(repo=repo, host=host, port=port, token=token, max_sessions=max_sessions, backend=backend,
                       run_dir=run_dir, deno=deno, startup_timeout=startup_timeout, off_loopback=off_loopback)
        actor_class = ray.remote(num_cpus=0, max_restarts=0)(ServerProcess)
        actors = [
            actor_class.options(
                scheduling_strategy=NodeAffinitySchedulingStrategy(node["NodeID"], soft=False),
            ).remote(**options)
            for node in alive
        ]
        try:
            infos = ray.get([a.info.remote() for a in actors], timeout=startup_timeout + 60)
        except BaseException:
            for actor in actors:
                _kill(ray, actor)
            raise
        servers = [_Server(a, n["NodeID"], i, token) for a, n, i in zip(actors, alive, infos)]
        return cls(servers, token, actor_class, options, watch_interval)

    def describe(self) -> List[Dict[str, Any]]:
        """Each server: url, node, host, pid, dead (the reason, or None), sessions."""
        return [server.describe() for server in self.servers]

    def check(self, server: _Server, timeout: float = 30.0) -> Optional[str]:
        """Asks the server's actor whether its process runs; marks the server
        dead (and its sessions lost) when not. Returns the reason, or None."""
        if server.dead is not None:
            return server.dead
        ray = _ray()
        try:
            status = ray.get(server.actor.status.remote(), timeout=timeout)
        except ray.exceptions.GetTimeoutError:
            return None  # a busy node is not a dead one
        except ray.exceptions.RayActorError as error:
            return self._mark(server, f"its node or actor died ({type(error).__name__})")
        if not status["running"]:
            return self._mark(server, f"the server process exited with code {status['exit_code']}")
        return None

    def _mark(self, server: _Server, reason: str) -> str:
        with self._lock:
            if server.dead is None:
                server.dead = reason
        return server.dead

    def health(self, timeout: float = 30.0) -> Dict[str, Optional[Dict[str, Any]]]:
        """Each live server's ``/health`` (None when it did not answer), read
        on its node by its actor; servers found dead are marked so."""
        ray = _ray()
        live = [s for s in self.servers if s.dead is None]
        refs = {s.url: s.actor.status.remote() for s in live}
        result: Dict[str, Optional[Dict[str, Any]]] = {}
        deadline = time.monotonic() + timeout
        for server in live:
            try:
                status = ray.get(refs[server.url], timeout=max(0.1, deadline - time.monotonic()))
            except ray.exceptions.GetTimeoutError:
                result[server.url] = None
                continue
            except ray.exceptions.RayActorError as error:
                self._mark(server, f"its node or actor died ({type(error).__name__})")
                continue
            if not status["running"]:
                self._mark(server, f"the server process exited with code {status['exit_code']}")
                continue
            result[server.url] = status["health"]
        return result

    def _free(self, need: int) -> List[_Server]:
        health = self.health()
        free = {url: int(h["free"]) for url, h in health.items() if h and h.get("status") == "healthy"}
        ranked = sorted((s for s in self.servers if s.url in free and free[s.url] >= need),
                        key=lambda s: -free[s.url])
        if not ranked:
            largest = max((int(h["max"]) for h in health.values() if h), default=0)
            raise PoolCapacityError(need, free, largest)
        return ranked

    def session(self, **spec: Any) -> PoolSession:
        """Opens one session (already reset) on the live server with the most
        free sessions; ``spec`` as ``POST /v1/sessions`` (task=, seed=, ...)."""
        return self._open(1, spec)[0]

    def group(self, n: int, **spec: Any) -> List[PoolSession]:
        """Opens ``n`` sessions on the same task and seed (a GRPO group), all
        on one server with ``n`` free, or raises :class:`PoolCapacityError`."""
        return self._open(n, spec)

    def _open(self, n: int, spec: Dict[str, Any]) -> List[PoolSession]:
        spec = {k: v for k, v in spec.items() if v is not None}
        last: Optional[WebServError] = None
        for server in self._free(n):
            try:
                if n == 1:
                    created = [server.client.create_session(**spec)]
                else:
                    created = server.client.create_group(n, **spec)
            except WebServNetworkError as error:
                self.check(server)
                last = error
                continue
            except WebServError as error:
                if error.status != 429:  # raced for the room: try the next server
                    raise
                last = error
                continue
            return [PoolSession(self, server, c) for c in created]
        raise last or PoolCapacityError(n, {}, 0)

    def lost(self) -> List[PoolSession]:
        """The open sessions on servers that died (each raises on use)."""
        return [s for server in self.servers if server.dead for s in list(server.sessions.values())]

    def restart(self, url: str) -> Dict[str, Any]:
        """Starts a dead server again on its node, refused while the pool
        still holds sessions it lost (close them first: they are not
        recreated behind the trainer's back)."""
        ray = _ray()
        server = next((s for s in self.servers if s.url == url), None)
        if server is None:
            raise ValueError(f"No server {url} in this pool: {[s.url for s in self.servers]}")
        if server.dead is None:
            raise ValueError(f"Server {url} is alive")
        if server.sessions:
            raise RuntimeError(
                f"Server {url} died holding {len(server.sessions)} session(s); close them before restarting it"
            )
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        _kill(ray, server.actor)
        actor = self._actor_class.options(
            scheduling_strategy=NodeAffinitySchedulingStrategy(server.node, soft=False),
        ).remote(**self._options)
        info = ray.get(actor.info.remote(), timeout=self._options["startup_timeout"] + 60)
        fresh = _Server(actor, server.node, info, self.token)
        with self._lock:
            self.servers[self.servers.index(server)] = fresh
        return fresh.describe()

    def _watch(self, interval: float) -> None:
        while not self._stop.wait(interval):
            try:
                self.health()
            except Exception:  # the watcher must outlive a hiccup; calls re-check
                continue

    def close(self, timeout: float = 60.0) -> None:
        """Closes every session, then stops every server and its actor."""
        self._stop.set()
        if self._watcher is not None:
            self._watcher.join(timeout=10)
        for server in self.servers:
            for session in list(server.sessions.values()):
                try:
                    session.close()
                except WebServError:
                    pass
        ray = _ray()
        refs = [s.actor.stop.remote() for s in self.servers if s.dead is None]
        try:
            ray.get(refs, timeout=timeout)
        except Exception:  # dead actors, slow stops: killing the actor ends the server (PDEATHSIG)
            pass
        for server in self.servers:
            _kill(ray, server.actor)

    def __enter__(self) -> "WebServPool":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def _kill(ray: Any, actor: Any) -> None:
    try:
        ray.kill(actor, no_restart=True)
    except Exception:
        pass
