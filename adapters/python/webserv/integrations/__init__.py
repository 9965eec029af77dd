"""Thin wrappers that plug :func:`webserv.harness.rollout` into RL frameworks' own agent
interfaces. Each module imports its framework and nothing else does, so the core package stays
standard library only; import the one you train with:

- :mod:`webserv.integrations.agent_lightning`: an Agent Lightning ``LitAgent``
- :mod:`webserv.integrations.art`: an ART rollout function returning an ``art.Trajectory``
- :mod:`webserv.integrations.verl`: a verl agent loop (``AgentLoopBase``)
- :mod:`webserv.integrations.rllm`: rLLM's model gateway in front of the rollout's endpoint
"""
