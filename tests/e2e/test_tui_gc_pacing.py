"""The garbage collector while the app runs: small young collections, the old generation only after
a turn, and the process's own thresholds back when the app ends."""

from __future__ import annotations

import gc
from pathlib import Path
from typing import Any

import pytest

from agent_tui.tui import gc_pacing
from tests.support.pilot import wait_for
from tests.support.tui_fixtures import SIZE, ScriptedFactory, make_app

pytestmark = [pytest.mark.timeout(60), pytest.mark.slow]  # a Textual app per test


async def test_the_old_generation_is_collected_after_a_turn_and_the_thresholds_come_back(
    tmp_path: Path,
) -> None:
    before = gc.get_threshold()
    full: list[float] = []

    def watch(phase: str, info: dict[str, Any]) -> None:
        if phase == "stop" and info["generation"] == 2:
            full.append(1.0)

    app = make_app(tmp_path, None, agent_factory=ScriptedFactory(reply="Done."))
    gc.callbacks.append(watch)
    try:
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause()
            assert gc.get_threshold() == (gc_pacing.YOUNG, gc_pacing.MIDDLE, gc_pacing.NEVER)
            full.clear()
            await pilot.press(*"hi")
            await pilot.press("enter")
            await wait_for(pilot, lambda: not app.busy and len(app.index) == 2, "the turn")
            await wait_for(pilot, lambda: bool(full), "a full collection after the turn", steps=400)
        assert gc.get_threshold() == before
    finally:
        gc.callbacks.remove(watch)
