"""WebServ's Python client: sessions on a WebServ rollout server for training loops.

The core is standard library only::

    from webserv import WebServEnv
    with WebServEnv("http://127.0.0.1:8800", task="demo/add-note/1") as env:
        text, info = env.reset()
        text, reward, done, info = env.step({"action": "click", "id": 2})

Extras: ``webserv.gym`` (gymnasium), ``webserv.trl`` (TRL's environment_factory),
``webserv.ray`` (a Ray pool of servers), ``webserv.aio`` (asyncio: ``AsyncWebServEnv``),
``webserv.harness`` (one rollout on an OpenAI-compatible endpoint), ``webserv.nemo_gym`` (a NeMo Gym
resources server), ``webserv.scripted_model`` (a scripted stand-in for a model); the top-level
``webserv_verifiers`` is a taskset for Prime Intellect's verifiers.
"""

from .client import (
    WebServCapacityError, WebServClient, WebServError, WebServForkError, WebServNetworkError, place,
)
from .env import SessionHandle, WebServEnv
from .keepalive import keepalive
from .trajectory import ChatTrajectory
from .types import Lease, Observation, Session, StepResult, Task, Verdict

__all__ = [
    "ChatTrajectory", "Lease", "Observation", "Session", "SessionHandle", "StepResult", "Task", "Verdict",
    "WebServCapacityError", "WebServClient", "WebServEnv", "WebServError", "WebServForkError",
    "WebServNetworkError",
    "keepalive", "place",
]
__version__ = "0.1.0"
