"""pi's flags in the app (the real program in tmux at 80x24, keys sent as bytes): ``--no-session``
writes nothing (no session file or folder, no prompt history, no library index), ``-n/--name``
names the session the app writes (pi 1.6 reads the name), ``--tools`` is what the model gets."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from tests.functional.test_cli_pi_flags import pi_read
from tests.support.fake_model_server import FakeModelServer, openai_stream
from tests.support.tmux import Tmux

pytestmark = [pytest.mark.timeout(200), pytest.mark.slow]


def _start(tmp: Path, server: FakeModelServer, name: str, *flags: str) -> Tmux:
    work = tmp / "project"
    work.mkdir(exist_ok=True)
    home = tmp / "user"
    home.mkdir(exist_ok=True)
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
    tmux = Tmux(f"agent-tui-piflags-{name}-{os.getpid()}", 80, 24)
    tmux.start(
        f"exec env {unset} {exports} {sys.executable} -m agent_tui --provider openai --base-url"
        f" {server.openai_base_url} --model gpt-4o {' '.join(flags)}",
        work,
    )
    return tmux


def _talk(tmux: Tmux, message: str, reply: str) -> None:
    tmux.wait_text("Send")
    tmux.type(message)
    tmux.wait_text(message)
    tmux.keys("Enter")
    tmux.wait_text(reply, timeout=60)


def _files(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file()) if root.exists() else []


def test_no_session_in_the_app_writes_nothing(tmp_path: Path, server: FakeModelServer) -> None:
    server.push(openai_stream("kept in memory only"))
    tmux = _start(tmp_path, server, "nosession", "--no-session", "--tools", "read,ls")
    try:
        _talk(tmux, "ephemeral hello", "kept in memory only")
    finally:
        tmux.stop()
    tools = [t["function"]["name"] for t in server.requests[-1].body.get("tools", [])]
    assert tools == ["read", "ls"]
    written = [f for f in _files(tmp_path / "home") if f != "trust.json"]
    assert written == [], written
    assert _files(tmp_path / "project") == []


def test_name_in_the_app_names_the_session_pi_reads(tmp_path: Path, server: FakeModelServer) -> None:
    server.push(openai_stream("a named reply"))
    tmux = _start(tmp_path, server, "name", "-n", "'Refactor auth'", "--session-dir", str(tmp_path / "s"))
    try:
        _talk(tmux, "named hello", "a named reply")
    finally:
        tmux.stop()
    (path,) = (tmp_path / "s").glob("*.jsonl")
    infos = [json.loads(line) for line in path.read_text().splitlines() if '"session_info"' in line]
    assert [i["name"] for i in infos] == ["Refactor auth"]
    (read,) = pi_read(path)
    assert read["name"] == "Refactor auth"
    assert read["messages"][-1]["role"] == "assistant"


def test_session_id_and_fork_open_in_the_app(tmp_path: Path, server: FakeModelServer) -> None:
    sessions = tmp_path / "s"
    server.push(openai_stream("the first reply"), openai_stream("a reply in the copy"))
    tmux = _start(tmp_path, server, "first", "--session-dir", str(sessions))
    try:
        _talk(tmux, "remember zebra", "the first reply")
    finally:
        tmux.stop()
    (source,) = sessions.glob("*.jsonl")
    session_id = json.loads(source.read_text().splitlines()[0])["id"]
    # --session with a prefix of the id opens it (its conversation is on screen)
    tmux = _start(tmp_path, server, "byid", "--session-dir", str(sessions), "--session", session_id[:8])
    try:
        tmux.wait_text("remember zebra")
    finally:
        tmux.stop()
    assert list(sessions.glob("*.jsonl")) == [source]
    before = source.read_bytes()
    # --fork copies it into a new file and continues there
    tmux = _start(tmp_path, server, "fork", "--session-dir", str(sessions), "--fork", session_id[:8])
    try:
        tmux.wait_text("remember zebra")
        _talk(tmux, "and a giraffe", "a reply in the copy")
    finally:
        tmux.stop()
    assert source.read_bytes() == before
    (copy,) = [p for p in sessions.glob("*.jsonl") if p != source]
    src, forked = pi_read(source, copy)
    assert forked["parentSession"] == str(source)
    assert forked["ids"][: len(src["ids"])] == src["ids"]
    assert forked["messages"][-1]["role"] == "assistant"
