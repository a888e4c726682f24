"""``agent-tui`` with no ``-p`` and a stdin that is not a terminal: what is piped in is the prompt
of a print-mode run (pi's rule); nothing piped (/dev/null) is one line and exit 2, where the app
used to start and spin on a stdin it could not read (2.7 s of CPU in 6 s)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.fake_model_server import FakeModelServer, anthropic_stream, text
from tests.support.print_env import Env


@pytest.mark.slow  # agent-tui (or Python) as a process: integration by nature
def test_nothing_piped_is_one_line_and_exit_2(tmp_path: Path, server: FakeModelServer) -> None:
    env = Env(tmp_path, server)
    done = subprocess.run(
        [sys.executable, "-m", "agent_tui"],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        cwd=env.work,
        env=env.env,
        timeout=30,
    )
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and "stdin is not a terminal" in done.stderr
    assert not server.requests and not env.sessions()


def test_what_is_piped_in_is_the_prompt(tmp_path: Path, server: FakeModelServer) -> None:
    env = Env(tmp_path, server)
    server.push(anthropic_stream(text("piped answer")))
    done = subprocess.run(
        [sys.executable, "-m", "agent_tui"],
        input="what does this do?\n",
        capture_output=True,
        text=True,
        cwd=env.work,
        env=env.env,
        timeout=30,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "piped answer"
    assert env.user_texts() == ["what does this do?"]
