"""Toad, a real ACP client, runs ``agent-tui acp`` as its agent in tmux: a prompt typed into Toad
reaches the fake model through agent-tui, the streamed reply and the tool call appear on Toad's
screen, a gated call is answered in Toad's own permission dialog, and the conversation is an
agent-tui session file."""

from __future__ import annotations

import json
import os
import shlex
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.support.fake_model_server import FakeModelServer, anthropic_stream, text, tool_use
from tests.support.print_env import KEY
from tests.support.tmux import Tmux
from tests.support.toad import toad

# Toad's first start compiles its modules: minutes on a loaded machine the first time.
pytestmark = [pytest.mark.timeout(600), pytest.mark.slow]


def start_toad(tmp_path: Path, server: FakeModelServer) -> tuple[Tmux, Path, Path]:
    """Toad on ``agent-tui acp`` (the fake server as its model) in tmux, connected; its project
    folder and agent-tui's data dir."""
    command = toad()
    work = tmp_path / "project"
    work.mkdir()
    home = tmp_path / "home"
    config = tmp_path / "config.toml"
    config.write_text("[retry]\nbase_delay = 0.01\n")
    env = {
        "AGENT_TUI_HOME": str(home / "agent-tui"),
        "AGENT_TUI_CONFIG": str(config),
        "ANTHROPIC_API_KEY": KEY,
        "ANTHROPIC_BASE_URL": server.anthropic_base_url,
        # Toad's own settings, database and logs stay in the test's folder
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_DATA_HOME": str(home / ".local" / "share"),
        "XDG_STATE_HOME": str(home / ".local" / "state"),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "TERM": "xterm-256color",
        "COLUMNS": "120",
        "LINES": "36",
    }
    exports = " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items())
    unset = " ".join(
        f"-u {k}" for k in os.environ if k.startswith(("ANTHROPIC_", "OPENAI_", "AGENT_TUI_", "TEXTUAL"))
    )
    agent = f"{shlex.quote(sys.executable)} -m agent_tui acp"
    tmux = Tmux(f"agent-tui-toad-{os.getpid()}-{tmp_path.name}", 120, 36)
    tmux.start(
        f"env {unset} {exports} {shlex.quote(str(command))} acp {shlex.quote(agent)} {work}; sleep 60", work
    )
    try:
        tmux.wait(lambda s: "connected" in s, "Toad connected to agent-tui", 240)
    except BaseException:
        tmux.stop()
        raise
    return tmux, work, home / "agent-tui"


def session_entries(data_dir: Path) -> list[dict[str, Any]]:
    (path,) = sorted(data_dir.rglob("*.jsonl"))
    return [json.loads(line) for line in path.read_text().splitlines()[1:]]


def test_toad_runs_agent_tui_acp_and_shows_the_streamed_reply(
    tmp_path: Path, server: FakeModelServer
) -> None:
    server.push(
        anthropic_stream(
            text("Let me read your notes.\n"), tool_use("toolu_t", "read", {"path": "notes.txt"})
        ),
        anthropic_stream(text("Your notes say the meeting moved to Thursday, streamed through ACP.")),
    )
    tmux, work, data_dir = start_toad(tmp_path, server)
    (work / "notes.txt").write_text("the meeting moved to thursday\n")
    try:
        tmux.type("what do my notes say?")
        tmux.wait_text("what do my notes say?")
        tmux.keys("Enter")
        screen = tmux.wait_text("streamed through ACP.", 120)
        assert "Your notes say the meeting moved to Thursday," in screen
        assert "Let me read your notes." in screen
        assert "notes.txt" in screen  # the read call, as Toad shows a tool call
    finally:
        tmux.stop()
    # What Toad sent reached the model as the user's message, and the turn is an agent-tui session.
    assert server.requests[0].body["messages"][-1]["content"][0]["text"] == "what do my notes say?"
    messages = [e["message"] for e in session_entries(data_dir) if e["type"] == "message"]
    assert [m["role"] for m in messages if m["role"] != "system"] == [
        "user",
        "assistant",
        "toolResult",
        "assistant",
    ]
    assert "thursday" in messages[-2]["content"][0]["text"]


def test_a_gated_command_is_answered_in_toads_permission_dialog(
    tmp_path: Path, server: FakeModelServer
) -> None:
    server.push(
        anthropic_stream(
            text("Running it.\n"), tool_use("toolu_p", "bash", {"command": "echo toad-allowed-this"})
        ),
        anthropic_stream(text("The command printed what Toad allowed.")),
    )
    tmux, _work, data_dir = start_toad(tmp_path, server)
    try:
        tmux.type("run the echo")
        tmux.wait_text("run the echo")
        tmux.keys("Enter")
        dialog = tmux.wait_text("Allow for this session", 120)  # Toad's dialog, with agent-tui's options
        assert "Allow once" in dialog and "Deny" in dialog and "(runs a shell command)" in dialog
        tmux.keys("a")  # Toad's key for "allow once"
        tmux.wait_text("The command printed what Toad allowed.", 120)
    finally:
        tmux.stop()
    entries = session_entries(data_dir)
    (record,) = [
        e["data"] for e in entries if e["type"] == "custom" and e["customType"] == "agent-tui.permission"
    ]
    assert record["decision"] == "allow-once" and record["toolCallId"] == "toolu_p"
    (result,) = [
        e["message"] for e in entries if e["type"] == "message" and e["message"]["role"] == "toolResult"
    ]
    assert "toad-allowed-this" in result["content"][0]["text"] and not result["isError"]
