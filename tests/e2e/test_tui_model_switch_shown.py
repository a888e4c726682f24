"""After /model or /thinking, the status line and the panel name what the next send will use at
once (they were drawn before the flags were updated, so a session opened with --model X kept
showing X after /model Y, until the next send)."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_tui.tui.agent_bridge import ModelChoice
from tests.support.pilot import notices, wait_for
from tests.support.tui_fixtures import ScriptedFactory, make_app, sample_session

pytestmark = [pytest.mark.timeout(60), pytest.mark.slow]  # a Textual app per test


async def test_the_status_line_and_the_panel_follow_model_and_thinking(tmp_path: Path) -> None:
    choice = ModelChoice(
        provider="openai", model="gpt-4o-mini", base_url="http://127.0.0.1:9/v1", thinking="off"
    )
    app = make_app(tmp_path, sample_session(tmp_path), model=choice, agent_factory=ScriptedFactory())
    async with app.run_test(size=(200, 50)) as pilot:
        await pilot.pause()
        assert "gpt-4o-mini" in app.main_screen.status_line.text
        await app.run_slash("model", "openai/gpt-5")  # (a model with thinking levels)
        await wait_for(pilot, lambda: "Model: openai/gpt-5" in notices(app), "the switch")
        line = app.main_screen.status_line.text
        assert "openai/gpt-5 " in line and "gpt-4o-mini" not in line, line
        assert app.panel.model is not None and app.panel.model.model_name == "openai/gpt-5"
        await app.run_slash("thinking", "high")
        await wait_for(pilot, lambda: "think high" in app.main_screen.status_line.text, "the level shown")
