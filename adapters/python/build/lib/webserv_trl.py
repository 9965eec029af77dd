"""The earlier import name of ``webserv.trl``, kept so existing scripts run unchanged."""

from webserv.trl import *  # noqa: F401,F403
from webserv.trl import __all__  # noqa: F401
