"""The earlier import name of ``webserv``, kept so existing scripts run unchanged."""

from webserv import *  # noqa: F401,F403
from webserv import __all__  # noqa: F401
