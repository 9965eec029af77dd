"""An episode as chat messages with tool calls (OpenAI's chat format, which
TRL's SFT and GRPO trainers and Hugging Face chat templates read)::

    [{"role": "system", ...}?, {"role": "user", "content": "Task: …\\n\\n<page>"},
     {"role": "assistant", "content": None, "tool_calls": [{"id": "call_0", "type": "function",
       "function": {"name": "click", "arguments": "{\\"id\\": 2}"}}]},
     {"role": "tool", "tool_call_id": "call_0", "name": "click", "content": "<page after>"}, …]

Each action is one tool call named after the action (the ``/v1/tools``
names), its other fields the arguments; each result is what the model was
shown. A :class:`ChatTrajectory` is filled as an episode runs, and written
either as one row of a chat dataset (:meth:`ChatTrajectory.to_json`) or as a
Hugging Face session trace (:meth:`ChatTrajectory.to_session_trace`: the Hub's
Session Trace Simple Format, a JSONL file its trace viewer renders).
"""

import json
from typing import Any, Dict, List, Optional

__all__ = ["ChatTrajectory"]


class ChatTrajectory:
    """The messages of one episode: the prompt, then a tool call and its result per step."""

    def __init__(self, prompt: str, system: Optional[str] = None):
        self.messages: List[Dict[str, Any]] = []
        """The chat so far."""
        if system is not None:
            self.messages.append({"role": "system", "content": system})
        self.messages.append({"role": "user", "content": prompt})
        self.reward: Optional[float] = None
        """The episode's reward once known (``None``: not yet, or our side failed)."""

    def add(self, action: Dict[str, Any], result: str) -> None:
        """Records one action (``{"action": "click", "id": 2}``) and the text the model was shown."""
        call_id = f"call_{sum(1 for m in self.messages if m['role'] == 'tool')}"
        name = str(action["action"])
        arguments = {key: value for key, value in action.items() if key != "action"}
        self.messages.append({"role": "assistant", "content": None, "tool_calls": [{
            "id": call_id, "type": "function",
            "function": {"name": name, "arguments": json.dumps(arguments)},
        }]})
        self.messages.append({"role": "tool", "tool_call_id": call_id, "name": name, "content": result})

    def to_json(self) -> Dict[str, Any]:
        """``{"messages": [...], "reward": r}``: one row of a chat dataset."""
        return {"messages": self.messages, "reward": self.reward}

    def to_session_trace(self, session_id: str, name: Optional[str] = None,
                         harness: str = "webserv") -> str:
        """The episode in the Hub's Session Trace Simple Format: JSONL, a ``session``
        header (the harness id, the session id, a title, and the reward as extra
        metadata, which the format allows), then one ``message`` line per chat message."""
        header: Dict[str, Any] = {"type": "session", "harness": harness, "id": session_id}
        if name is not None:
            header["name"] = name
        header["reward"] = self.reward
        lines = [header] + [{"type": "message", "message": message} for message in self.messages]
        return "".join(json.dumps(line) + "\n" for line in lines)
