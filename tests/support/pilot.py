"""Pilot helpers: wait for a condition, select a tree row, read the panel and the notices."""

from __future__ import annotations

import time
from collections.abc import Callable

from textual.pilot import Pilot

from agent_tui.tui.app import AgentTuiApp


async def wait_for(pilot: Pilot[None], condition: Callable[[], bool], what: str, steps: int = 200) -> None:
    """Poll ``condition`` every 20 ms, at least ``steps`` times and for at least 30 s: a loaded
    machine is slow, not wrong (the test's timeout bounds a real hang)."""
    deadline = time.monotonic() + 30
    polls = 0
    while not condition():
        polls += 1
        if polls >= steps and time.monotonic() >= deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await pilot.pause(0.02)


def panel_rows(app: AgentTuiApp) -> list[str]:
    return app.panel.row_lines()


def row_for(app: AgentTuiApp, entry_id: str) -> str:
    rows = [r for r in panel_rows(app) if f" {entry_id} " in r]
    assert rows, f"no panel row for {entry_id}: {panel_rows(app)}"
    return rows[0]


async def select(pilot: Pilot[None], app: AgentTuiApp, entry_id: str) -> None:
    """Focus the tree and put its cursor on ``entry_id``."""
    if app.focused is not app.session_tree:
        await pilot.press("f1")  # (pressed again, F1 would hide the tree)
    assert app.session_tree.reveal(entry_id)
    await wait_for(pilot, lambda: app.session_tree.cursor_entry_id == entry_id, f"cursor on {entry_id}")
    await wait_for(pilot, lambda: app.selected_id == entry_id, f"{entry_id} selected")


def notices(app: AgentTuiApp) -> list[str]:
    return [str(n.message) for n in app._notifications]


async def answer_branch_summary(pilot: Pilot[None], app: AgentTuiApp, *keys: str) -> None:
    """Answer pi's "Summarize branch?" that a move leaving messages behind asks, once its guard
    lets keys through: ``keys`` (none: Enter on the default, "No summary")."""
    from agent_tui.tui.screens.choice import ChoiceScreen

    await wait_for(
        pilot,
        lambda: (
            isinstance(app.screen, ChoiceScreen) and app.screen.title_text.startswith("Summarize branch?")
        ),
        "the branch-summary question",
    )
    screen = app.screen
    assert isinstance(screen, ChoiceScreen)
    await wait_for(
        pilot, lambda: screen.answerable and not screen.typing(screen.clock()), "answerable (no typing)"
    )
    await pilot.press(*keys, "enter")
