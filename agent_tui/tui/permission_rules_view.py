"""``/permissions`` in the app: the rules of the current agent (or, before its first turn, of the
files as they are now), listed or one removed (``agent.permission_rules.command_text``)."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import TYPE_CHECKING

from agent_tui.agent.trust import TrustStore
from agent_tui.terminal_text import visible_line
from agent_tui.tui.agent_bridge import BuiltInThread

if TYPE_CHECKING:
    from agent_tui.agent.permission_rules import PermissionRules
    from agent_tui.tui.agent_bridge import Turns
    from agent_tui.tui.host import Host
    from agent_tui.tui.tui_config import TuiConfig


@dataclass(frozen=True, slots=True)
class _Trust:
    """The folder's trust as an agent started here would settle it (``for_session`` reads these)."""

    trust_project: bool
    trust_store: TrustStore
    trusted: bool | None = None


def app_rules(turns: Turns | None, config: TuiConfig) -> PermissionRules:
    """The built agent's rules, else the files' as an agent here would read them."""
    from agent_tui.agent import permission_rules

    if isinstance(turns, BuiltInThread) and turns.ready:
        with contextlib.suppress(AttributeError):  # its build failed: the files' rules
            permissions = turns.built.loop.permissions
            if permissions is not None and permissions.rules is not None:
                return permissions.rules
    choice = config.model
    trust = _Trust(choice.trust_project, TrustStore(choice.trust_file))
    return permission_rules.for_session(
        str(config.cwd), choice.config_path or config.config_path, lambda: trust
    )


def rules_text(turns: Turns | None, config: TuiConfig, argument: str) -> str:
    """What ``/permissions [remove RULE]`` shows (control characters made visible)."""
    from agent_tui.agent.permission_rules import command_text

    text = command_text(app_rules(turns, config), argument)
    return "\n".join(visible_line(line) for line in text.splitlines())


def permissions_text(app: Host, argument: str) -> str:
    """``/permissions`` for the app: its agent's rules, else its folder's files'."""
    return rules_text(app.turns, app.config, argument)


__all__ = ["app_rules", "permissions_text", "rules_text"]
