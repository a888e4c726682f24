"""``agent-tui compact FILE --review``: the model's summary is printed and edited in ``$EDITOR``
before the compaction entry is appended; an editor that fails appends nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.fake_model_server import FakeModelServer, anthropic_stream, text
from tests.support.print_env import Env

pytestmark = pytest.mark.slow  # runs the CLI in a subprocess

SUMMARY = "## Goal\nfix the parser"


def _session(env: Env, server: FakeModelServer) -> Path:
    server.push(anthropic_stream(text("hello to you")), anthropic_stream(text("fine, thanks")))
    assert env.run("-p", "hello").returncode == 0
    (session,) = env.sessions()
    assert env.run("-p", "how are you", "--continue").returncode == 0
    return session


def test_review_prints_the_summary_and_appends_the_edited_one(
    server: FakeModelServer, tmp_path: Path
) -> None:
    env = Env(tmp_path, server)
    session = _session(env, server)
    server.push(anthropic_stream(text(SUMMARY)))
    out = env.run(
        "compact", str(session), "--review", env={**env.env, "VISUAL": "", "EDITOR": "sed -i s/fix/REWRITE/"}
    )
    assert out.returncode == 0, out.stderr
    assert SUMMARY in out.stdout and "compacted: entry" in out.stdout
    # two short turns: the summary is longer than what it replaces; reviewed, it applies, said so
    assert "would make the context larger (≈" in out.stderr and "applied anyway" in out.stderr
    entry = env.entries(session)[-1]
    assert entry["type"] == "compaction"
    assert entry["summary"].startswith("## Goal\nREWRITE the parser")
    users = [e for e in env.entries(session) if e.get("type") == "message" and e["message"]["role"] == "user"]
    assert entry["firstKeptEntryId"] == users[-1]["id"] and entry["tokensBefore"] > 0  # the latest turn stays


def test_review_with_a_failing_editor_appends_nothing(server: FakeModelServer, tmp_path: Path) -> None:
    env = Env(tmp_path, server)
    session = _session(env, server)
    before = session.read_bytes()
    server.push(anthropic_stream(text(SUMMARY)))
    out = env.run("compact", str(session), "--review", env={**env.env, "VISUAL": "", "EDITOR": "false"})
    assert out.returncode == 1
    assert "nothing was appended" in out.stderr
    assert session.read_bytes() == before
