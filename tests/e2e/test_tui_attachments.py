"""``@`` attachments in the app: a FIFO is refused in one notice and the message still goes (it froze
the app for over 30 s, Ctrl+Q ignored), and files are read off the event loop: keys typed while a
slow attachment is read reach the composer, and messages sent meanwhile go after it, in order."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from agent_tui.agent import attachments
from agent_tui.tui import composer_actions
from tests.support.pilot import notices, wait_for
from tests.support.tui_fixtures import SIZE, ScriptedFactory, make_app

pytestmark = [pytest.mark.timeout(40), pytest.mark.slow]


async def test_at_a_fifo_is_one_notice_and_the_message_is_sent(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    os.mkfifo(project / "pipe")
    factory = ScriptedFactory(reply="Done.")
    app = make_app(tmp_path, None, agent_factory=factory)
    # where the open blocks (it did, the whole app with it), a writer lets it go after 10 s
    release = threading.Timer(10, lambda: os.close(os.open(project / "pipe", os.O_WRONLY | os.O_NONBLOCK)))
    release.start()
    try:
        async with app.run_test(size=SIZE) as pilot:
            started = time.monotonic()
            app.composer.set_text("what is @pipe")
            await pilot.press("enter")
            await wait_for(pilot, lambda: bool(factory.turns and factory.turns[0].prompts), "the prompt")
            assert time.monotonic() - started < 5
            assert factory.turns[0].prompts == ["what is @pipe"]  # sent as typed, nothing attached
            refusals = [n for n in notices(app) if "pipe" in n]
            assert refusals == ["@pipe: a FIFO (named pipe), not a regular file: not attached"]
            await wait_for(pilot, lambda: not app.busy, "the reply")
            assert app.composer.text == ""
    finally:
        release.cancel()


async def test_keys_are_answered_while_an_attachment_is_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "notes.txt").write_text("the meeting moved\n")
    done = threading.Event()

    def slow_compose(*args: Any, **kwargs: Any) -> attachments.Composed:
        if "@notes.txt" in args[0]:
            time.sleep(1.5)  # a slow disk, a network folder
        try:
            return attachments.compose(*args, **kwargs)
        finally:
            done.set()

    monkeypatch.setattr(composer_actions, "compose", slow_compose)
    factory = ScriptedFactory(reply="Done.")
    app = make_app(tmp_path, None, agent_factory=factory)
    async with app.run_test(size=SIZE) as pilot:
        app.composer.set_text("read @notes.txt")
        await pilot.press("enter")
        await pilot.press("x", "y")
        assert "xy" in app.composer.text and not done.is_set()  # typed while the file was read
        await wait_for(pilot, lambda: bool(factory.turns and factory.turns[0].prompts), "the prompt")
        prompt = factory.turns[0].prompts[0]
        assert isinstance(prompt, list) and prompt[0]["text"] == "read @notes.txt"
        assert "the meeting moved" in prompt[1]["text"]
        await wait_for(pilot, lambda: not app.busy, "the reply")
        assert app.composer.text == "xy"  # what was typed after the Enter stays
