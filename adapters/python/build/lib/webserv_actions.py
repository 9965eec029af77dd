"""The earlier import name of ``webserv.actions``, kept so existing scripts run unchanged."""

from webserv.actions import *  # noqa: F401,F403
