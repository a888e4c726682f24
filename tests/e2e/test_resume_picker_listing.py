"""The resume picker lists from the summaries at once; the full-text index is built only when a
search is typed, in a thread, the list staying usable and the title saying so meanwhile."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import Input, Label, OptionList

from agent_tui.library.search import Library, RefreshStats
from agent_tui.tui.screens.session_picker import SessionPicker
from tests.support.pilot import wait_for
from tests.support.tui_fixtures import SIZE, make_app, sample_session, write_lines

#: The whole app driven key by key for seconds (2.5 s of CPU, 6-9 s wall, loaded): ``make test`` runs them,
#: the edit loop does not.
pytestmark = pytest.mark.slow


def _chunks(db: Path) -> int:
    with sqlite3.connect(db) as conn:
        return int(conn.execute("SELECT count(*) FROM chunks").fetchone()[0])


def _second(tmp_path: Path) -> Path:
    lines: list[dict[str, Any]] = [
        {
            "type": "session",
            "version": 3,
            "id": "s2",
            "timestamp": "2026-01-02T00:00:00.000Z",
            "cwd": "/tmp/p",
        },
        {
            "type": "message",
            "id": "q1",
            "parentId": None,
            "timestamp": "2026-01-02T00:00:00.000Z",
            "message": {"role": "user", "content": "Write the release notes", "timestamp": 1},
        },
    ]
    return write_lines(tmp_path / "sessions" / "2026-01-02_second.jsonl", lines)


def _title(picker: SessionPicker) -> str:
    return str(picker.query_one("#picker-title", Label).render())


async def test_opening_the_picker_lists_without_indexing_text_and_a_search_then_does(tmp_path: Path) -> None:
    first = sample_session(tmp_path, "2026-01-01_first.jsonl")
    _second(tmp_path)
    db = tmp_path / "index.sqlite3"
    app = make_app(tmp_path, None, search_index=db)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("ctrl+o")
        await wait_for(pilot, lambda: isinstance(app.screen, SessionPicker), "picker open")
        picker = app.screen
        assert isinstance(picker, SessionPicker)
        await wait_for(pilot, lambda: picker.searched == "" and len(picker.shown) == 2, "listed")
        assert _chunks(db) == 0  # the list came from the summaries alone
        assert _title(picker) == "Resume a session (2)"
        # "return int(x)" is only in a read tool's output, in the first session
        await pilot.press(*'"return int"')
        await wait_for(pilot, lambda: picker.searched == '"return int"', "searched")
        assert [s.path for s in picker.shown] == [str(first)]
        assert _chunks(db) == 2  # the text index was built for the search
        await wait_for(
            pilot, lambda: _title(picker) == "Resume a session (1 of 2 match)", "the search's count"
        )
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.session is not None and app.session.path == first, "opened")


class _HeldText(Library):
    """A library whose full-text refresh waits until ``release`` is set (as a large one takes a while)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.release = threading.Event()
        self.text_started = threading.Event()

    def refresh(
        self, progress: Callable[[int, int], None] | None = None, *, text: bool = True, jobs: int = 1
    ) -> RefreshStats:
        if text:
            self.text_started.set()
            self.release.wait(60)
        return super().refresh(progress, text=text, jobs=jobs)


async def test_while_the_text_is_indexed_the_title_says_so_and_the_list_stays_usable(tmp_path: Path) -> None:
    first = sample_session(tmp_path, "2026-01-01_first.jsonl")
    second = _second(tmp_path)
    library = _HeldText([tmp_path / "sessions"], db_path=tmp_path / "index.sqlite3")
    app = make_app(tmp_path, None)
    async with app.run_test(size=SIZE) as pilot:
        picker = SessionPicker(library)
        chosen: list[str | None] = []
        app.push_screen(picker, chosen.append)
        await wait_for(pilot, lambda: picker.searched == "" and len(picker.shown) == 2, "listed")
        assert not library.text_started.is_set()
        try:
            await pilot.press(*"release")
            await wait_for(pilot, lambda: "indexing 2 sessions…" in _title(picker), "indexing, said")
            # meanwhile the summaries answer: "release" is in the second's first message
            await wait_for(pilot, lambda: [s.path for s in picker.shown] == [str(second)], "summary hits")
            assert picker.searched == ""  # not the complete answer yet
            await pilot.press("down")
            options = picker.query_one(OptionList)
            assert options.has_focus and options.highlighted == 0
            picker.query_one(Input).focus()
            await pilot.pause()
            for _ in range(len("release")):
                await pilot.press("backspace")
            await wait_for(pilot, lambda: picker.searched == "" and len(picker.shown) == 2, "all again")
            await pilot.press(*'"return int"')
            assert "indexing 2 sessions…" in _title(picker)
        finally:
            library.release.set()
        await wait_for(pilot, lambda: picker.searched == '"return int"', "searched with the text")
        assert [s.path for s in picker.shown] == [str(first)]
        await wait_for(
            pilot, lambda: _title(picker) == "Resume a session (1 of 2 match)", "the search's count"
        )
        await pilot.press("enter")
        await wait_for(pilot, lambda: chosen == [str(first)], "opened")


async def test_enter_while_the_text_is_indexed_opens_the_first_complete_hit(tmp_path: Path) -> None:
    first = sample_session(tmp_path, "2026-01-01_first.jsonl")
    _second(tmp_path)
    library = _HeldText([tmp_path / "sessions"], db_path=tmp_path / "index.sqlite3")
    app = make_app(tmp_path, None)
    async with app.run_test(size=SIZE) as pilot:
        picker = SessionPicker(library)
        chosen: list[str | None] = []
        app.push_screen(picker, chosen.append)
        await wait_for(pilot, lambda: picker.searched == "" and len(picker.shown) == 2, "listed")
        try:
            await pilot.press(*"parser")  # in the first's first message, and in its tool call
            await wait_for(pilot, lambda: "indexing 2 sessions…" in _title(picker), "indexing, said")
            await wait_for(pilot, lambda: [s.path for s in picker.shown] == [str(first)], "summary hits")
            await pilot.press("enter")
            await pilot.pause()
            assert chosen == [] and isinstance(app.screen, SessionPicker)  # waits for the whole answer
        finally:
            library.release.set()
        await wait_for(pilot, lambda: chosen == [str(first)], "opened once complete")
