"""The first message is on screen at once after Enter, with a turning spinner, while the turn is
still being prepared; the real program in tmux at 80x24, keys sent as bytes.

The agent writes the user's message only once the turn has started (the agent built, the MCP
servers started, the ``UserPromptSubmit`` hooks run): here a hook holds the turn until the test
lets it go, so no request has reached the fake model server yet, and the chat must already show
the message, the status line's spinner must turn, and once the turn goes on the message must be
in the chat once (the pending one gone) with the reply after it.
"""

from __future__ import annotations

import json
import os
import re
import sys
import time
from pathlib import Path

import pytest

from tests.support.fake_model_server import FakeModelServer, openai_stream
from tests.support.tmux import Tmux

pytestmark = [pytest.mark.timeout(150), pytest.mark.slow]

SPINNER = re.compile(r"([⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏]) streaming…")
MESSAGE = "zebra-crossing-first"


def _start(tmp: Path, server: FakeModelServer) -> Tmux:
    work = tmp / "project"
    work.mkdir()
    home = tmp / "user"
    (home / ".claude").mkdir(parents=True)
    release = tmp / "release"
    # the user's own hook (trusted): it holds every prompt until the test creates the file
    hook = {"type": "command", "command": f"while [ ! -e {release} ]; do sleep 0.05; done", "timeout": 120}
    (home / ".claude" / "settings.json").write_text(
        json.dumps({"hooks": {"UserPromptSubmit": [{"hooks": [hook]}]}})
    )
    config = tmp / "config.toml"
    config.write_text("[retry]\nbase_delay = 0.01\n")
    env = {
        "HOME": str(home),
        "AGENT_TUI_HOME": str(tmp / "home"),
        "AGENT_TUI_CONFIG": str(config),
        "OPENAI_API_KEY": "test-key",
        "AGENT_TUI_FSYNC": "never",
    }
    exports = " ".join(f"{k}={v}" for k, v in env.items())
    unset = " ".join(
        f"-u {k}" for k in os.environ if k.startswith(("ANTHROPIC_", "OPENAI_", "AGENT_TUI_", "TEXTUAL"))
    )
    tmux = Tmux(f"agent-tui-first-{os.getpid()}", 80, 24)
    tmux.start(
        f"exec env {unset} {exports} {sys.executable} -m agent_tui --provider openai --base-url"
        f" {server.openai_base_url} --model gpt-4o --session-dir {tmp / 'sessions'}",
        work,
    )
    return tmux


def _chat_shows(screen: str) -> bool:
    """The message is in the chat (the composer is empty again: its placeholder is back)."""
    return MESSAGE in screen and "Type a message" in screen


def test_the_first_message_and_a_turning_spinner_show_before_the_turn_has_started(
    tmp_path: Path, server: FakeModelServer
) -> None:
    server.push(openai_stream("the reply is here"))
    tmux = _start(tmp_path, server)
    try:
        tmux.wait_text("Send")
        tmux.type(MESSAGE)
        tmux.wait_text(MESSAGE)
        tmux.type("\r")  # Enter, as the terminal sends it
        screen = tmux.wait(_chat_shows, "the message in the chat", timeout=30)
        frames: set[str] = set()
        deadline = time.monotonic() + 30
        while len(frames) < 3:
            assert time.monotonic() < deadline, f"the spinner did not turn: {frames}; the screen:\n{screen}"
            screen = tmux.screen()
            frames.update(SPINNER.findall(screen))
            time.sleep(0.05)
        assert _chat_shows(screen), screen  # still shown while the hook holds the turn
        assert server.requests == [], "the hook should still be holding the turn"
        (tmp_path / "release").touch()
        screen = tmux.wait_text("the reply is here")
        assert screen.count(MESSAGE) == 1, screen  # the written message, the pending one gone
        assert screen.index(MESSAGE) < screen.index("the reply is here")
    finally:
        (tmp_path / "release").touch()
        tmux.stop()
    (path,) = (tmp_path / "sessions").glob("*.jsonl")
    users = [
        json.loads(line)["message"]
        for line in path.read_text().splitlines()
        if json.loads(line).get("message", {}).get("role") == "user"
    ]
    assert [u["content"][0]["text"] for u in users] == [MESSAGE]
