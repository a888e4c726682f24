"""The built-in tools: read, bash, edit, write, grep, find, ls (pi's tools and behaviour), and
web_fetch (Claude Code's WebFetch)."""

from __future__ import annotations

from agent_tui.agent.tools.base import Tool
from agent_tui.agent.tools.bash import BashTool
from agent_tui.agent.tools.edit import EditTool
from agent_tui.agent.tools.find import FindTool
from agent_tui.agent.tools.grep import GrepTool
from agent_tui.agent.tools.ls import LsTool
from agent_tui.agent.tools.read import ReadTool
from agent_tui.agent.tools.web_fetch import WebFetchTool
from agent_tui.agent.tools.write import WriteTool


def default_tools() -> list[Tool]:
    """Every built-in tool, in the order the model is told about them."""
    return [ReadTool(), BashTool(), EditTool(), WriteTool(), GrepTool(), FindTool(), LsTool(), WebFetchTool()]
