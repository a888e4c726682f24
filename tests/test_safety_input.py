"""Unusual bytes in and out: lone surrogates pi writes, names that are not UTF-8, odd encodings."""

from __future__ import annotations

import json
import os
from pathlib import Path

import msgspec
import pytest

from agent_tui.library.export import export_bytes
from agent_tui.projection.context import project
from agent_tui.projection.request import anthropic_request, openai_request, prepare
from agent_tui.store.index import SessionIndex
from agent_tui.store.reader import read_file
from agent_tui.store.session import Session
from tests.fake_model_server import FakeModelServer, anthropic_stream, text, tool_use
from tests.session_builder import Builder, assistant, user
from tests.test_print_mode import Env

pytestmark = pytest.mark.timeout(60)


@pytest.fixture
def env(tmp_path: Path, server: FakeModelServer) -> Env:
    return Env(tmp_path, server)


def load(path: Path) -> SessionIndex:
    return SessionIndex(read_file(path), str(path))


# -- item 8: lone escaped surrogates -----------------------------------------------------------


def _pi_file_with_a_cut_emoji(path: Path) -> Path:
    """Five messages; the third was cut inside an emoji, as pi writes it (``"\\ud83d"`` alone)."""
    b = Builder()
    b.message(user("first"))
    b.message(assistant("second"))
    b.message(user("cut here: \ud83d"))  # json.dumps writes the lone surrogate as pi does: \ud83d
    b.message(assistant("fourth \udc00 low alone, \\ud83d escaped backslash, \U0001f600 a real pair"))
    b.message(user("fifth"))
    text = b.text()
    assert '"cut here: \\ud83d"' in text
    path.write_text(text)
    return path


def test_lone_escaped_surrogates_load_and_keep_the_whole_path(tmp_path: Path) -> None:
    path = _pi_file_with_a_cut_emoji(tmp_path / "pi.jsonl")
    loaded = read_file(path)
    assert loaded.warnings == []
    index = SessionIndex(loaded, str(path))
    projection = project(index)
    messages = [m.message for m in projection.messages]
    assert len(messages) == 5
    assert messages[2]["content"] == "cut here: \ufffd"
    fourth = messages[3]["content"][0]["text"]
    assert fourth == "fourth \ufffd low alone, \\ud83d escaped backslash, \U0001f600 a real pair"
    # what goes to the SDKs encodes; exports and a fork write without error
    prepared = prepare(projection.messages)
    for body in (
        anthropic_request(prepared, model="claude-sonnet-4-5"),
        openai_request(prepared, model="gpt-4.1"),
    ):
        msgspec.json.encode(body).decode("utf-8")
        json.dumps(body, ensure_ascii=False).encode("utf-8")
    for fmt in ("md", "html", "jsonl"):
        assert export_bytes(index, fmt, source=path)
    with Session.open(path) as session:
        out = session.fork(None, tmp_path / "fork.jsonl")
    fork = load(out)
    assert len(project(fork).messages) == 5


def test_appending_a_lone_surrogate_writes_u_fffd_and_memory_equals_the_file(tmp_path: Path) -> None:
    session = Session.create(tmp_path, str(tmp_path))
    with session:
        session.append_message(user("ok"))
        entry = session.append_message(assistant("reply cut \ud83d and a bad name bad\udcffname"))
        in_memory = entry.data["message"]["content"][0]["text"]
    assert in_memory == "reply cut \ufffd and a bad name bad\ufffdname"
    reloaded = load(session.path)
    assert reloaded.by_id[entry.id].data["message"]["content"][0]["text"] == in_memory


def test_a_file_name_that_is_not_utf8_does_not_crash_ls_find_grep(env: Env, server: FakeModelServer) -> None:
    bad = os.fsencode(env.work) + b"/bad\xffname.txt"
    with open(bad, "wb") as f:
        f.write(b"needle\n")
    (env.work / "good.txt").write_text("needle\n")
    server.push(
        anthropic_stream(
            tool_use("t1", "ls", {}),
            tool_use("t2", "find", {"pattern": "*.txt"}),
            tool_use("t3", "grep", {"pattern": "needle"}),
        ),
        anthropic_stream(text("Listed.")),
    )
    result = env.run("--permissions", "read-only", "-p", "list")
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    assert result.stdout == "Listed.\n"
    (session,) = env.sessions()
    results = [
        e["message"]["content"][0]["text"]
        for e in env.entries(session)
        if e.get("message", {}).get("role") == "toolResult"
    ]
    assert len(results) == 3
    for output in results:
        assert "good.txt" in output
        assert "bad\ufffdname.txt" in output
    sent = json.dumps(server.requests[1].body, ensure_ascii=False)
    assert sent.count("bad\ufffdname.txt") == 3


def test_a_model_reply_with_a_lone_surrogate_is_kept(env: Env, server: FakeModelServer) -> None:
    server.push(anthropic_stream(text("an emoji cut \ud83d in two")))
    result = env.run("-p", "hi")
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    assert "an emoji cut" in result.stdout
    (session,) = env.sessions()
    replies = [
        e["message"]["content"][0]["text"]
        for e in env.entries(session)
        if e.get("message", {}).get("role") == "assistant"
    ]
    assert replies == ["an emoji cut \ufffd in two"]
