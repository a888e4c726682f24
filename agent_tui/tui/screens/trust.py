"""The one question before a folder's own MCP servers and hooks run: trust this folder?

Asked at the folder's first turn when it has a ``.mcp.json``, ``.pi/mcp.json`` or
``.claude/settings*.json`` hooks and no answer is remembered; the answer (yes or no) is
remembered per folder. Escape answers no for now, remembered nowhere (asked again next start).

The question is guarded (:class:`~dialog.Question`): keys typed for the composer as it appears
answer nothing ("hello⏎" then Up⏎ 250 ms later answered "Yes" and started the folder's servers),
and "Yes" starts programs, so it takes the arrow and an Enter once the highlight has settled.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from agent_tui.terminal_text import visible_line
from agent_tui.tui.screens.choice import ChoiceScreen
from agent_tui.tui.screens.dialog import ask

if TYPE_CHECKING:
    from agent_tui.tui.host import Host


async def ask_trust(
    app: Host,
    folder: str,
    resources: list[str],
    *,
    clock: Callable[[], float] = time.monotonic,
    intro: str = "This folder has its own programs to run:",
) -> bool | None:
    """Show the question; True / False (remembered), None when dismissed with Escape."""
    lines = "\n".join(f"  {visible_line(r)}" for r in resources)
    # The folder on a line of its own: a long path wraps there, not in the middle of the question.
    title = f"{intro}\n{lines}\nTrust this folder?\n  {visible_line(folder)}"
    composer = app.composer
    screen = ChoiceScreen(
        title,
        [("yes", "Yes: load them (remembered for this folder)"), ("no", "No: skip them (remembered)")],
        "no",
        guarded=True,
        clock=clock,
        typed_at=composer.typed_at,
        on_text=composer.insert,
        deliberate={"yes"},
    )
    value = await ask(app, screen)
    return None if value is None else value == "yes"


__all__ = ["ask_trust"]
