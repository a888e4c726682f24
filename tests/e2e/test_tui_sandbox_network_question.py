"""The app's question about a host a sandboxed command wants and no rule allows
(agent.sandbox_proxy's ask, through the app's approver): the permission screen, guarded, at 80x24."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from textual.widgets import Label, OptionList

from agent_tui.agent.permission_rules import PermissionRules
from agent_tui.agent.permissions import Decision, PermissionMode, PermissionRequest, Permissions
from agent_tui.agent.sandbox_proxy import NetworkGate
from agent_tui.tui.screens.dialog import TYPING_GAP
from agent_tui.tui.screens.permission import PermissionScreen
from tests.support.pilot import wait_for
from tests.support.screen_text import assert_on_screen, assert_whole
from tests.support.tui_fixtures import ScriptedFactory, make_app, sample_session

pytestmark = [pytest.mark.timeout(60), pytest.mark.slow]  # a Textual app


async def test_the_question_names_the_host_and_a_key_too_soon_does_not_answer(tmp_path: Path) -> None:
    app = make_app(tmp_path, sample_session(tmp_path), agent_factory=ScriptedFactory())
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        rules = PermissionRules.load(str(tmp_path), config_data={}, home=tmp_path / "home")

        async def approver(request: PermissionRequest) -> Decision:
            return Decision(await app.approve(request))  # the app's question

        policy = Permissions(PermissionMode.ASK, approver, rules=rules)
        gate = NetworkGate(lambda: rules, lambda: policy)
        command = gate.commands[gate.register(["bash", "-c", "pip download requests"])]
        task = asyncio.create_task(gate.ask(gate.decide("pypi.org", 443), command))
        await wait_for(pilot, lambda: isinstance(app.screen, PermissionScreen), "the question")
        question = app.screen
        assert isinstance(question, PermissionScreen)
        title = question.query_one(".dialog-title", Label)
        assert str(title.render()).startswith("Allow bash? It connects to pypi.org:443 from the sandbox")
        assert_on_screen(app, title)
        assert_whole(app, title, str(title.render()))  # wrapped at 80 columns, every word shown
        assert question.details == "pip download requests"  # the command that wants the host
        choices = question.query_one(OptionList)
        labels = [str(choices.get_option_at_index(i).prompt) for i in range(choices.option_count)]
        assert labels == [
            "1  Yes",
            "2  Yes, and don't ask again for WebFetch(domain:pypi.org)",
            "3  Yes, for this session: network:pypi.org",
            "4  No (the model is told)",
        ]
        hint = question.query_one(".dialog-hint", Label)
        assert_on_screen(app, choices)
        assert_whole(app, hint, str(hint.render()))
        await pilot.press("1")  # as it appears: text for the composer, no answer
        await pilot.press("y")
        await pilot.pause()
        assert not task.done() and app.composer.text == "1y"
        app.composer.text = ""
        await pilot.pause(TYPING_GAP + 0.2)
        await pilot.press("3")
        assert await task is True
        assert gate.session_hosts == {"pypi.org"} and gate.decide("pypi.org", 443).allowed
