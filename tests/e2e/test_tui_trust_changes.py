"""A hook written to the config file after the start is not loaded at ``/reload`` unasked: the app
puts the trust question, showing the command; Escape leaves it out and it never runs.
(Issue 24, finding 2.)"""

from __future__ import annotations

import argparse
from dataclasses import replace
from pathlib import Path

import pytest
from textual.pilot import Pilot

from agent_tui.agent import extensions
from agent_tui.agent.build import make_provider
from agent_tui.agent.loop import AgentLoop
from agent_tui.store.session import Session
from agent_tui.tui.agent_bridge import ModelChoice, make_extensions
from agent_tui.tui.launch import start_loading
from agent_tui.tui.screens.choice import ChoiceScreen
from tests.support.agent_support import make_config
from tests.support.fake_model_server import FakeModelServer, anthropic_stream, text
from tests.support.files import write
from tests.support.pilot import notices, wait_for
from tests.support.tui_fixtures import SIZE, make_app

pytestmark = [pytest.mark.timeout(120), pytest.mark.slow]


async def send(pilot: Pilot[None], value: str) -> None:
    await pilot.press(*[{" ": "space", "/": "slash", ":": "colon"}.get(c, c) for c in value], "enter")


async def test_a_hook_added_to_the_config_asks_at_reload_and_escape_leaves_it_out(
    server: FakeModelServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(extensions, "_shared", {})
    work = tmp_path / "project"
    work.mkdir()
    marker = tmp_path / "HOOKED"
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
    app = make_app(
        tmp_path,
        None,
        agent_factory=factory,
        resources=loading,
        model=ModelChoice(resources=loading),
        reload=lambda: start_loading(args, work, config_path),
    )
    server.push(anthropic_stream(text("hi")), anthropic_stream(text("again")))
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "hello")
        await wait_for(pilot, lambda: len(server.requests) == 1 and not app.busy, "the first turn", 30)
        with config_path.open("a") as f:  # the model (or anyone) adds a hook
            f.write(f'[[hooks.Stop]]\n[[hooks.Stop.hooks]]\ncommand = "touch {marker}"\n')
        await send(pilot, "/reload")
        await wait_for(pilot, lambda: isinstance(app.screen, ChoiceScreen), "the trust question", 30)
        question = app.screen
        assert isinstance(question, ChoiceScreen)
        assert f"hook Stop runs `touch {marker}`" in question.title_text
        await pilot.press("escape")
        await wait_for(pilot, lambda: any(n.startswith("Reloaded:") for n in notices(app)), "the reload", 30)
        (said,) = [n for n in notices(app) if n.startswith("Reloaded:")]
        assert said.endswith("0 MCP servers, 0 hooks"), said
        assert any("not loaded" in n and "--trust-project" in n for n in notices(app))
        await send(pilot, "and now")
        await wait_for(pilot, lambda: len(server.requests) == 2 and not app.busy, "the second turn", 30)
    assert not marker.exists()
