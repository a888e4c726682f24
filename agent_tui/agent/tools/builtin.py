"""The built-in tools: read, bash, edit, write, grep, find, ls (pi's tools and behaviour), and
web_fetch (Claude Code's WebFetch): the rows of ``projection.tool_facts.TOOL_FACTS`` that name
their ``module``."""

from __future__ import annotations

import importlib

from agent_tui.agent.tools.base import Tool
from agent_tui.projection.tool_facts import TOOL_FACTS


def default_tools() -> list[Tool]:
    """Every built-in tool, in the order the model is told about them (the table's)."""
    tools: list[Tool] = []
    for facts in TOOL_FACTS.values():
        if facts.module is not None:
            module, _, cls = facts.module.partition(":")
            tools.append(getattr(importlib.import_module(module), cls)())
    return tools
