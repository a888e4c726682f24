"""No question is answered by a key meant for the composer, and a choice that starts programs takes
a deliberate one.

``hello⏎`` then Up⏎ 250 ms later (the recall-last-prompt reflex) answered "Yes" to the trust
question: the folder was remembered as trusted and its hostile ``.mcp.json`` server started before
the question could be read. And in the permission question, the first letter typed after a 2 s
pause answered: the ``a`` of "also run the tests afterwards" allowed ``git clean -fdx`` for the
session. Every question (``dialog.Question``) now takes no key before it has been on screen a
moment or while the user is typing, and trusting a folder or allowing for the session needs the
arrows and an Enter once the highlight has settled. Pilot, and real bytes in tmux at 80x24.
"""

from __future__ import annotations

import asyncio
import json
import os
import shlex
import sys
import time
from pathlib import Path

import pytest
from textual.app import App

from agent_tui.agent.permissions import Permissions
from agent_tui.tui.screens.choice import ChoiceScreen
from agent_tui.tui.screens.dialog import ANSWER_GRACE, SETTLE, TYPING_GAP
from agent_tui.tui.screens.permission import ALLOW_SESSION, DENY, PermissionScreen
from agent_tui.tui.screens.trust import ask_trust
from tests.e2e.test_tui_e2e import app_command
from tests.support.clock import ManualClock
from tests.support.fake_model_server import FakeModelServer, call, openai_stream
from tests.support.pilot import wait_for
from tests.support.tmux import Tmux
from tests.support.tui_fixtures import ScriptedFactory, make_app, sample_session

pytestmark = [pytest.mark.timeout(180), pytest.mark.slow]


# -- Pilot: the guard, key by key --------------------------------------------------------------


async def test_the_trust_question_takes_no_key_of_a_recall_reflex(tmp_path: Path) -> None:
    clock = ManualClock()
    app = make_app(tmp_path, sample_session(tmp_path), agent_factory=ScriptedFactory())
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        await pilot.press(*"hello", "enter")  # the composer's typing: its last key is the Enter
        app.composer.typed_at = clock.now
        worker = app.run_worker(ask_trust(app, "/some/folder", [".mcp.json: MCP servers"], clock=clock))
        await wait_for(pilot, lambda: isinstance(app.screen, ChoiceScreen), "the question")
        question = app.screen
        assert isinstance(question, ChoiceScreen)
        highlighted = question.highlighted_id
        await pilot.pause()
        clock.now += 0.25
        await pilot.press("up", "enter")  # Up⏎ 250 ms after the hello⏎
        clock.now += 0.6  # past the grace, but the reflex's keys were typing: still typing
        await pilot.press("up", "enter")
        await pilot.pause()
        assert app.screen is question and not worker.is_finished, "a reflex answered the question"
        assert highlighted() == "no"
        clock.now += TYPING_GAP + 0.1  # a pause: the next key is the user's choice
        await pilot.press("up", "enter")  # onto Yes and Enter at once: not deliberate
        await pilot.pause()
        assert app.screen is question and not worker.is_finished, "Yes was taken without settling"
        assert highlighted() == "yes"
        clock.now += SETTLE
        await pilot.press("enter")
        await worker.wait()
        assert worker.result is True


@pytest.mark.parametrize("keys", [["enter"], ["down", "enter"], ["y"], ["n"], ["space"]])
async def test_no_key_answers_the_permission_question_before_it_has_been_on_screen(
    tmp_path: Path, keys: list[str]
) -> None:
    clock = ManualClock()
    answers: list[str | None] = []
    typed: list[str] = []
    app: App[None] = App()
    async with app.run_test(size=(80, 24)) as pilot:
        screen = PermissionScreen(
            "bash", "runs a shell command", "ls", "bash:ls", clock=clock, on_text=typed.append
        )
        app.push_screen(screen, answers.append)
        await wait_for(pilot, lambda: app.screen is screen, "the question")
        clock.now += ANSWER_GRACE / 2
        await pilot.press(*keys)
        await pilot.pause()
        assert not answers and app.screen is screen, answers


async def test_the_first_letter_after_a_pause_never_allows_for_the_session() -> None:
    """The trap: after a 2 s pause, "also run the tests afterwards" is text for the composer."""
    clock = ManualClock()
    answers: list[str | None] = []
    typed: list[str] = []
    app: App[None] = App()
    async with app.run_test(size=(80, 24)) as pilot:
        screen = PermissionScreen(
            "bash",
            "runs a shell command",
            "git clean -fdx",
            "bash:git clean -fdx",
            clock=clock,
            on_text=typed.append,
        )
        app.push_screen(screen, answers.append)
        await wait_for(pilot, lambda: app.screen is screen, "the question")
        clock.now += 2.0  # on screen, read, a pause
        for character in "also run the tests afterwards":
            await pilot.press(character if character != " " else "space")
            clock.now += 0.1
        await pilot.pause()
        assert not answers and app.screen is screen, answers
        assert "".join(typed) == "also run the tests afterwards"
        clock.now += 2.0
        await pilot.press("up")  # the deliberate way: the arrow onto it, a moment, Enter
        clock.now += 0.1
        await pilot.press("enter")
        await pilot.pause()
        assert not answers, "Enter right after the arrow allowed for the session"
        clock.now += SETTLE
        await pilot.press("enter")
        await wait_for(pilot, lambda: answers == [ALLOW_SESSION], "allowed for the session")


async def test_escape_always_denies(tmp_path: Path) -> None:
    app = make_app(tmp_path, sample_session(tmp_path), agent_factory=ScriptedFactory())
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        await pilot.press(*"typing on")
        request = Permissions().request_for("bash", {"command": "ls"}, str(app.config.cwd), "c1")
        assert request is not None
        task = asyncio.create_task(app.approve(request))
        await wait_for(pilot, lambda: isinstance(app.screen, PermissionScreen), "the question")
        await pilot.press("escape")
        assert await task == DENY


# -- tmux: the real program, real bytes ----------------------------------------------------------


def test_in_tmux_hello_enter_up_enter_does_not_trust_the_folder(
    tmp_path: Path, server: FakeModelServer
) -> None:
    command, work, _sessions = app_command(tmp_path, server)
    started = tmp_path / "the-server-started"
    server_command = f"{shlex.quote(sys.executable)} -c 'import pathlib,time; pathlib.Path({str(started)!r}).touch(); time.sleep(30)'"
    (work / ".mcp.json").write_text(
        json.dumps({"mcpServers": {"hostile": {"command": "sh", "args": ["-c", server_command]}}})
    )
    server.push(openai_stream("Hello."))
    trust_file = tmp_path / "home" / "trust.json"
    tmux = Tmux(f"agent-tui-trust-guard-{os.getpid()}", 80, 24)
    tmux.start(command, work)
    try:
        tmux.wait(lambda s: "new session" in s and "Send" in s, "the app, ready to type")
        tmux.type("hello")
        tmux.wait_text("hello")
        tmux.keys("Enter", "Up", "Enter")  # one burst: hello⏎ then the recall reflex Up⏎
        tmux.wait_text("Trust this folder?")
        time.sleep(1.5)
        screen = tmux.screen()
        assert "Trust this folder?" in screen, screen
        assert not started.exists(), "the folder's server started"
        assert not trust_file.exists() or "true" not in trust_file.read_text()
        tmux.keys("Escape")  # not now
        tmux.wait_text("Hello.")
        assert not started.exists()
    finally:
        tmux.stop()


def test_in_tmux_typing_after_a_pause_at_the_permission_question_allows_nothing(
    tmp_path: Path, server: FakeModelServer
) -> None:
    command, work, _sessions = app_command(tmp_path, server)
    victim = work / "victim.txt"
    victim.write_text("keep me")
    server.push(openai_stream(None, tool_calls=[call("b1", "bash", {"command": "rm -f victim.txt"})]))
    server.push(openai_stream("Left it."))
    server.push(openai_stream("Tests later."))
    tmux = Tmux(f"agent-tui-perm-guard-{os.getpid()}", 80, 24)
    tmux.start(command, work)
    try:
        tmux.wait(lambda s: "new session" in s and "Send" in s, "the app, ready to type")
        tmux.type("tidy up")
        tmux.wait_text("tidy up")
        tmux.keys("Enter")
        tmux.wait_text("Allow bash?")
        time.sleep(2.5)  # the question read, a pause: then the next message typed on
        tmux.type("also run the tests afterwards")
        time.sleep(1.5)
        screen = tmux.screen()
        assert "Allow bash?" in screen, screen
        assert victim.exists()
        tmux.keys("Escape")
        screen = tmux.wait_text("also run the tests afterwards")  # the words are in the composer
        assert victim.read_text() == "keep me"
        assert "allowed" not in screen, screen
    finally:
        tmux.stop()
