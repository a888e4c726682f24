"""The thinking level is chosen among those the next send's model has: the request clamps any
other (gpt-4o is sent no reasoning at all), so the status line named a level that was not sent
("gpt-4o high"). Ctrl+T lists the model's levels; /thinking with another says so, appending nothing."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import OptionList

from agent_tui.tui.agent_bridge import ModelChoice
from agent_tui.tui.app import AgentTuiApp
from agent_tui.tui.screens.choice import ChoiceScreen
from tests.support.pilot import notices, wait_for
from tests.support.tui_fixtures import ScriptedFactory, make_app, sample_session

pytestmark = [pytest.mark.timeout(60), pytest.mark.slow]


def _app(tmp_path: Path, model: str) -> tuple[AgentTuiApp, Path]:
    choice = ModelChoice(provider="openai", model=model, base_url="http://127.0.0.1:9/v1")
    path = sample_session(tmp_path)
    return make_app(tmp_path, path, model=choice, agent_factory=ScriptedFactory()), path


def entries(path: Path) -> int:
    return len(path.read_text().splitlines())


async def test_a_level_the_model_lacks_is_refused_before_anything_is_appended(tmp_path: Path) -> None:
    app, path = _app(tmp_path, "gpt-4o")
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        before = entries(path)
        await app.run_slash("thinking", "high")
        await wait_for(pilot, lambda: any("no thinking level high" in n for n in notices(app)), "the refusal")
        assert entries(path) == before
        assert " high" not in app.main_screen.status_line.text
        await pilot.press("ctrl+t")
        await wait_for(pilot, lambda: isinstance(app.screen, ChoiceScreen), "the chooser")
        options = app.screen.query_one(OptionList)
        assert [str(options.get_option_at_index(i).prompt) for i in range(options.option_count)] == ["off"]


async def test_a_reasoning_model_lists_its_levels(tmp_path: Path) -> None:
    app, _ = _app(tmp_path, "gpt-5")
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        await pilot.press("ctrl+t")
        await wait_for(pilot, lambda: isinstance(app.screen, ChoiceScreen), "the chooser")
        options = app.screen.query_one(OptionList)
        shown = [str(options.get_option_at_index(i).prompt) for i in range(options.option_count)]
        assert "high" in shown and shown[0] == "off", shown  # off (nothing sent) is always there
        await pilot.press("escape")
        await app.run_slash("thinking", "high")
        await wait_for(pilot, lambda: "Thinking level: high" in notices(app), "the switch")
