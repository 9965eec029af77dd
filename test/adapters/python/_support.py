"""What the integration tests of this directory share: a WebServ server started for one test
and killed when the scripted model is asked for its second turn, so that a rollout meets an
infrastructure failure mid-episode (which must never be a reward of 0), and a `vf-eval` run
read back as its traces."""

import contextlib
import json
import os
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path


def live_sessions(url: str) -> int:
    """How many sessions the server at ``url`` holds live now, as its health says."""
    with urllib.request.urlopen(url + "/health", timeout=30) as response:
        return int(json.load(response)["live"])


def listening_url(server):
    """The URL the started server prints, within 60 s."""
    deadline = time.monotonic() + 60
    seen = []
    while time.monotonic() < deadline:
        line = server.stdout.readline()
        if not line:
            break
        seen.append(line)
        for word in line.split():
            if word.startswith("http://127.0.0.1:"):
                return word.rstrip("/").rstrip(",")
    raise AssertionError("The server printed no URL: " + "".join(seen))


@contextlib.contextmanager
def server_killed_on_second_turn(run_prefix):
    """Starts `adapters/http/serve.ts` on a free loopback port with a fresh run directory (named
    with `run_prefix`); yields its URL and an `on_request` hook for ScriptedModelServer that kills
    the server when the model is asked for its second turn. The server is killed on exit."""
    server = subprocess.Popen(
        ["deno", "run", "--allow-all", "adapters/http/serve.ts", "--port", "0", "--max-sessions", "2",
         "--run-dir", tempfile.mkdtemp(prefix=run_prefix)],
        cwd=os.environ["WEBSERV_REPO"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )
    try:
        url = listening_url(server)

        def kill_on_second_turn(body):
            if sum(1 for m in body["messages"] if m.get("role") == "assistant") == 1 and server.poll() is None:
                server.kill()
                server.wait(30)

        yield url, kill_on_second_turn
    finally:
        if server.poll() is None:
            server.kill()
            server.wait(30)


BIN = Path(sys.executable).parent


def run_vf_eval(out, args, model_url, rollouts, timeout):
    """Runs verifiers' `vf-eval` of this venv in `out` with `args` (the environment and harness)
    against the scripted model at `model_url`, writing its run to `out/run`; fails with its output
    unless it exits 0, and returns the traces it wrote."""
    command = [
        str(BIN / "vf-eval"), *args,
        "-m", "scripted", "--client.base-url", model_url, "--client.api-key-var", "SCRIPTED_KEY",
        "-r", str(rollouts), "--no-rich", "--no-push", "-o", str(out), "--run.dir", "run",
    ]
    # The harness's chat program is a uv script: uv from this venv (pinned), packages from PyPI.
    env = dict(os.environ, PATH=f"{BIN}:{os.environ.get('PATH', '')}")
    done = subprocess.run(command, cwd=out, env=env, capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    lines = (out / "run" / "traces.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines if line.strip()]
