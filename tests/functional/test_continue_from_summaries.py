"""``-c`` finds the latest session from the listing's summaries where they are current, and
reads a file only when it has no summary or changed after it (by its real last entry)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

import agent_tui.library.latest as latest
from agent_tui.library.search import Library
from agent_tui.sdk.session import open_session
from agent_tui.store import listing


def _write(path: Path, sid: str, *stamps: str) -> Path:
    """A session whose header and entries carry these timestamps (the last one: its last activity)."""
    lines = [{"type": "session", "version": 3, "id": sid, "timestamp": stamps[0], "cwd": "/w"}]
    parent = None
    for n, stamp in enumerate(stamps[1:]):
        eid = f"{sid}-{n}"
        message = {"role": "user", "content": f"message {n}", "timestamp": n}
        lines.append(
            {"type": "message", "id": eid, "parentId": parent, "timestamp": stamp, "message": message}
        )
        parent = eid
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def _append(path: Path, stamp: str) -> None:
    line = {
        "type": "message",
        "id": f"late-{stamp}",
        "parentId": None,
        "timestamp": stamp,
        "message": {"role": "user", "content": "later", "timestamp": 99},
    }
    with path.open("a") as f:
        f.write(json.dumps(line) + "\n")


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    found = tmp_path / "sessions"
    found.mkdir()
    _write(found / "a-old-name.jsonl", "a", "2025-01-01T00:00:00Z", "2025-06-01T00:00:00Z")
    _write(found / "b-new-name.jsonl", "b", "2025-02-01T00:00:00Z")
    _write(found / "c-middle.jsonl", "c", "2025-03-01T00:00:00Z", "2025-04-01T00:00:00Z")
    (found / "z-broken.jsonl").write_text("not a session\n")
    return found


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The files read for their last entry (the summaries not used for them)."""
    read: list[str] = []

    def counted(path: Path) -> str | None:
        read.append(path.name)
        return listing.last_activity(path)

    monkeypatch.setattr(latest, "last_activity", counted)
    return read


def _listed(folder: Path, db: Path) -> None:
    with Library([folder], db_path=db) as lib:
        lib.refresh(text=False)


def test_with_current_summaries_no_readable_file_is_read(
    folder: Path, tmp_path: Path, reads: list[str]
) -> None:
    db = tmp_path / "index.sqlite3"
    _listed(folder, db)
    found = latest.latest_session("/w", session_dir=str(folder), db_path=db)
    assert found == folder / "a-old-name.jsonl" == listing.latest_session("/w", session_dir=str(folder))
    assert reads == ["z-broken.jsonl"]  # unreadable: it has no summary, so it is tried


def test_without_an_index_every_file_is_read_for_the_same_answer(
    folder: Path, tmp_path: Path, reads: list[str]
) -> None:
    db = tmp_path / "none.sqlite3"
    assert latest.latest_session("/w", session_dir=str(folder), db_path=db) == folder / "a-old-name.jsonl"
    assert sorted(reads) == ["a-old-name.jsonl", "b-new-name.jsonl", "c-middle.jsonl", "z-broken.jsonl"]
    assert not db.exists()  # -c does not create the index


def test_a_file_that_grew_after_its_summary_counts_by_its_new_last_entry(
    folder: Path, tmp_path: Path, reads: list[str]
) -> None:
    db = tmp_path / "index.sqlite3"
    _listed(folder, db)
    _append(folder / "b-new-name.jsonl", "2025-09-01T00:00:00Z")  # now the latest, unknown to its summary
    assert latest.latest_session("/w", session_dir=str(folder), db_path=db) == folder / "b-new-name.jsonl"
    assert sorted(reads) == ["b-new-name.jsonl", "z-broken.jsonl"]


def test_a_file_replaced_after_its_summary_counts_by_what_it_holds_now(folder: Path, tmp_path: Path) -> None:
    db = tmp_path / "index.sqlite3"
    _listed(folder, db)
    path = folder / "a-old-name.jsonl"
    stat = path.stat()
    _write(path, "a", "2025-01-01T00:00:00Z", "2025-01-02T00:00:00Z")  # older now; the same size
    assert path.stat().st_size == stat.st_size
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000))
    assert latest.latest_session("/w", session_dir=str(folder), db_path=db) == folder / "c-middle.jsonl"


def test_a_new_file_and_a_damaged_index_still_count(folder: Path, tmp_path: Path) -> None:
    db = tmp_path / "index.sqlite3"
    _listed(folder, db)
    _write(folder / "d-new.jsonl", "d", "2025-12-01T00:00:00Z")  # after the listing: no summary
    assert latest.latest_session("/w", session_dir=str(folder), db_path=db) == folder / "d-new.jsonl"
    db.write_bytes(b"not a database" * 100)
    for suffix in ("-wal", "-shm"):
        Path(f"{db}{suffix}").unlink(missing_ok=True)
    assert latest.latest_session("/w", session_dir=str(folder), db_path=db) == folder / "d-new.jsonl"


def test_summaries_of_a_subfolder_or_a_sibling_folder_are_not_taken(folder: Path, tmp_path: Path) -> None:
    db = tmp_path / "index.sqlite3"
    sibling = tmp_path / "sessions-other"  # a name that starts with the folder's
    sub = folder / "nested"
    for other in (sibling, sub):
        other.mkdir()
        _write(other / "zz-latest.jsonl", "z", "2026-01-01T00:00:00Z")
    with Library([folder, sibling, sub], db_path=db) as lib:
        lib.refresh(text=False)
    assert latest.latest_session("/w", session_dir=str(folder), db_path=db) == folder / "a-old-name.jsonl"


def test_the_sdk_continues_from_the_data_dirs_summaries(
    folder: Path, tmp_path: Path, reads: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AGENT_TUI_HOME", str(tmp_path / "home"))
    with Library([folder]) as lib:  # the data dir's index, as `agent-tui sessions` leaves it
        lib.refresh(text=False)
    handle = open_session(cwd="/w", session_dir=folder, continue_last=True, write=False)
    try:
        assert handle.store.path == folder / "a-old-name.jsonl"
    finally:
        handle.close()
    assert reads == ["z-broken.jsonl"]
