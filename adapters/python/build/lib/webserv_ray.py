"""The earlier import name of ``webserv.ray``, kept so existing scripts run unchanged."""

from webserv.ray import *  # noqa: F401,F403
from webserv.ray import __all__  # noqa: F401
