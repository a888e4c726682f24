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
from agent_tui.tui.widgets.composer import TYPING_PAUSE
from tests.support.pilot import wait_for
from tests.support.tui_fixtures import SIZE, ScriptedFactory, linear_session, make_app

pytestmark = [pytest.mark.timeout(90), pytest.mark.slow]  # a Textual app per test


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
    # the pause alone is checked: on a loaded machine the 8 keys may take longer than the 2 s the
    # app waits at most, and then it rightly recounts while they come
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
        assert all(f >= last_key + TYPING_PAUSE * 0.9 for f in fills), (
            "recounted while the keys came",
            [round(f - last_key, 3) for f in fills],
        )
