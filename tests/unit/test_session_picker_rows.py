"""A resume picker row: one entry is "1 entry", not "1 entries"."""

from __future__ import annotations

from pathlib import Path

from agent_tui.library.search_summary import SessionSummary, summarize
from agent_tui.store.session import Session
from agent_tui.tui.screens.session_picker import describe
from tests.support.session_builder import Builder, assistant, user


def _summary(tmp_path: Path, messages: int) -> SessionSummary:
    b = Builder()
    for i in range(messages):
        b.message(user(f"question {i}") if i % 2 == 0 else assistant(f"answer {i}"))
    path = b.write(tmp_path / f"s{messages}.jsonl")
    with Session.open(path, write=False) as session:
        return summarize(path, path.read_bytes(), session.index)


def test_one_entry_and_two_entries(tmp_path: Path) -> None:
    assert "  1 entry  " in describe(_summary(tmp_path, 1)).plain
    assert "  2 entries  " in describe(_summary(tmp_path, 2)).plain
