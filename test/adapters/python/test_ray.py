"""webserv.ray.WebServPool on a real two-node Ray cluster that ray_test.ts
starts (a head in the root network namespace, a worker in a namespace of its
own): one server per node, placement by free capacity, GRPO groups whole on
one server, and a killed server's sessions lost as env_error while new
sessions go to the other node."""

import os
import pickle
import signal
import socket
import sys
import urllib.parse

import pytest
import ray

from webserv.ray import PoolCapacityError, PoolSession, ServerProcess, SessionLostError, WebServPool

NODES = sorted(os.environ["WEBSERV_RAY_NODES"].split(","))
TASK = "demo/add-note/1"
SCROLL = {"action": "scroll", "direction": "down"}


@pytest.fixture(scope="module")
def pool():
    ray.init(address=os.environ["RAY_ADDRESS"], log_to_driver=False)
    # Two nodes, the driver on one: the servers must be reachable off loopback.
    pool = WebServPool.start(
        max_sessions=3, run_dir=os.environ["WEBSERV_RUN_DIR"], watch_interval=2.0, off_loopback=True
    )
    try:
        record_pids(pool)
        yield pool
    finally:
        pool.close()
        ray.shutdown()


def record_pids(pool):
    # The harness kills these process groups if the pool could not.
    with open(os.environ["WEBSERV_RAY_PIDS"], "a") as out:
        out.writelines(f"{server['pid']}\n" for server in pool.describe())


def host(url):
    return urllib.parse.urlsplit(url).hostname


def test_pool_start_needs_the_callers_cluster():
    # Before the fixture's ray.init: the pool never starts a cluster itself.
    assert not ray.is_initialized()
    with pytest.raises(RuntimeError, match=r"ray\.init"):
        WebServPool.start()


def listening_address(port):
    """The local address of the TCP socket listening on ``port``, from /proc/net/tcp{,6}."""
    found = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with open(table) as lines:
            for line in list(lines)[1:]:
                fields = line.split()
                address, hex_port = fields[1].split(":")
                if fields[3] == "0A" and int(hex_port, 16) == port:  # 0A: LISTEN
                    found.append(address)
    return found


def test_a_server_listens_on_loopback_by_default():
    server = ServerProcess(token="t" * 24, max_sessions=1, run_dir=os.environ["WEBSERV_RUN_DIR"])
    try:
        assert server.host == "127.0.0.1"
        assert host(server.url) == "127.0.0.1"
        assert listening_address(urllib.parse.urlsplit(server.url).port) == ["0100007F"]  # 127.0.0.1
    finally:
        server.stop()


def test_off_loopback_is_asked_for_and_needs_a_token():
    # Refused before anything starts.
    with pytest.raises(ValueError, match="token"):
        ServerProcess(off_loopback=True)
    with pytest.raises(ValueError, match="off_loopback=True"):
        ServerProcess(host="0.0.0.0", token="t" * 24)


def test_one_server_per_node_on_the_nodes_address(pool):
    alive = sorted(n["NodeManagerAddress"] for n in ray.nodes() if n["Alive"])
    assert alive == NODES
    servers = pool.describe()
    assert sorted(s["host"] for s in servers) == NODES
    assert all(host(s["url"]) == s["host"] and s["dead"] is None for s in servers)
    health = pool.health()
    assert all(h["status"] == "healthy" and h["free"] == 3 for h in health.values()), health


def test_an_episode_on_each_node_reaches_the_verifiers_reward(pool):
    first = pool.session(task=TASK)
    second = pool.session(task=TASK)  # the other server has more room now
    assert {host(first.server.url), host(second.server.url)} == set(NODES)
    for env in (first, second):
        _, info = env.reset()
        note = info["instruction"].split('"')[1]
        env.step({"action": "type", "id": 1, "text": note})
        env.step({"action": "click", "id": 2})
        _, reward, done, info = env.step({"action": "stop", "answer": "done"})
        assert (reward, done, info["status"]) == (1, True, "ok")
        env.close()
    assert all(s["sessions"] == 0 for s in pool.describe())


def test_a_pool_session_travels_to_a_ray_task_as_its_url_and_id(pool):
    env = pool.session(task=TASK)
    # The test module is not on the workers' path: its functions travel by value.
    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])

    @ray.remote(num_cpus=0)
    def act(session):
        _, _, _, info = session.step(SCROLL)
        return info["status"], info["step"], session.session_id, type(session).__name__

    assert ray.get(act.remote(env), timeout=120) == ("ok", 1, env.session_id, "WebServEnv")
    # The driver's session is the same one: it counts the worker's step.
    assert env.step(SCROLL)[3]["step"] == 2
    copy = pickle.loads(pickle.dumps(env))
    assert copy.session_id == env.session_id and copy.step(SCROLL)[3]["step"] == 3
    env.close()
    assert all(s["sessions"] == 0 for s in pool.describe())


def test_a_pool_session_forks_into_its_servers_slots(pool):
    parent = pool.session(task=TASK)
    _, info = parent.reset()
    note = info["instruction"].split('"')[1]
    parent.step({"action": "type", "id": 1, "text": note})  # typed, not yet added
    forks = parent.fork(2)
    # Where the parent's site is copied: its server, which is now full (max_sessions=3).
    assert all(isinstance(f, PoolSession) and f.server is parent.server for f in forks)
    assert sorted(f.session_id for f in forks) == sorted(parent.server.sessions.keys() - {parent.session_id})
    assert next(s for s in pool.describe() if s["url"] == parent.server.url)["sessions"] == 3
    with pytest.raises(PoolCapacityError, match="no live server has 1 free") as full:
        parent.fork(1)
    assert (full.value.status, full.value.code) == (429, "capacity")

    # A fork travels to a Ray task like any pool session, mid-episode: it adds the typed note.
    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])

    @ray.remote(num_cpus=0)
    def finish(session):
        session.step({"action": "click", "id": 2})
        _, reward, done, info = session.step({"action": "stop", "answer": "done"})
        return reward, done, info["step"]

    assert ray.get(finish.remote(forks[0]), timeout=120) == (1, True, 3)
    # The other fork stops without adding it, and the parent never saw the first fork's write.
    _, reward, _, _ = forks[1].step({"action": "stop", "answer": "done"})
    assert reward == 0
    parent.step({"action": "click", "id": 2})
    _, reward, _, info = parent.step({"action": "stop", "answer": "done"})
    assert (reward, info["step"]) == (1, 3)
    parent.close()  # its forks with it
    assert all(s["sessions"] == 0 for s in pool.describe())


def test_groups_whole_on_one_server_and_a_killed_servers_sessions_are_env_error(pool):
    single = pool.session(task=TASK)
    group = pool.group(3, task=TASK, seed=5)  # only the other server has 3 free
    holder = group[0].server
    assert {env.server.url for env in group} == {holder.url} and holder is not single.server
    with pytest.raises(PoolCapacityError, match="no live server has 3 free") as refused:
        pool.group(3, task=TASK)
    assert (refused.value.status, refused.value.code) == (429, "capacity")
    with pytest.raises(PoolCapacityError, match="larger than any server's --max-sessions") as never:
        pool.group(4, task=TASK)
    assert never.value.status == 400
    other = pool.session(task=TASK)
    assert other.server is single.server
    for env in group:
        assert env.step(SCROLL)[3]["status"] == "ok"  # mid-run

    os.killpg(holder.pid, signal.SIGKILL)  # the server dies; its node and actor live on

    for env in group:
        with pytest.raises(SessionLostError) as lost:
            env.step(SCROLL)
        assert lost.value.code == "env_error" and lost.value.session == env.session_id
        assert "exited" in lost.value.reason
    dead = next(s for s in pool.describe() if s["url"] == holder.url)
    assert dead["dead"] and dead["sessions"] == 3
    assert sorted(id(s) for s in pool.lost()) == sorted(id(s) for s in group)
    # The live node serves on: its sessions step, new ones go there, and the
    # dead server is never used (nor restarted) behind the caller's back.
    assert single.step(SCROLL)[3]["status"] == "ok"
    third = pool.session(task=TASK)
    assert third.server is single.server
    with pytest.raises(PoolCapacityError, match="no live server has 1 free"):
        pool.session(task=TASK)
    assert list(pool.health()) == [single.server.url]

    # Restarting waits for the caller to drop what it lost.
    with pytest.raises(RuntimeError, match="close them before restarting"):
        pool.restart(holder.url)
    for env in group:
        env.close()
    fresh = pool.restart(holder.url)
    assert fresh["host"] == holder.host and fresh["dead"] is None
    record_pids(pool)
    back = pool.session(task=TASK)
    assert back.server.host == holder.host
    assert back.step(SCROLL)[3]["status"] == "ok"
    for env in (single, other, third, back):
        env.close()


def test_a_pool_listens_on_loopback_unless_told_otherwise(pool):
    head = ray.util.get_node_ip_address()  # the driver's node
    # A port of its own: the fixture's server on this node has 8800 on the node's address.
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with WebServPool.start(nodes=[head], max_sessions=1, port=port, watch_interval=None) as alone:
        record_pids(alone)
        (server,) = alone.describe()
        assert server["host"] == "127.0.0.1" and host(server["url"]) == "127.0.0.1"
        assert listening_address(urllib.parse.urlsplit(server["url"]).port) == ["0100007F"]
        assert alone.health()[server["url"]]["status"] == "healthy"
