"""Counting the main screen's layouts (a scroll alone is none), for tests of what a change costs."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import pytest
from textual.screen import Screen

from agent_tui.tui.screens.main import MainScreen


def count_layouts(monkeypatch: pytest.MonkeyPatch, after: Callable[[], None] | None = None) -> list[float]:
    """From now on, the time of each layout of the main screen is appended to the list returned;
    ``after`` runs after each one (to look at the screen as the layout left it)."""
    layouts: list[float] = []
    original = Screen._refresh_layout

    def counting(self: Screen[Any], size: Any = None, scroll: bool = False) -> None:
        if isinstance(self, MainScreen) and not scroll:
            layouts.append(time.monotonic())
        original(self, size, scroll)
        if after is not None:
            after()

    monkeypatch.setattr(Screen, "_refresh_layout", counting)
    return layouts
