"""The earlier import name of ``webserv.gym``, kept so existing scripts run unchanged."""

from webserv.gym import *  # noqa: F401,F403
from webserv.gym import __all__  # noqa: F401
