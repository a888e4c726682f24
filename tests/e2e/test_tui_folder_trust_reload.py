"""Yes to the folder-trust question of the start, answered after the first turn settled the folder
as untrusted (its own question dismissed), loads the folder's hooks and MCP servers too, not only
its prompt files: before, they stayed out until a restart. (Issue 24, finding 2.)"""

from __future__ import annotations

import argparse
import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from agent_tui.agent import extensions
from agent_tui.agent.build import make_provider
from agent_tui.agent.loop import AgentLoop
from agent_tui.store.session import Session
from agent_tui.tui.agent_bridge import ModelChoice, make_extensions
from agent_tui.tui.folder_trust_offer import INTRO
from agent_tui.tui.launch import start_loading
from agent_tui.tui.screens.choice import ChoiceScreen
from agent_tui.tui.screens.dialog import ANSWER_GRACE, SETTLE, TYPING_GAP
from tests.e2e.test_tui_trust_changes import send
from tests.support.agent_support import make_config
from tests.support.fake_model_server import FakeModelServer, anthropic_stream, text
from tests.support.files import write
from tests.support.pilot import notices, wait_for
from tests.support.tui_fixtures import SIZE, make_app

pytestmark = [pytest.mark.timeout(120), pytest.mark.slow]


def app_in(work: Path, server: FakeModelServer, tmp_path: Path) -> Any:
    """The app in ``work`` with a real agent (its hooks read from the folder's files)."""
    config_path = write(tmp_path / "config" / "config.toml", "")
    config = replace(make_config(server), config_path=config_path)
    args = argparse.Namespace()

    def factory(session: Session, choice: ModelChoice) -> AgentLoop:
        assert choice.resources is not None
        return AgentLoop(
            session,
            make_provider(config),
            [],
            config=config,
            cwd=str(work),
            resources=choice.resources.get(),
            extensions=make_extensions(config, choice, str(work)),
        )

    loading = start_loading(args, work, config_path)
    return make_app(
        tmp_path,
        None,
        agent_factory=factory,
        resources=loading,
        model=ModelChoice(resources=loading),
        reload=lambda: start_loading(args, work, config_path),
    )


async def test_yes_after_the_first_turn_loads_the_folders_hooks(
    server: FakeModelServer, tmp_path: Path
) -> None:
    extensions._shared.clear()
    marker = tmp_path / "HOOKED"
    work = tmp_path / "project"
    write(work / ".pi/prompts/ship.md", "Ship $1.")  # a prompt file of its own: the start's question
    hook = {"type": "command", "command": f"touch {marker}"}
    write(work / ".claude/settings.json", json.dumps({"hooks": {"Stop": [{"hooks": [hook]}]}}))
    app = app_in(work, server, tmp_path)
    server.push(anthropic_stream(text("hi")), anthropic_stream(text("again")))
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, ChoiceScreen), "the start's question", 30)
        offer = app.screen
        assert isinstance(offer, ChoiceScreen) and offer.title_text.startswith(INTRO)
        assert ".claude/settings.json: hooks" in offer.title_text
        assert await app.send("hello")  # the first turn starts while it is open
        await wait_for(pilot, lambda: app.screen is not offer, "the turn's own question", 30)
        await pilot.press("escape")  # dismissed: this agent settles the folder as untrusted
        await wait_for(pilot, lambda: len(server.requests) == 1 and not app.busy, "the first turn", 30)
        assert app.screen is offer and not marker.exists()
        await pilot.pause(max(ANSWER_GRACE, TYPING_GAP) + 0.2)
        await pilot.press("up")
        await pilot.pause(SETTLE + 0.2)
        await pilot.press("enter")
        await wait_for(pilot, lambda: any(n.startswith("Reloaded:") for n in notices(app)), "the reload", 30)
        said = next(n for n in notices(app) if n.startswith("Reloaded:"))
        assert said.endswith("1 hook"), said
        await send(pilot, "again")
        await wait_for(pilot, lambda: len(server.requests) == 2 and not app.busy, "the second turn", 30)
    assert marker.exists()  # the folder's Stop hook ran
