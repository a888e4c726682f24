"""The store: exclusive creation, append-only writes, the writer lock, tolerant loading."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from agent_tui.store.errors import (
    ConcurrentChangeError,
    EntryNotFoundError,
    NotASessionError,
    ReadOnlyError,
    SessionLockedError,
    StoreError,
)
from agent_tui.store.index import SessionIndex
from agent_tui.store.reader import parse_session, read_file
from agent_tui.store.session import Session
from agent_tui.store.writer import FsyncPolicy
from tests.support.session_builder import Builder, assistant, header, tool_result, user


def load(path: Path) -> SessionIndex:
    return SessionIndex(read_file(path), str(path))


def test_create_is_exclusive_and_private(tmp_path: Path) -> None:
    session = Session.create(tmp_path, "/tmp")
    session.append_message(user("hi"))
    session.close()
    assert oct(session.path.stat().st_mode & 0o777) == "0o600"
    before = session.path.read_bytes()
    with pytest.raises(StoreError, match="already exists"):
        Session.create(tmp_path, "/tmp", path=session.path)
    assert session.path.read_bytes() == before


def test_append_chains_entries_and_roundtrips(tmp_path: Path) -> None:
    with Session.create(tmp_path, tmp_path) as s:
        a = s.append_message(user("one"))
        b = s.append_message(assistant("two"))
        c = s.append_message(user("three"))
    index = load(s.path)
    assert [e.id for e in index.entries] == [a.id, b.id, c.id]
    assert index.by_id[b.id].parent_id == a.id and index.by_id[c.id].parent_id == b.id
    assert index.leaf_id == c.id
    assert index.header["version"] == 3 and index.header["cwd"] == str(tmp_path.resolve())
    lines = s.path.read_text().splitlines()
    assert all(json.loads(line) for line in lines) and len(lines) == 4
    assert json.loads(lines[1])["type"] == "message"  # type first, as pi writes


@pytest.mark.slow  # agent-tui (or Python) as a process: integration by nature
def test_second_writer_is_refused_and_can_read(tmp_path: Path) -> None:
    with Session.create(tmp_path, tmp_path) as s:
        s.append_message(user("hi"))
        code = (
            "import sys\n"
            "from agent_tui.store.session import Session\n"
            "from agent_tui.store.errors import SessionLockedError\n"
            "try:\n"
            f"    Session.open({str(s.path)!r})\n"
            "except SessionLockedError as e:\n"
            "    print('LOCKED', e)\n"
            f"ro = Session.open({str(s.path)!r}, write=False)\n"
            "print('READ', len(ro.index))\n"
        )
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
        assert "LOCKED" in out and "another agent-tui process" in out
        assert "READ 1" in out
    # once closed, the lock is free again
    with Session.open(s.path) as again:
        again.append_message(user("more"))


def test_same_process_second_writer_is_refused(tmp_path: Path) -> None:
    with Session.create(tmp_path, tmp_path) as s, pytest.raises(SessionLockedError):
        Session.open(s.path)


def test_read_only_session_refuses_appends(tmp_path: Path) -> None:
    with Session.create(tmp_path, tmp_path) as s:
        s.append_message(user("hi"))
    ro = Session.open(s.path, write=False)
    with pytest.raises(ReadOnlyError):
        ro.append_message(user("no"))


def test_change_behind_our_back_is_detected(tmp_path: Path) -> None:
    with Session.create(tmp_path, tmp_path) as s:
        s.append_message(user("hi"))
        with open(s.path, "ab") as f:  # another program appends (pi does not lock)
            f.write(
                b'{"type":"label","id":"zz","parentId":null,"timestamp":"t","targetId":"x","label":"y"}\n'
            )
        size = s.path.stat().st_size
        with pytest.raises(ConcurrentChangeError, match="changed on disk"):
            s.append_message(user("lost?"))
        assert s.path.stat().st_size == size


def test_torn_tail_loads_with_warning_and_next_append_starts_a_new_line(tmp_path: Path) -> None:
    b = Builder()
    b.message(user("hello"))
    b.message(assistant("world"))
    path = tmp_path / "s.jsonl"
    text = b.text() + '{"type":"message","id":"torn","parentId":"e0002","timestamp":"x","message":{"role":"us'
    path.write_text(text)
    index = load(path)
    assert [e.id for e in index.entries] == ["e0001", "e0002"]
    assert any("torn last line" in str(w) for w in index.warnings)
    with Session.open(path) as s:
        new = s.append_message(user("after the tear"))
    raw = path.read_text()
    assert raw.startswith(text)  # nothing before was touched
    reloaded = load(path)
    assert reloaded.leaf_id == new.id and reloaded.by_id[new.id].parent_id == "e0002"
    assert len(reloaded.warnings) == 1  # still the torn line, now a malformed middle line


def test_malformed_unknown_and_broken_lines_are_kept_and_reported(tmp_path: Path) -> None:
    b = Builder()
    b.message(user("one"))
    lines = b.text().splitlines()
    lines.insert(2, "this is not json")
    lines.insert(3, "[1,2,3]")
    lines.insert(
        4, json.dumps({"type": "hologram", "id": "h1", "parentId": "e0001", "timestamp": "t", "beam": [1, 2]})
    )
    lines.insert(5, json.dumps({"type": "message", "parentId": "e0001"}))  # no id
    lines.insert(6, "")
    path = tmp_path / "s.jsonl"
    path.write_text("\n".join(lines) + "\n")
    index = load(path)
    messages = [str(w) for w in index.warnings]
    assert any("line 3: malformed JSON" in m for m in messages)
    assert any("line 4:" in m for m in messages)
    assert any("unknown type 'hologram'" in m for m in messages)
    assert any("line 6:" in m and "no string 'id'" in m for m in messages)
    assert index.by_id["h1"].data["beam"] == [1, 2]  # unknown entry kept whole
    assert index.leaf_id == "h1"


def test_unknown_fields_survive_a_fork(tmp_path: Path) -> None:
    b = Builder()
    b.message({**user("one"), "futureField": {"x": 1}}, parent=None)
    b.add("hologram", beam=[1, 2, 3])
    path = b.write(tmp_path / "s.jsonl")
    session = Session.open(path, write=False)
    out = session.fork(None, tmp_path / "fork.jsonl")
    forked = load(out)
    assert forked.by_id["e0001"].data["message"]["futureField"] == {"x": 1}
    assert forked.by_id["e0002"].data["beam"] == [1, 2, 3]


def test_duplicate_ids_dangling_parents_and_cycles_load(tmp_path: Path) -> None:
    b = Builder()
    b.message(user("root"), parent=None)  # e0001
    b.message(assistant("a"))  # e0002
    lines = b.lines
    lines.append(
        {"type": "message", "id": "e0002", "parentId": "e0001", "timestamp": "t", "message": assistant("dup")}
    )
    lines.append(
        {
            "type": "message",
            "id": "orphan",
            "parentId": "missing",
            "timestamp": "t",
            "message": user("lost parent"),
        }
    )
    lines.append(
        {"type": "message", "id": "c1", "parentId": "c2", "timestamp": "t", "message": user("cycle 1")}
    )
    lines.append(
        {"type": "message", "id": "c2", "parentId": "c1", "timestamp": "t", "message": user("cycle 2")}
    )
    path = b.write(tmp_path / "s.jsonl")
    index = load(path)
    assert any("duplicate id e0002" in str(w) for w in index.warnings)
    assert index.by_id["e0002"].data["message"]["content"][0]["text"] == "dup"  # the later one wins, as in pi
    assert len(index.entries) == 6  # the shadowed one is still there
    assert [e.id for e in index.path_to("c2")] == ["c1", "c2"]  # the walk stops at the cycle
    roots = {e.id for e in index.roots()}
    assert {"e0001", "orphan"} <= roots and roots & {"c1", "c2"}
    notes = index.tree_warnings()
    assert any("missing parent" in n for n in notes) and any("cycle" in n for n in notes)
    walked = {e.id for r in index.roots() for e in index.walk(r)}
    assert walked == {"e0001", "e0002", "orphan", "c1", "c2"}


def test_not_a_session(tmp_path: Path) -> None:
    path = tmp_path / "x.jsonl"
    path.write_text('{"type":"message","id":"a"}\n')
    with pytest.raises(NotASessionError, match="line 1 is not a session header"):
        read_file(path)
    path.write_text("")
    with pytest.raises(NotASessionError, match="empty file"):
        read_file(path)
    with pytest.raises(StoreError, match="no such session file"):
        read_file(tmp_path / "missing.jsonl")


def test_pi_v1_is_migrated_in_memory_and_read_only(tmp_path: Path) -> None:
    lines = [
        header(version=None),
        {"type": "message", "timestamp": "t", "message": user("first")},
        {"type": "message", "timestamp": "t", "message": assistant("second")},
        {"type": "message", "timestamp": "t", "message": user("third")},
        {
            "type": "compaction",
            "timestamp": "t",
            "summary": "S",
            "firstKeptEntryIndex": 3,
            "tokensBefore": 100,
        },
    ]
    path = tmp_path / "v1.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    before = path.read_bytes()
    index = load(path)
    ids = [e.id for e in index.entries]
    assert len(set(ids)) == 4 and [e.parent_id for e in index.entries] == [None, *ids[:-1]]
    assert index.by_id[ids[3]].data["firstKeptEntryId"] == ids[2]
    assert [e.id for e in load(path).entries] == ids  # deterministic across loads
    session = Session.open(path)
    assert session.read_only and "fork" in (session.read_only_reason or "")
    with pytest.raises(ReadOnlyError):
        session.append_message(user("x"))
    assert path.read_bytes() == before


def test_pi_v2_hook_message_becomes_custom() -> None:
    b = Builder(lines=[header(version=2)])
    b.message({"role": "hookMessage", "content": "from a hook", "timestamp": 1})
    index = SessionIndex(parse_session(b.text().encode()))
    assert index.entries[0].role == "custom"


def test_labels_name_and_pins(tmp_path: Path) -> None:
    with Session.create(tmp_path, tmp_path) as s:
        a = s.append_message(user("one"))
        s.label(a.id, "start")
        s.rename("  My   session  ")
        s.pin(a.id)
        assert s.index.labels == {a.id: "start"} and s.index.name == "My session" and s.index.is_pinned(a.id)
        s.label(a.id, None)
        s.pin(a.id, False)
        assert s.index.labels == {} and not s.index.is_pinned(a.id)
        with pytest.raises(EntryNotFoundError):
            s.label("nope", "x")
    index = load(s.path)
    assert index.labels == {} and index.name == "My session"


def test_branch_is_durable_and_pi_compatible(tmp_path: Path) -> None:
    with Session.create(tmp_path, tmp_path) as s:
        a = s.append_message(user("one"))
        s.append_message(assistant("two"))
        marker = s.branch(a.id)
        assert marker is not None and s.branch(marker.id) is None  # already the leaf
    index = load(s.path)
    assert index.leaf_id == marker.id and [e.id for e in index.active_path()] == [a.id, marker.id]
    assert marker.data["type"] == "custom"  # pi treats it as state: never in context


def test_fsync_policy_from_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENT_TUI_FSYNC", "never")
    assert FsyncPolicy.from_env() is FsyncPolicy.NEVER
    monkeypatch.setenv("AGENT_TUI_FSYNC", "sometimes")
    with pytest.raises(StoreError, match="AGENT_TUI_FSYNC"):
        FsyncPolicy.from_env()


@pytest.mark.slow  # agent-tui (or Python) as a process: integration by nature
def test_disk_full_keeps_memory_consistent_with_file(tmp_path: Path) -> None:
    """A write cut short by a full disk (RLIMIT_FSIZE here) is a clear error; memory matches the file."""
    with Session.create(tmp_path, tmp_path) as s:
        s.append_message(user("ok"))
    code = f"""
import resource, signal, os
from agent_tui.store.session import Session
from agent_tui.store.errors import StoreError
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
s = Session.open({str(s.path)!r})
count = len(s.index)
size = os.path.getsize({str(s.path)!r})
resource.setrlimit(resource.RLIMIT_FSIZE, (size + 40, resource.RLIM_INFINITY))
try:
    s.append_message({{"role": "user", "content": "x" * 500, "timestamp": 1}})
except StoreError as e:
    print("ERROR", e)
print("SAME", len(s.index) == count)
resource.setrlimit(resource.RLIMIT_FSIZE, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
after = s.append_message({{"role": "user", "content": "after", "timestamp": 2}})
print("AFTER", after.id)
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert "ERROR" in out and "disk full" in out and "SAME True" in out
    after_id = out.split("AFTER ")[1].strip()
    index = load(s.path)
    assert index.leaf_id == after_id and [e.role for e in index.entries] == ["user", "user"]
    assert any("malformed" in str(w) for w in index.warnings)  # the torn 40 bytes, kept and reported


def test_tool_pairs_load(tmp_path: Path) -> None:
    b = Builder()
    b.message(user("read it"))
    b.message(assistant("", [("c1", "read", {"path": "a"})]))
    b.message(tool_result("c1", "body"))
    index = load(b.write(tmp_path / "s.jsonl"))
    assert [e.role for e in index.active_path()] == ["user", "assistant", "toolResult"]


def test_latest_session_is_the_last_activity_not_the_newest_file_name(tmp_path: Path) -> None:
    """``-c``'s cheap path orders as the listing does: the last entry's timestamp."""
    from agent_tui.store.listing import latest_session

    (tmp_path / "a-old-name.jsonl").write_text(
        json.dumps(
            {"type": "session", "version": 3, "id": "a", "timestamp": "2025-01-01T00:00:00Z", "cwd": "/"}
        )
        + "\n"
        + json.dumps(
            {
                "type": "message",
                "id": "m1",
                "parentId": None,
                "timestamp": "2025-06-01T00:00:00Z",
                "message": {"role": "user", "content": "late"},
            }
        )
        + "\n"
    )
    (tmp_path / "b-new-name.jsonl").write_text(
        json.dumps(
            {"type": "session", "version": 3, "id": "b", "timestamp": "2025-02-01T00:00:00Z", "cwd": "/"}
        )
        + "\n"
    )
    (tmp_path / "z-broken.jsonl").write_text("not a session\n")
    assert latest_session("/", session_dir=str(tmp_path)) == tmp_path / "a-old-name.jsonl"
    assert latest_session("/", session_dir=str(tmp_path / "none")) is None
