"""``/permissions`` in the app: the rules of the current agent (or, before its first turn, of the
files as they are now), listed or one removed (``agent.permission_rules.command_text``)."""

from __future__ import annotations

import contextlib
import os
from typing import Any

from agent_tui.terminal_text import visible_line


def app_rules(app: Any) -> Any:
    """The built agent's rules, else the files' as an agent here would read them."""
    from agent_tui.agent import permission_rules
    from agent_tui.agent.trust import TrustStore

    turns = getattr(app, "turns", None)
    if turns is not None and getattr(turns, "ready", False):
        with contextlib.suppress(AttributeError):
            permissions = turns.built.loop.permissions
            if permissions is not None and permissions.rules is not None:
                return permissions.rules
    config = getattr(app, "config", None)
    cwd = str(getattr(config, "cwd", None) or os.getcwd())
    choice = getattr(config, "model", None)
    config_path = getattr(choice, "config_path", None) or getattr(config, "config_path", None)
    if config_path is None:
        from agent_tui.config import config_path as default_path

        config_path = default_path()

    class _Trust:
        trust_project = bool(getattr(choice, "trust_project", False))
        trusted = None
        trust_store = TrustStore(getattr(choice, "trust_file", None))

    return permission_rules.for_session(cwd, config_path, lambda: _Trust())


def permissions_text(app: Any, argument: str) -> str:
    """What ``/permissions [remove RULE]`` shows (control characters made visible)."""
    from agent_tui.agent.permission_rules import command_text

    text = command_text(app_rules(app), argument)
    return "\n".join(visible_line(line) for line in text.splitlines())


__all__ = ["app_rules", "permissions_text"]
