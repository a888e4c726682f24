"""A big session's panel is recounted in a thread after each append, but not while someone types:
the thread takes half the interpreter, and every frame of the typing would take twice as long."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import pytest

from agent_tui.tui import app as app_module
from agent_tui.tui.app import AgentTuiApp
from tests.support.pilot import wait_for
from tests.support.tui_fixtures import SIZE, ScriptedFactory, linear_session, make_app

pytestmark = [pytest.mark.timeout(90), pytest.mark.slow]  # a Textual app per test

PAUSE = 3.0  # seconds without a key before the recount, for this test


async def test_the_panels_recount_waits_until_typing_pauses(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    entries = app_module.BACKGROUND_PANEL_MESSAGES + 200  # counted in the thread
    path = linear_session(tmp_path / "sessions" / "big.jsonl", entries)
    app = make_app(tmp_path, path, agent_factory=ScriptedFactory(reply="Done."))
    fills: list[float] = []
    original = AgentTuiApp._fill_panel

    def recording(self: AgentTuiApp, projection: Any) -> Any:
        fills.append(time.monotonic())
        return original(self, projection)

    monkeypatch.setattr(AgentTuiApp, "_fill_panel", recording)
    # The pause alone is checked, made long enough that a loaded machine's slow keys (and the
    # Enter's own handling before the first of them) are still "typing": with the app's 0.3 s a
    # gap of 0.3 s between two pilot keys rightly recounts, and the test failed on load alone.
    monkeypatch.setattr(app_module, "TYPING_PAUSE", PAUSE)
    monkeypatch.setattr(app_module, "TYPING_PATIENCE", 600.0)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(
            pilot, lambda: bool(fills) and app.refreshed[0] == len(app.index), "the first count", 500
        )
        await wait_for(pilot, lambda: not app.workers, "the first count done", 500)
        fills.clear()
        app.composer.load_text("one more question")
        await pilot.press("enter")
        typed: list[float] = []
        for _ in range(8):  # typing on while the turn appends
            await pilot.press("a")
            typed.append(app.composer.typed_at)
            await asyncio.sleep(0.1)
        await wait_for(pilot, lambda: not app.busy, "the turn")
        await wait_for(pilot, lambda: bool(fills), "the recount", 500)
        last_key = app.composer.typed_at
        assert last_key == typed[-1]
        assert all(f >= last_key + PAUSE * 0.9 for f in fills), (
            "recounted while the keys came",
            [round(f - last_key, 3) for f in fills],
        )


async def test_a_recount_due_while_the_app_closes_does_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The recount's timer belongs to the app, which outlives its screen's widgets while it closes:
    a recount falling due then found no composer and the app died with a traceback."""
    path = linear_session(tmp_path / "sessions" / "big.jsonl", 20)
    app = make_app(tmp_path, path, agent_factory=ScriptedFactory(reply="Done."))
    fills: list[Any] = []
    monkeypatch.setattr(AgentTuiApp, "_fill_panel", lambda self, projection: fills.append(projection))
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.refreshed[0] == len(app.index), "the first view")
        await app.composer.remove()  # what closing does first
        app._fill_panel_when_typing_pauses(app.projection, time.monotonic())
        await pilot.pause()
        assert fills == []
