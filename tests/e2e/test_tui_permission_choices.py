"""The permission question's numbered choices (Claude Code's): 1 Yes, 2 Yes and don't ask again
for the rule shown (only when there is one), 3 Yes for this session, 4 No. A digit answers once
the guard lets it; no letter does; while the composer holds text a digit is text too ("2 more
things"), and what was typed is said in the dialog."""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path

import pytest
from textual.app import App
from textual.widgets import Label, OptionList

from agent_tui.agent.permissions import Permissions
from agent_tui.tui.screens.dialog import SETTLE, TYPING_GAP
from agent_tui.tui.screens.permission import ALLOW_ALWAYS, ALLOW_ONCE, ALLOW_SESSION, DENY, PermissionScreen
from tests.e2e.test_tui_e2e import app_command
from tests.support.clock import ManualClock
from tests.support.fake_model_server import FakeModelServer, call, openai_stream
from tests.support.pilot import wait_for
from tests.support.tmux import Tmux
from tests.support.tui_fixtures import ScriptedFactory, make_app, sample_session

pytestmark = [pytest.mark.timeout(60), pytest.mark.slow]


def _screen(clock: ManualClock, typed: list[str], **kwargs: object) -> PermissionScreen:
    return PermissionScreen(
        "bash",
        "runs a shell command",
        "npm run test:unit",
        "bash:npm run test:unit",
        clock=clock,
        on_text=typed.append,
        **kwargs,  # type: ignore[arg-type]
    )


@pytest.mark.parametrize(
    ("rule", "key", "answer"),
    [
        ("Bash(npm run test:*)", "1", ALLOW_ONCE),
        ("Bash(npm run test:*)", "2", ALLOW_ALWAYS),
        ("Bash(npm run test:*)", "3", ALLOW_SESSION),
        ("Bash(npm run test:*)", "4", DENY),
        (None, "2", ALLOW_SESSION),
        (None, "3", DENY),
    ],
)
async def test_each_digit_is_its_choice(rule: str | None, key: str, answer: str) -> None:
    clock = ManualClock()
    typed: list[str] = []
    answers: list[str | None] = []
    app: App[None] = App()
    async with app.run_test(size=(80, 24)) as pilot:
        screen = _screen(clock, typed, rule=rule)
        app.push_screen(screen, answers.append)
        await wait_for(pilot, lambda: app.screen is screen and bool(screen.query(OptionList)), "the question")
        labels = [str(o.prompt) for o in screen.query_one(OptionList).options]
        if rule:
            assert labels == [
                "1  Yes",
                "2  Yes, and don't ask again for Bash(npm run test:*)",
                "3  Yes, for this session: this exact command",
                "4  No (the model is told)",
            ]
        else:
            assert [label[:3] for label in labels] == ["1  ", "2  ", "3  "] and "don't ask" not in str(labels)
        assert screen.query_one(OptionList).highlighted == len(labels) - 1  # No
        clock.now += 2.0
        await pilot.press("y", "a", "n")  # letters: never an answer, text for the message
        await pilot.pause()
        assert not answers and typed == ["y", "a", "n"]
        clock.now += TYPING_GAP + 0.1
        await pilot.press(key)
        await wait_for(pilot, lambda: answers == [answer], f"answered {answer}")


async def test_the_permanent_allow_by_enter_takes_a_settled_highlight() -> None:
    clock = ManualClock()
    answers: list[str | None] = []
    app: App[None] = App()
    async with app.run_test(size=(80, 24)) as pilot:
        screen = _screen(clock, [], rule="Bash(npm run test:*)")
        app.push_screen(screen, answers.append)
        await wait_for(pilot, lambda: app.screen is screen and bool(screen.query(OptionList)), "the question")
        clock.now += 2.0
        await pilot.press("up", "up")  # from No onto "don't ask again"
        clock.now += 0.1
        await pilot.press("enter")
        await pilot.pause()
        assert not answers, "Enter right after the arrows kept a rule"
        clock.now += SETTLE
        await pilot.press("enter")
        await wait_for(pilot, lambda: answers == [ALLOW_ALWAYS], "kept as a rule")


async def test_while_the_composer_holds_text_digits_are_text_and_said_in_the_dialog(tmp_path: Path) -> None:
    app = make_app(tmp_path, sample_session(tmp_path), agent_factory=ScriptedFactory())
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        await pilot.press(*"also")
        request = Permissions().request_for("bash", {"command": "git clean -fdx"}, str(app.config.cwd), "c1")
        assert request is not None
        task = asyncio.create_task(app.approve(request))
        await wait_for(pilot, lambda: isinstance(app.screen, PermissionScreen), "the question")
        question = app.screen
        assert isinstance(question, PermissionScreen)
        choices = question.query_one(OptionList)
        await wait_for(pilot, lambda: app.focused is choices, "the question holding the focus")
        await pilot.pause(TYPING_GAP + 0.2)  # read, a pause: the next keys would answer if digits did
        await pilot.press("space", "2", "space", "m", "o", "r", "e")
        await pilot.pause()
        assert not task.done(), "a digit typed into a message answered the question"
        assert app.composer.text == "also 2 more"
        said = question.query_one("#permission-typed", Label)
        assert said.display and "typed into your message:  2 more" in str(said.render())
        await pilot.press("escape")
        assert await task == DENY
        assert app.composer.text == "also 2 more"


async def test_a_digit_pressed_too_soon_is_kept_and_the_next_one_answers(tmp_path: Path) -> None:
    app = make_app(tmp_path, sample_session(tmp_path), agent_factory=ScriptedFactory())
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        request = Permissions().request_for("bash", {"command": "ls"}, str(app.config.cwd), "c1")
        assert request is not None
        task = asyncio.create_task(app.approve(request))
        await wait_for(pilot, lambda: isinstance(app.screen, PermissionScreen), "the question")
        await pilot.press("1")  # in the question's first moments: text, not an answer
        await pilot.pause()
        assert not task.done() and app.composer.text == "1"
        await pilot.pause(TYPING_GAP + 0.2)
        await pilot.press("1")  # no words in the composer: the digit answers
        assert await task == ALLOW_ONCE


def test_in_tmux_a_message_typed_at_the_question_lands_in_the_composer(
    tmp_path: Path, server: FakeModelServer
) -> None:
    """The trap of the issue at 80x24, real bytes: after a pause, "also run 2 tests" typed while the
    question shows answers nothing (its "a", its "2"); the dialog says where the words went, and
    they are in the composer once the question is answered."""
    command, work, _sessions = app_command(tmp_path, server)
    victim = work / "victim.txt"
    victim.write_text("keep me")
    server.push(openai_stream(None, tool_calls=[call("b1", "bash", {"command": "rm -f victim.txt"})]))
    server.push(openai_stream("Left it."))
    tmux = Tmux(f"agent-tui-perm-words-{os.getpid()}", 80, 24)
    tmux.start(command, work)
    try:
        tmux.wait(lambda s: "new session" in s and "Send" in s, "the app, ready to type")
        tmux.type("tidy up")
        tmux.wait_text("tidy up")
        tmux.keys("Enter")
        tmux.wait_text("Allow bash?")
        time.sleep(2.5)  # read, a pause
        tmux.type("also run 2 tests")
        screen = tmux.wait_text("typed into your message: also run 2 tests")
        time.sleep(1.5)
        screen = tmux.screen()
        assert "Allow bash?" in screen and "No (the model is told)" in screen, screen
        assert victim.read_text() == "keep me"
        tmux.keys("Escape")
        screen = tmux.wait(
            lambda s: "Allow bash?" not in s and "also run 2 tests" in s, "the words in the composer"
        )
        assert victim.read_text() == "keep me" and "allowed" not in screen, screen
    finally:
        tmux.stop()
