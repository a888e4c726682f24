"""The model picker searches as you type over the table, the config's [models] and what the
configured server lists; Ctrl+P cycles through ``--models``."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from agent_tui.tui.agent_bridge import ModelChoice
from agent_tui.tui.screens.model_picker import ModelPickerScreen
from tests.support.fake_model_server import FakeModelServer
from tests.support.model_env import without_provider_env
from tests.support.pilot import wait_for
from tests.support.tui_fixtures import ScriptedFactory, make_app, reopen, sample_session

#: The whole app driven key by key for seconds (1.9 s of CPU, 4-6 s wall, loaded): ``make test`` runs them,
#: the edit loop does not.
pytestmark = pytest.mark.slow

SIZE = (100, 30)


def entries(path: Path) -> list[dict[str, Any]]:
    with reopen(path) as session:
        return [dict(e.data) for e in session.index.entries]


def grew(path: Path, before: int) -> Callable[[], bool]:
    return lambda: len(entries(path)) == before + 1


@pytest.fixture(autouse=True)
def no_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    without_provider_env(monkeypatch)


async def test_the_picker_searches_the_table_config_and_server_as_you_type(
    tmp_path: Path, server: FakeModelServer
) -> None:
    server.serve_models("picker-served-model")
    (tmp_path / "config.toml").write_text(
        f'[openai]\nbase_url = "{server.openai_base_url}"\n[models."picker-config-model"]\ncontext_window = 9000\n'
    )
    path = sample_session(tmp_path)
    app = make_app(tmp_path, path, agent_factory=ScriptedFactory())
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await pilot.press("f4")
        await wait_for(pilot, lambda: isinstance(app.screen, ModelPickerScreen), "the model picker")
        picker = app.screen
        assert isinstance(picker, ModelPickerScreen)
        await wait_for(
            pilot, lambda: any(m.id == "picker-served-model" for m in picker.models), "the server's list"
        )
        await pilot.press(*"picker")
        await wait_for(pilot, lambda: len(picker.shown) == 2, "two matches")
        labels = [m.label() for m in picker.shown]
        assert "openai/picker-config-model  (9,000 tokens, config)" in labels
        assert "openai/picker-served-model  (window unknown, server)" in labels
        for key in "-served":
            await pilot.press(key)
        await wait_for(pilot, lambda: [m.id for m in picker.shown] == ["picker-served-model"], "one match")
        await pilot.press("enter")
        await wait_for(pilot, lambda: entries(path)[-1].get("modelId") == "picker-served-model", "switched")
        assert entries(path)[-1]["provider"] == "openai"


async def test_ctrl_p_cycles_through_the_models_flag(tmp_path: Path) -> None:
    (tmp_path / "config.toml").write_text('keymap = "pi"\n')  # pi's keys: Ctrl+P is the next model
    path = sample_session(tmp_path)
    scoped = ("anthropic/claude-haiku-4-5", "anthropic/claude-opus-4-5")
    app = make_app(tmp_path, path, agent_factory=ScriptedFactory(), model=ModelChoice(scoped=scoped))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await pilot.press("ctrl+p")
        await wait_for(pilot, lambda: entries(path)[-1].get("modelId") == "claude-haiku-4-5", "the first")
        await pilot.press("ctrl+p")
        await wait_for(pilot, lambda: entries(path)[-1].get("modelId") == "claude-opus-4-5", "the second")
        await pilot.press("ctrl+p")
        await wait_for(pilot, lambda: entries(path)[-1].get("modelId") == "claude-haiku-4-5", "round again")


async def test_the_thinking_cycle_key_walks_the_models_levels(tmp_path: Path) -> None:
    path = sample_session(tmp_path)  # claude-sonnet-4-5: off, minimal, low, medium, high (no xhigh)
    app = make_app(tmp_path, path, agent_factory=ScriptedFactory())
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        seen = []
        for _ in range(6):
            appended = grew(path, len(entries(path)))
            await pilot.press("alt+t")
            await wait_for(pilot, appended, "a thinking_level_change")
            seen.append(entries(path)[-1]["thinkingLevel"])
        assert seen == ["minimal", "low", "medium", "high", "off", "minimal"]
