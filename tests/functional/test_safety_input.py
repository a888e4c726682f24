"""Unusual bytes in and out: lone surrogates pi writes, names that are not UTF-8, odd encodings."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import msgspec
import pytest

from agent_tui.library.export import export_bytes
from agent_tui.projection.context import project
from agent_tui.projection.request import prepare
from agent_tui.projection.wire.anthropic_messages import anthropic_request
from agent_tui.projection.wire.openai_completions import openai_request
from agent_tui.store.index import SessionIndex
from agent_tui.store.reader import read_file
from agent_tui.store.session import Session
from tests.support.fake_model_server import FakeModelServer, anthropic_stream, text, tool_use
from tests.support.print_env import Env
from tests.support.session_builder import Builder, assistant, user

pytestmark = pytest.mark.timeout(60)


@pytest.fixture
def env(tmp_path: Path, server: FakeModelServer) -> Env:
    return Env(tmp_path, server)


def load(path: Path) -> SessionIndex:
    return SessionIndex(read_file(path), str(path))


# -- lone escaped surrogates -----------------------------------------------------------


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


# -- a damaged search index, a full disk, private WAL files ----------------------------


def _library_folder(root: Path, sessions: int = 30) -> Path:
    folder = root / "sessions"
    folder.mkdir()
    for i in range(sessions):
        b = Builder()
        b.lines[0]["id"] = f"s{i}"
        for j in range(10):
            b.message(user(f"word{i} apple {j} " + "x" * 200))
            b.message(assistant("banana reply " * 30))
        b.write(folder / f"s{i}.jsonl")
    return folder


def _search_cli(folder: Path, home: Path, *words: str, room: int | None = None) -> Any:
    import subprocess
    import sys

    from tests.support.limits import limit_file_size

    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENT_TUI_")}
    env["AGENT_TUI_HOME"] = str(home)
    return subprocess.run(
        [sys.executable, "-m", "agent_tui", "sessions", "--session-dir", str(folder), "--search", *words],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
        preexec_fn=(lambda: limit_file_size(room)) if room is not None else None,
    )


@pytest.mark.parametrize("where", ["header", "pages"])
def test_a_damaged_search_index_is_rebuilt_with_one_line(tmp_path: Path, where: str) -> None:
    folder = _library_folder(tmp_path)
    home = tmp_path / "home"
    first = _search_cli(folder, home, "word7")
    assert first.returncode == 0, first.stderr
    (db,) = (home / "index").glob("*.sqlite3")
    with open(db, "r+b") as f:  # damage it: its header, or pages in the middle
        f.seek(0 if where == "header" else 4096 * 3)
        f.write(b"\xde\xad" * (200 if where == "header" else 6000))
    damaged = _search_cli(folder, home, "word7")
    assert damaged.returncode == 0, damaged.stderr
    assert "Traceback" not in damaged.stderr
    assert damaged.stderr.strip().splitlines() == [
        f"agent-tui: the search index {db} was damaged: rebuilt it"
    ]
    assert "s7.jsonl" in damaged.stdout
    again = _search_cli(folder, home, "word7")
    assert again.returncode == 0 and again.stderr == ""


def test_a_damaged_index_in_the_library_gives_its_sessions_back(tmp_path: Path) -> None:
    from agent_tui.library.search import Library

    folder = _library_folder(tmp_path, sessions=5)
    db = tmp_path / "index.sqlite3"
    with Library([folder], db_path=db) as library:
        library.refresh()
        assert len(library.sessions()) == 5
    with open(db, "r+b") as f:
        f.seek(4096 * 3)
        f.write(b"\xde\xad" * 6000)
    with Library([folder], db_path=db) as library:
        assert len(library.sessions()) == 5  # what the picker lists first
        assert [h.session.path for h in library.search("word3")] == [str(folder / "s3.jsonl")]
        assert len(library.notices) == 1 and "damaged" in library.notices[0]


def test_a_full_disk_under_the_search_index_is_one_line(tmp_path: Path) -> None:
    folder = _library_folder(tmp_path)
    full = _search_cli(folder, tmp_path / "home", "word7", room=20_000)
    assert full.returncode == 1
    assert "Traceback" not in full.stderr
    lines = full.stderr.strip().splitlines()
    assert len(lines) == 1 and "search index" in lines[0] and "disk full" in lines[0], full.stderr


def test_the_index_and_its_wal_files_are_private(tmp_path: Path) -> None:
    import stat

    from agent_tui.library.search import Library

    folder = _library_folder(tmp_path, sessions=3)
    db = tmp_path / "index" / "library.sqlite3"
    old_umask = os.umask(0o022)
    try:
        with Library([folder], db_path=db) as library:
            library.refresh()
            files = sorted(db.parent.iterdir())
            assert {p.name for p in files} >= {
                "library.sqlite3",
                "library.sqlite3-wal",
                "library.sqlite3-shm",
            }
            for path in files:
                assert stat.S_IMODE(path.stat().st_mode) == 0o600, path
    finally:
        os.umask(old_umask)


# -- BOM, CR-only, UTF-16, a newer version, bash's full-output files ----------------------


def test_a_utf8_bom_is_accepted_and_appends_still_line_up(tmp_path: Path) -> None:
    b = Builder()
    b.message(user("hello"))
    path = tmp_path / "bom.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + b.text().encode())
    loaded = read_file(path)
    assert loaded.warnings == [] and loaded.header["id"] == "s1" and len(loaded.entries) == 1
    with Session.open(path) as session:
        session.append_message(assistant("hi"))
    assert project(load(path)).messages[0].message["content"] == "hello"
    assert len(load(path).entries) == 2


@pytest.mark.parametrize(
    ("data", "says"),
    [
        (lambda text: text.replace("\n", "\r").encode(), "CR only"),
        (lambda text: text.encode("utf-16"), "UTF-16"),
        (lambda text: text.encode("utf-16-le"), "UTF-16"),
        (lambda text: b"", "empty file"),
    ],
)
def test_files_that_are_not_newline_utf8_say_what_they_are(tmp_path: Path, data: Any, says: str) -> None:
    import subprocess
    import sys

    b = Builder()
    b.message(user("hello"))
    path = tmp_path / "odd.jsonl"
    path.write_bytes(data(b.text()))
    result = subprocess.run(
        [sys.executable, "-m", "agent_tui", "tree", str(path)], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and says in lines[0], result.stderr
    if says != "empty file":
        assert "empty" not in lines[0]


def test_a_newer_format_version_warns_and_opens_read_only(tmp_path: Path) -> None:
    from agent_tui.store.errors import ReadOnlyError

    b = Builder()
    b.lines[0]["version"] = 99
    b.message(user("from the future"))
    path = b.write(tmp_path / "v99.jsonl")
    loaded = read_file(path)
    assert any("version 99" in w.message and "read-only" in w.message for w in loaded.warnings)
    size = path.stat().st_size
    with Session.open(path) as session:
        assert session.read_only and "version 99" in (session.read_only_reason or "")
        with pytest.raises(ReadOnlyError):
            session.append_message(user("no"))
    assert path.stat().st_size == size


async def test_bash_full_output_files_are_kept_in_a_private_capped_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import stat
    import tempfile
    import time

    from agent_tui.agent.tools import bash
    from agent_tui.agent.tools.base import ToolContext

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # not the folder real runs share
    folder = bash.output_folder()
    assert folder is not None and stat.S_IMODE(folder.stat().st_mode) == 0o700
    old = []
    for i in range(bash.KEEP_OUTPUT_FILES + 20):
        p = folder / f"agent-tui-bash-old{i:04d}-{os.getpid()}.log"
        p.write_text("old")
        os.utime(p, (time.time() - 100_000 - i, time.time() - 100_000 - i))
        old.append(p)
    ctx = ToolContext(cwd=str(tmp_path))
    outputs = []
    for _ in range(2):
        result = await bash.BashTool().execute({"command": "seq 1 30000"}, ctx)
        assert result.details is not None
        outputs.append(Path(result.details["fullOutputPath"]))
    try:
        for output in outputs:
            assert output.parent == folder and output.is_file()  # valid while the session runs
            assert output.read_text().splitlines()[-1] == "30000"
        remaining = [p for p in folder.iterdir() if p.name.startswith("agent-tui-bash-")]
        assert len(remaining) <= bash.KEEP_OUTPUT_FILES + 2
        assert not old[-1].exists() and old[0].exists()  # the oldest went first
        # a file of this process is never pruned, however many come after it
        assert bash.prune_outputs(folder, keep=0) >= 1
        assert all(output.exists() for output in outputs)
    finally:
        for p in [*old, *outputs]:
            p.unlink(missing_ok=True)
