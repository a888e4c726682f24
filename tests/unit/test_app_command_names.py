"""Print, JSON and RPC mode reserve the app's slash-command names from a headless list
(``agent_tui.agent.app_commands``), not from the app's table, which imports Textual."""

from __future__ import annotations

from agent_tui.agent import app_commands
from agent_tui.tui.commands import COMMANDS, NAMES


def test_the_headless_names_are_the_apps_commands() -> None:
    assert app_commands.NAMES == NAMES == {c.name for c in COMMANDS}
