"""The names of the app's slash commands, headless: a prompt template or skill may not take one.

Print, JSON and RPC mode reserve them as the app does (``/compact`` stays the app's command
everywhere) without importing the app's command table, which pulls in Textual. The table,
``agent_tui.tui.commands.COMMANDS``, must name exactly these (a unit test holds them together).
"""

from __future__ import annotations

NAMES: frozenset[str] = frozenset(
    (
        "branch",
        "compact",
        "uncompact",
        "prune",
        "undo",
        "hide",
        "replace",
        "restore",
        "unhide",
        "pin",
        "unpin",
        "label",
        "rename",
        "fork",
        "export",
        "resume",
        "new",
        "session",
        "model",
        "thinking",
        "copy",
        "theme",
        "mcp",
        "sandbox",
        "permissions",
        "agents",
        "reload",
        "help",
        "quit",
    )
)

__all__ = ["NAMES"]
