"""``agent-tui --session FILE``, as pi takes it, opens FILE in the app (it opened a new session and
left FILE alone); a FILE that does not exist is one line and exit status 1."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.e2e.test_tui_e2e import app_command
from tests.support.fake_model_server import FakeModelServer
from tests.support.session_builder import Builder, assistant, user
from tests.support.tmux import Tmux

pytestmark = [pytest.mark.timeout(120), pytest.mark.slow]


def test_the_session_flag_opens_the_file_in_the_app(tmp_path: Path, server: FakeModelServer) -> None:
    b = Builder()
    b.message(user("the question kept in the file"))
    b.message(assistant("the answer kept in the file"))
    path = b.write(tmp_path / "kept.jsonl")
    command, work, _sessions = app_command(tmp_path, server)
    command = command.replace("; sleep 30", f" --session {path}; sleep 30")
    tmux = Tmux(f"agent-tui-session-flag-{os.getpid()}", 80, 24)
    tmux.start(command, work)
    try:
        screen = tmux.wait(lambda s: "Send" in s and "the answer kept in the file" in s, "the file's chat")
        assert "the question kept in the file" in screen
        assert "new session" not in screen
    finally:
        tmux.stop()


def test_a_session_flag_naming_no_file_is_one_line_and_exit_1(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere.jsonl"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AGENT_TUI_", "TEXTUAL"))}
    env["AGENT_TUI_HOME"] = str(tmp_path / "home")
    done = subprocess.run(
        [sys.executable, "-m", "agent_tui", "--session", str(missing)],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 1
    assert done.stderr.strip() == f"agent-tui: {missing}: no such session file"
    assert not missing.exists()
