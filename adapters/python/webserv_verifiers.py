"""WebServ as a ``verifiers`` taskset (Prime Intellect's verifiers, ``verifiers.v1``):
tasks drawn from a WebServ server's catalog, each rollout's setup opening a
session, the actions as MCP tools (the server's ``/mcp``, bound to that
session), and the reward from the server's ``/verify``::

    vf-eval webserv_verifiers --env.taskset.server http://127.0.0.1:8800 \\
        --env.taskset.site demo --env.agent.harness.id null ...

Splits are by template: ``split="train"`` keeps the templates not listed in
``test_templates``, ``split="test"`` only those, so a policy is scored on
templates it never trained on. Every task of a template is one (template,
seed) pair, and every rollout of a task (a GRPO group) opens its own session
on that same task and seed.

Infrastructure failures (the server unreachable, a session that cannot open,
a step the server failed, a verify that errs) raise, so verifiers records the
rollout as errored, never as a reward of 0. A tool call the server judges the
agent's mistake (an unknown element id…) is returned to the model as a tool
error and the episode goes on.
"""

import json
import urllib.parse
from collections.abc import Iterator
from typing import Any, Dict, List, Optional, cast

import httpx
from mcp.server.mcpserver import Context, MCPServer
from mcp.types import CallToolResult, TextContent, Tool
from pydantic import Field

import verifiers.v1 as vf
from verifiers.v1.mcp import SharedToolsetConfig, Toolset

__all__ = ["WebServConfig", "WebServData", "WebServState", "WebServTask", "WebServTaskset", "WebServToolset"]

SYSTEM_PROMPT = (
    "You operate a web browser through tools. Each observation lists the page; elements you can act on "
    "carry an id in brackets, like [3]. Call one tool at a time. When the task is done, call stop with "
    "your answer."
)


class WebServState(vf.State):
    """One rollout's session on the server, shared by the task's hooks and the tool server."""

    server: str = ""
    session: str = ""
    token: Optional[str] = None
    timeout: float = 120.0
    done: bool = False

    def headers(self) -> Dict[str, str]:
        """The bearer token, when the server wants one."""
        return {"authorization": f"Bearer {self.token}"} if self.token else {}

    async def call(self, method: str, path: str, body: Any = None) -> Any:
        """One request to the server; raises on a refusal or a network failure (ours, not the agent's)."""
        async with httpx.AsyncClient(headers=self.headers(), timeout=self.timeout) as client:
            response = await client.request(method, f"{self.server}{path}", json=body)
        if response.status_code >= 400:
            raise RuntimeError(f"WebServ refused {method} {path}: HTTP {response.status_code}: {response.text[:300]}")
        return response.json()


class WebServToolset(Toolset[SharedToolsetConfig, WebServState]):
    """The server's actions as MCP tools, each call stepping this rollout's session."""

    TOOL_PREFIX = None  # the server's own tool names (click, type, stop…), as its tool schemas say

    def register(self, mcp: MCPServer) -> None:
        # The tools are the server's own (its /mcp tools/list), called per rollout: replace the
        # protocol handlers rather than registering a static copy that could drift.
        server = cast(Any, mcp)
        server.list_tools = self._with_state(self.list_tools)
        server.call_tool = self._with_state(self.call_tool)

    async def _rpc(self, method: str, params: Dict[str, Any]) -> Dict[str, Any]:
        path = "/mcp?" + urllib.parse.urlencode({"session": self.state.session})
        answer = await self.state.call("POST", path, {"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
        if "error" in answer:
            raise RuntimeError(f"WebServ's MCP endpoint failed {method}: {answer['error']}")
        return answer["result"]

    async def list_tools(self) -> List[Tool]:
        """The server's tools (one per action)."""
        listed = await self._rpc("tools/list", {})
        return [Tool(name=t["name"], description=t.get("description"), input_schema=t["inputSchema"])
                for t in listed["tools"]]

    async def call_tool(self, name: str, arguments: Dict[str, Any], context: Optional[Context] = None) -> CallToolResult:
        """Steps the session with one action; the agent's errors come back as tool errors."""
        # Strict tool schemas make optional fields nullable: null leaves them out.
        arguments = {k: v for k, v in (arguments or {}).items() if v is not None}
        result = await self._rpc("tools/call", {"name": name, "arguments": arguments})
        status = (result.get("structuredContent") or {}).get("status")
        if status in ("env_error", "timeout", "expired"):
            # Ours, not the agent's: the rollout errs rather than scoring the policy for it.
            raise RuntimeError(f"WebServ failed the step ({status}) on session {self.state.session}: {result}")
        text = "".join(part.get("text", "") for part in result.get("content", []) if part.get("type") == "text")
        return CallToolResult(content=[TextContent(type="text", text=text)], is_error=bool(result.get("isError")))


class WebServTaskConfig(vf.TaskConfig):
    """Where the tasks' sessions open."""

    server: str = "http://127.0.0.1:8800"
    token: Optional[str] = None
    request_timeout: float = Field(120.0, gt=0)


class WebServConfig(vf.TasksetConfig):
    """Which catalog tasks the taskset holds."""

    server: str = "http://127.0.0.1:8800"
    """The WebServ server (its catalog; the sessions open there too)."""
    token: Optional[str] = None
    site: Optional[str] = None
    templates: List[str] = Field(default_factory=list)
    """Only these templates (empty: every template of the site)."""
    test_templates: List[str] = Field(default_factory=list)
    """The held-out templates (``site/template`` or ``template``): the test split."""
    split: str = "train"
    """``train`` (templates not held out) or ``test`` (the held-out ones)."""
    seeds: int = Field(8, gt=0)
    """Tasks per template (seeds 0…n-1 of the server's train seeds)."""
    tools: SharedToolsetConfig = SharedToolsetConfig()
    task: WebServTaskConfig = WebServTaskConfig()


class WebServData(vf.TaskData):
    """A catalog task: its id, site, template and seed."""

    task_id: str
    site: str
    template: str
    seed: int
    instruction: Optional[str] = None
    """As the catalog lists it (absent for tasks listed unseeded; the session's task has it)."""


class WebServTask(vf.Task[WebServData, WebServState, WebServTaskConfig]):
    """One WebServ task: setup opens a session, the reward is the server's verdict."""

    async def setup(self, trace: Any, runtime: Any) -> None:
        """Opens this rollout's session and puts its first observation in the prompt."""
        state = trace.state
        state.server = self.config.server.rstrip("/")
        state.token = self.config.token
        state.timeout = self.config.request_timeout
        opened = await state.call("POST", "/v1/sessions", {"task": self.data.task_id})
        state.session = opened["id"]
        instruction = (opened.get("task") or {}).get("instruction") or self.data.instruction
        prompt = f"Task: {instruction}\n\n{opened['observation']['text']}"
        # The first page is known only once the session is open: the trace records the prompt sent.
        trace.task.data = trace.task.data.model_copy(update={"prompt": prompt})

    @vf.reward(weight=1.0)
    async def webserv(self, trace: Any) -> float:
        """The server's verifier on the session as it stands; closes the session."""
        state = trace.state
        try:
            verdict = await state.call("POST", f"/v1/sessions/{state.session}/verify", {})
        finally:
            try:
                await state.call("DELETE", f"/v1/sessions/{state.session}")
            except (RuntimeError, httpx.HTTPError):
                pass  # reaped already; the verdict (or its error) stands
        trace.info["webserv"] = {"reason": verdict.get("reason"), "session": state.session}
        return float(verdict["reward"])


class WebServTaskset(vf.Taskset[WebServTask, WebServConfig]):
    """Tasks from a WebServ server's catalog, split by template."""

    @classmethod
    def toolsets(cls, config: WebServConfig) -> List[Toolset]:
        """One shared tool server; each call reaches its rollout's session."""
        return [WebServToolset(config.tools)]

    def load(self) -> Iterator[WebServTask]:
        """The catalog's tasks of the chosen split, seed by seed within each template."""
        config = self.config
        if config.split not in ("train", "test"):
            raise ValueError(f"Expected split 'train' or 'test', got {config.split!r}")
        held = set(config.test_templates)
        headers = {"authorization": f"Bearer {config.token}"} if config.token else {}
        task_config = config.task.model_copy(update={"server": config.server, "token": config.token})
        for task in self._listed(headers):
            template = f"{task['site']}/{task['template']}"
            if config.templates and task["template"] not in config.templates and template not in config.templates:
                continue
            if (task["template"] in held or template in held) != (config.split == "test"):
                continue
            yield WebServTask(WebServData(
                id=task["id"], name=task["id"], prompt=f"Task: {task.get('instruction') or task['id']}", system_prompt=SYSTEM_PROMPT,
                task_id=task["id"], site=task["site"], template=task["template"], seed=task["seed"], instruction=task.get("instruction"),
            ), task_config)

    def _listed(self, headers: Dict[str, str]) -> Iterator[Dict[str, Any]]:
        """The catalog page by page; it lists seed by seed, so reading stops past the last seed wanted."""
        offset: Optional[int] = 0
        while offset is not None:
            query: Dict[str, Any] = {"limit": 100, "offset": offset}
            if self.config.site:
                query["site"] = self.config.site
            page = httpx.get(f"{self.config.server.rstrip('/')}/v1/tasks", params=query, headers=headers, timeout=60)
            page.raise_for_status()
            listed = page.json()
            for task in listed["tasks"]:
                if task["seed"] >= self.config.seeds:
                    return
                yield task
            offset = listed.get("next_offset")


if __name__ == "__main__":
    WebServToolset.run()
