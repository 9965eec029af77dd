"""The class OpenEnv's ``AutoEnv.from_env("webserv", base_url=...)`` returns:
OpenEnv's own generic client (WebSocket ``/ws``, dict actions and
observations), under the name its discovery looks for (needs openenv-core or
openenv, the ``openenv`` extra)."""

try:
    from openenv.core import GenericEnvClient
except ImportError as error:  # pragma: no cover - said to the user
    raise ImportError("webserv's OpenEnv client needs OpenEnv: pip install 'openenv-webserv[openenv]'") from error

__all__ = ["WebservEnv"]


class WebservEnv(GenericEnvClient):
    """A WebServ server as an OpenEnv environment: ``reset(task=..., seed=...)``,
    ``step({"action": "click", "id": 3})``, ``state()``."""
