"""The server's answers as dataclasses (the shapes of ``adapters/http/protocol.ts``).

Each is decoded from the JSON in one place (``from_json``) and keeps that JSON
as ``raw``. ``result["key"]`` and ``result.get("key")`` still read the JSON, so
code written against the dict answers of earlier versions keeps working.
"""

from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional

__all__ = ["Lease", "Observation", "Session", "StepResult", "Task", "Verdict"]


class _Raw:
    """Dict-style reads of the JSON a result was decoded from."""

    raw: Dict[str, Any]

    def __getitem__(self, key: str) -> Any:
        return self.raw[key]

    def __contains__(self, key: object) -> bool:
        return key in self.raw

    def get(self, key: str, default: Any = None) -> Any:
        """The JSON's value under ``key``, or ``default``."""
        return self.raw.get(key, default)


@dataclass
class Lease(_Raw):
    """When a session is reaped if left idle, and at the latest."""

    expires_at: str
    idle_timeout_s: float
    hard_expires_at: str
    raw: Dict[str, Any] = field(repr=False, default_factory=dict)

    @classmethod
    def from_json(cls, data: Dict[str, Any]) -> "Lease":
        """Decodes the server's ``Lease``."""
        return cls(str(data["expires_at"]), float(data["idle_timeout_s"]), str(data["hard_expires_at"]), data)


@dataclass
class Task(_Raw):
    """A task: its id, site, template, seed and instruction (absent when listed unseeded)."""

    id: str
    site: str
    template: str
    seed: int
    instruction: Optional[str] = None
    split: Optional[str] = None
    difficulty: Optional[str] = None
    kind: Optional[str] = None
    raw: Dict[str, Any] = field(repr=False, default_factory=dict)

    @classmethod
    def from_json(cls, data: Dict[str, Any]) -> "Task":
        """Decodes the server's ``Task`` or ``ListedTask``."""
        return cls(
            str(data["id"]), str(data["site"]), str(data["template"]), int(data["seed"]),
            data.get("instruction"), data.get("split"), data.get("difficulty"), data.get("kind"), data,
        )


@dataclass
class Observation(_Raw):
    """What the agent sees: the page text with element ids, the URL, the title and the tabs."""

    text: str
    url: str
    title: str
    tabs: List[Dict[str, Any]]
    elements: Optional[List[Dict[str, Any]]] = None
    raw: Dict[str, Any] = field(repr=False, default_factory=dict)

    @classmethod
    def from_json(cls, data: Dict[str, Any]) -> "Observation":
        """Decodes the server's ``Observation``."""
        return cls(str(data["text"]), str(data["url"]), str(data["title"]), list(data.get("tabs", [])),
                   data.get("elements"), data)


@dataclass
class Session(_Raw):
    """A new or reset session: its id, first observation, lease and task."""

    id: str
    observation: Observation
    lease: Lease
    task: Optional[Task] = None
    group: Optional[str] = None
    raw: Dict[str, Any] = field(repr=False, default_factory=dict)

    @classmethod
    def from_json(cls, data: Dict[str, Any]) -> "Session":
        """Decodes the server's ``SessionCreated``."""
        task = data.get("task")
        return cls(
            str(data["id"]), Observation.from_json(data["observation"]), Lease.from_json(data["lease"]),
            Task.from_json(task) if task else None, data.get("group"), data,
        )


@dataclass
class Verdict(_Raw):
    """A verifier's judgement: the reward and why."""

    reward: float
    reason: str
    raw: Dict[str, Any] = field(repr=False, default_factory=dict)
    #: The reward's parts, each 0 or 1: ``task`` (the asked outcome) and
    #: ``harm`` (1 when nothing else changed; absent on change tasks).
    components: Dict[str, float] = field(default_factory=dict)

    @classmethod
    def from_json(cls, data: Dict[str, Any]) -> "Verdict":
        """Decodes the server's ``Verdict`` (or a verify answer holding one)."""
        parts = data.get("components") or {}
        return cls(float(data["reward"]), str(data.get("reason", "")), data,
                   {str(k): float(v) for k, v in parts.items()})


@dataclass
class StepResult(_Raw):
    """One step's result. ``reward`` is ``None`` unless ``status`` is ``ok`` or
    ``action_error``: a failure on the server's side is never a reward."""

    status: str
    observation: Optional[Observation]
    reward: Optional[float]
    done: bool
    truncated: bool
    info: Dict[str, Any]
    raw: Dict[str, Any] = field(repr=False, default_factory=dict)

    @property
    def ours(self) -> bool:
        """Whether the step failed on the server's side (``env_error``, ``timeout``, ``expired``)."""
        return self.status not in ("ok", "action_error")

    @property
    def verdict(self) -> Optional[Verdict]:
        """The verifier's judgement when the step ended an episode on a task."""
        verdict = self.info.get("verdict")
        return Verdict.from_json(verdict) if verdict else None

    @classmethod
    def from_json(cls, data: Dict[str, Any]) -> "StepResult":
        """Decodes the server's ``StepResponse``."""
        observation = data.get("observation")
        reward = data.get("reward")
        return cls(
            str(data["status"]), Observation.from_json(observation) if observation else None,
            None if reward is None else float(reward), bool(data["done"]), bool(data["truncated"]),
            dict(data.get("info") or {}), data,
        )
