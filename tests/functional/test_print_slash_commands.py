"""``-p "/compact"`` and the other app commands that need no screen run on the session core in
print and JSON mode, as in the app and over ACP (they were sent to the model as text)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.fake_model_server import FakeModelServer, anthropic_stream, text
from tests.support.print_env import Env


def _session(env: Env, server: FakeModelServer) -> Path:
    for turn in range(2):
        server.push(anthropic_stream(text(f"answer {turn}")))
        # the first long enough that its summary is shorter (one that grows the context is refused)
        question = f"question {turn}" + (" context" * 300 if turn == 0 else "")
        args = ["-p", question] + (["--session", str(env.sessions()[0])] if turn else [])
        done = env.run(*args)
        assert done.returncode == 0, done.stderr
    (path,) = env.sessions()
    return path


def test_print_mode_compacts_on_slash_compact(tmp_path: Path, server: FakeModelServer) -> None:
    env = Env(tmp_path, server)
    path = _session(env, server)
    server.push(anthropic_stream(text("## Goal\nthe two questions")))
    done = env.run("-p", "/compact the questions", "--session", str(path))
    assert done.returncode == 0, done.stderr
    assert "Additional focus: the questions" in json.dumps(server.requests[-1].body)
    assert env.entries(path)[-1]["type"] == "compaction"
    # nothing was sent as a user message
    assert not any("/compact" in t for t in env.user_texts())


def test_print_mode_answers_slash_session_and_rename_at_once(tmp_path: Path, server: FakeModelServer) -> None:
    env = Env(tmp_path, server)
    path = _session(env, server)
    requests = len(server.requests)
    done = env.run("-p", "/rename release work", "--session", str(path))
    assert done.returncode == 0 and done.stdout.strip() == "Session named release work", done.stderr
    info = env.run("-p", "/session", "--session", str(path))
    assert info.returncode == 0 and str(path) in info.stdout
    # the figures of the session core's stats(), as the app's /session and RPC show them
    assert "Messages: 2 user, 2 assistant" in info.stdout and "cost of the whole file" in info.stdout
    assert len(server.requests) == requests  # no model call


def test_json_mode_streams_the_compaction_records(tmp_path: Path, server: FakeModelServer) -> None:
    env = Env(tmp_path, server)
    path = _session(env, server)
    server.push(anthropic_stream(text("## Goal\nthe two questions")))
    done = env.run("--mode", "json", "-p", "/compact", "--session", str(path))
    assert done.returncode == 0, done.stderr
    types = [json.loads(line).get("type") for line in done.stdout.splitlines()]
    assert "compaction_start" in types and "compaction_end" in types, types
