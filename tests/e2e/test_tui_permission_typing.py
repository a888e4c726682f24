"""The permission question appearing while the user types a message: the letters typed on are
text for the composer, not answers ("also check the logs please" allowed the command for the
session on the "a" of "please", and the words were lost); a key pressed after a pause answers."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from textual.app import App

from agent_tui.agent.permissions import Permissions
from agent_tui.tui.screens import dialog
from agent_tui.tui.screens.permission import ALLOW_ONCE, DENY, PermissionScreen
from tests.support.clock import ManualClock
from tests.support.pilot import wait_for
from tests.support.tui_fixtures import ScriptedFactory, make_app, sample_session

pytestmark = [pytest.mark.timeout(60), pytest.mark.slow]


async def test_letters_typed_on_are_text_and_a_key_after_a_pause_answers() -> None:
    clock = ManualClock()
    typed: list[str] = []
    answers: list[str | None] = []
    app: App[None] = App()
    async with app.run_test(size=(80, 24)) as pilot:
        screen = PermissionScreen(
            "bash",
            "runs a shell command",
            "ls -la",
            "bash:ls -la",
            clock=clock,
            typed_at=99.9,
            on_text=typed.append,
        )
        app.push_screen(screen, answers.append)
        await wait_for(pilot, lambda: app.screen is screen, "the question")
        clock.now = 100.6  # past the grace after it appeared, 0.7 s after the last key typed
        await pilot.press(*"please", "x")
        await pilot.pause()
        assert typed == list("pleasex") and not answers, (typed, answers)
        assert app.screen is screen
        clock.now = 102.0  # a pause: the next key is an answer
        await pilot.press("z")  # no answer: text (and the typing starts again)
        assert typed[-1] == "z" and app.screen is screen
        clock.now = 104.0
        await pilot.press("1")
        await wait_for(pilot, lambda: answers == [ALLOW_ONCE], "allowed once")


async def test_in_the_app_the_letters_go_on_into_the_composer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(dialog, "TYPING_GAP", 60.0)  # every key of the test is "typing on"
    app = make_app(tmp_path, sample_session(tmp_path), agent_factory=ScriptedFactory())
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        await pilot.press(*"also ")
        request = Permissions().request_for("bash", {"command": "ls -la"}, str(app.config.cwd), "c1")
        assert request is not None
        task = asyncio.create_task(app.approve(request))
        await wait_for(pilot, lambda: isinstance(app.screen, PermissionScreen), "the question")
        question = app.screen
        await wait_for(
            pilot, lambda: isinstance(question, PermissionScreen) and question.answerable, "answerable"
        )
        await pilot.press(*"check the logs please")
        await pilot.pause()
        assert not task.done(), "a letter of the message answered the question"
        assert app.composer.text == "also check the logs please"
        await pilot.press("escape")
        assert await task == DENY
