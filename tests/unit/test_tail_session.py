"""``Session.open_tail``: the read-only view of a big file's end the app shows while the whole file
is indexed. Its projection is the full parse's, over random sessions (pins set above the kept
entry aside: the panel waits for the index for that reason)."""

from __future__ import annotations

from pathlib import Path

import msgspec
import pytest

from agent_tui.projection.context import Projector
from agent_tui.store.session import Session
from agent_tui.store.sidecar import is_current, opens_slowly
from tests.support.random_sessions import random_session
from tests.support.session_builder import Builder, assistant, user


def _messages(session: Session) -> tuple[list[bytes], list[str]]:
    projection = Projector(session.index).project()
    return [msgspec.json.encode(m.peek_message()) for m in projection.messages], [
        e.id for e in projection.path
    ]


def test_the_tail_view_projects_what_the_full_parse_does(tmp_path: Path) -> None:
    compared = 0
    for seed in range(300):
        path = random_session(seed, 60).write(tmp_path / f"s{seed}.jsonl")
        partial = Session.open_tail(path)
        if partial is None:
            continue
        assert partial.partial and partial.read_only and "indexing" in (partial.read_only_reason or "")
        with Session.open(path, write=False) as full:
            tail_messages, tail_path = _messages(partial)
            full_messages, full_path = _messages(full)
        assert tail_messages == full_messages, seed
        assert full_path[len(full_path) - len(tail_path) :] == tail_path, seed
        compared += 1
    assert compared >= 40  # the random sessions hold compactions on their branch often enough


def test_a_branch_without_compaction_is_opened_whole(tmp_path: Path) -> None:
    b = Builder()
    b.message(user("hi"))
    b.message(assistant("hello"))
    assert Session.open_tail(b.write(tmp_path / "s.jsonl")) is None


def test_a_big_file_opens_slowly_until_its_sidecar_is_current(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    b = Builder()
    b.message(user("hi"))
    path = b.write(tmp_path / "s.jsonl")
    monkeypatch.setenv("AGENT_TUI_SLOW_OPEN_BYTES", "1")
    assert opens_slowly(path) and not is_current(path)
    Session.open(path, write=False).close()  # builds the sidecar
    assert is_current(path) and not opens_slowly(path)
    with path.open("ab") as f:  # pi appends a line: still current (parsed at the open)
        f.write(
            b'{"type":"label","id":"zz","parentId":null,"timestamp":"2025-01-01T00:00:00Z","targetId":"x"}\n'
        )
    assert is_current(path)
    data = path.read_bytes()
    path.write_bytes(data[: data.index(b"\n") + 1])  # shortened below what the seal covers
    assert not is_current(path)
    monkeypatch.setenv("AGENT_TUI_SLOW_OPEN_BYTES", str(1 << 40))
    assert not opens_slowly(path)
