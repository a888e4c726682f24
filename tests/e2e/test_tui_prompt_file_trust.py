"""A prompt template changed after the user accepted it is not loaded at ``/reload`` unasked: the
app asks, showing the file and its first words; yes (a deliberate choice) loads it. (Issue 24.)"""

from __future__ import annotations

import argparse
from dataclasses import replace
from pathlib import Path

import pytest
from textual.pilot import Pilot

from agent_tui.agent.build import make_provider
from agent_tui.agent.loop import AgentLoop
from agent_tui.store.session import Session
from agent_tui.tui.agent_bridge import ModelChoice
from agent_tui.tui.launch import start_loading
from agent_tui.tui.screens.choice import ChoiceScreen
from agent_tui.tui.screens.dialog import ANSWER_GRACE, SETTLE, TYPING_GAP
from tests.support.agent_support import make_config
from tests.support.fake_model_server import FakeModelServer, anthropic_stream, text
from tests.support.files import write
from tests.support.pilot import notices, wait_for
from tests.support.tui_fixtures import SIZE, make_app

pytestmark = [pytest.mark.timeout(120), pytest.mark.slow]


async def send(pilot: Pilot[None], value: str) -> None:
    await pilot.press(
        *[{" ": "space", "/": "slash", ":": "colon", "$": "dollar_sign"}.get(c, c) for c in value], "enter"
    )


def user_text(body: dict[str, object]) -> str:
    messages = body["messages"]
    assert isinstance(messages, list)
    content = [m for m in messages if m["role"] == "user"][-1]["content"]
    return content if isinstance(content, str) else "".join(b.get("text", "") for b in content)


async def test_a_changed_template_is_asked_about_at_reload_and_yes_loads_it(
    server: FakeModelServer, tmp_path: Path
) -> None:
    work = tmp_path / "project"
    work.mkdir()
    config_path = write(tmp_path / "config" / "config.toml", "")
    template = write(config_path.parent / "prompts" / "ship.md", "Ship $1 now.")
    config = replace(make_config(server), config_path=config_path)
    args = argparse.Namespace()

    def factory(session: Session, choice: ModelChoice) -> AgentLoop:
        assert choice.resources is not None
        return AgentLoop(
            session, make_provider(config), [], config=config, cwd=str(work), resources=choice.resources.get()
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
    server.push(anthropic_stream(text("ok")), anthropic_stream(text("ok again")))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause(0.3)
        assert not isinstance(app.screen, ChoiceScreen)  # accepted as it was at the first start
        template.write_text("Ship $1 to production, skip the tests.")
        await send(pilot, "/reload")
        await wait_for(pilot, lambda: isinstance(app.screen, ChoiceScreen), "the question", 30)
        question = app.screen
        assert isinstance(question, ChoiceScreen)
        assert "template /ship" in question.title_text
        assert "changed since you accepted it: Ship $1 to production, skip the tests." in question.title_text
        # what changed, as a diff against the text accepted at the first start
        assert "-Ship $1 now." in question.title_text
        assert "+Ship $1 to production, skip the tests." in question.title_text
        await pilot.pause(max(ANSWER_GRACE, TYPING_GAP) + 0.2)
        await pilot.press("up")
        await pilot.pause(SETTLE + 0.2)
        await pilot.press("enter")
        await wait_for(
            pilot, lambda: sum(n.startswith("Reloaded:") for n in notices(app)) == 2, "the second reload", 30
        )
        assert not isinstance(app.screen, ChoiceScreen)
        await send(pilot, "/ship it")
        await wait_for(pilot, lambda: len(server.requests) == 1 and not app.busy, "the turn", 30)
    assert user_text(server.requests[0].body) == "Ship it to production, skip the tests."


async def test_at_80x24_the_question_with_diffs_keeps_its_choices_on_screen(tmp_path: Path) -> None:
    from agent_tui.agent.prompt_trust import Waiting
    from agent_tui.agent.resources import Resources
    from agent_tui.tui.prompt_review import ask_prompt_files

    diff = tuple(f"+line {n} " + "x" * 150 for n in range(12))
    waiting = tuple(
        Waiting("prompts:user", ("a", "b"), f"template /t{n} (~/.pi/agent/prompts/t{n}.md) changed", "", diff)
        for n in range(3)
    )
    app = make_app(tmp_path, None)
    async with app.run_test(size=(80, 24)) as pilot:
        app.run_worker(ask_prompt_files(app, Resources(waiting=waiting, trust_path=tmp_path / "trust.json")))
        await wait_for(pilot, lambda: isinstance(app.screen, ChoiceScreen), "the question", 30)
        await pilot.pause(0.2)
        from textual.widgets import OptionList

        options = app.screen.query_one(OptionList)
        assert options.region.height >= 2 and options.region.bottom <= 24, options.region
        title = app.screen.title_text  # type: ignore[attr-defined]
        assert title.count("+line") == 6 and title.count("template /t") == 3  # the diffs share 6 lines
        await pilot.press("escape")
