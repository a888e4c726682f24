"""The app's question about prompt files held back (:mod:`agent_tui.agent.prompt_trust`): a
``SYSTEM.md``, ``APPEND_SYSTEM.md``, template or skill new or changed since the user accepted it.

Asked once the resources are loaded (at the start, at ``/reload``), showing each file and its
first words; the question is guarded (:class:`~agent_tui.tui.screens.dialog.Question`) and "Yes"
takes a deliberate choice. Yes remembers them as accepted and reloads, so they load now; No or
Escape leaves them out until the next start asks again. The rule (what waits, what is
remembered) is the agent layer's; this only asks.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from rich.cells import cell_len, set_cell_size

from agent_tui.agent import prompt_trust
from agent_tui.agent.resources import Resources
from agent_tui.agent.trust import TrustStore
from agent_tui.terminal_text import visible_line
from agent_tui.tui.screens.choice import ChoiceScreen
from agent_tui.tui.screens.dialog import ask

if TYPE_CHECKING:
    from agent_tui.tui.host import Host

#: Files and diff lines (over all the files) the question shows; ``agent-tui trust`` lists all.
SHOWN_FILES = 3
SHOWN_DIFF_LINES = 6
#: Columns a line of the question takes at most (it fits the dialog at 80 columns, unwrapped).
LINE_CELLS = 72


def _cut(line: str) -> str:
    if cell_len(line) <= LINE_CELLS:
        return line
    return set_cell_size(line, LINE_CELLS - 1) + "…"


async def ask_prompt_files(
    app: Host, resources: Resources, *, clock: Callable[[], float] = time.monotonic
) -> bool:
    """Ask about ``resources.waiting``; True when the user accepted them (remembered: a reload
    loads them, :func:`agent_tui.tui.reload.offer_waiting`)."""
    if not resources.waiting:
        return False
    shown: list[str] = []
    room = SHOWN_DIFF_LINES  # the question fits 80x24: a few files, their diffs share a few lines
    for waiting in resources.waiting[:SHOWN_FILES]:
        shown.append(f"  {visible_line(waiting.line)}")  # wrapped, never cut: it names the file
        shown += [_cut(f"      {visible_line(d)}") for d in waiting.diff[:room]]
        room -= min(room, len(waiting.diff))
    if len(resources.waiting) > SHOWN_FILES:
        more = len(resources.waiting) - SHOWN_FILES
        shown.append(f"  … and {more} more (agent-tui trust lists them all)")
    lines = "\n".join(shown)
    title = f"Prompt files new or changed since you last accepted them (not loaded):\n{lines}\nLoad them?"
    composer = app.composer
    screen = ChoiceScreen(
        title,
        [("yes", "Yes: load them (remembered as they are now)"), ("no", "No: leave them out this time")],
        "no",
        guarded=True,
        clock=clock,
        typed_at=composer.typed_at,
        on_text=composer.insert,
        deliberate={"yes"},
    )
    if await ask(app, screen) != "yes":
        return False
    try:
        prompt_trust.accept(TrustStore(resources.trust_path), resources.waiting)
    except OSError as e:
        app.notify(
            visible_line(f"could not remember the answer: {e.strerror}"), severity="error", markup=False
        )
        return False
    return True


__all__ = ["ask_prompt_files"]
