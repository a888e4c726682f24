"""The real program in tmux at 80x24: while the permission question waits for the user, the status
line says so (the question covers the chat, so the status line is what is left to read), and says
what runs again once it is answered."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.e2e.test_tui_e2e import app_command
from tests.support.fake_model_server import FakeModelServer, call, openai_stream
from tests.support.tmux import Tmux

pytestmark = [pytest.mark.timeout(120), pytest.mark.slow]


def status_line(screen: str) -> str:
    return screen.rstrip("\n").splitlines()[-2]  # above the footer


def test_the_status_line_says_waiting_for_approval_while_the_question_is_open(
    tmp_path: Path, server: FakeModelServer
) -> None:
    command, work, _sessions = app_command(tmp_path, server)
    server.push(openai_stream(None, tool_calls=[call("b1", "bash", {"command": "ls -la"})]))
    server.push(openai_stream("Listed the files."))
    tmux = Tmux(f"agent-tui-approval-{os.getpid()}", 80, 24)
    tmux.start(command, work)
    try:
        tmux.wait(lambda s: "new session" in s and "Send" in s, "the app, ready to type")
        tmux.type("list the files")
        tmux.wait_text("list the files")
        tmux.keys("Enter")
        screen = tmux.wait(
            lambda s: "Allow bash?" in s and "waiting for approval" in status_line(s), "the question"
        )
        assert "streaming" not in status_line(screen), screen
        # an allow pressed in the question's first half second, or as typing goes on (a key less
        # than a second after the one before), is not taken
        for _ in range(40):
            tmux.keys("1")
            try:
                tmux.wait(lambda s: "Allow bash?" not in s, "the answer taken", timeout=1.5)
                break
            except AssertionError:
                continue
        screen = tmux.wait_text("Listed the files.")
        assert "waiting for approval" not in status_line(screen), screen
    finally:
        tmux.stop()
