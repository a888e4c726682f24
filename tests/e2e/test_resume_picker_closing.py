"""Closing the resume picker (Escape) while the library works in a thread: the thread cannot be
stopped, so the library's connections are closed when it returns, not under it."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from agent_tui.library.search import Library, RefreshStats
from agent_tui.tui.screens.session_picker import SessionPicker
from tests.support.pilot import wait_for
from tests.support.tui_fixtures import SIZE, make_app, sample_session

pytestmark = [pytest.mark.timeout(60), pytest.mark.slow]  # a Textual app per test


class _HeldRefresh(Library):
    """A library whose refresh takes its connection, then waits for ``release`` (a big folder takes
    a while), then goes on with it; what went wrong in the thread is kept in ``errors``."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.release = threading.Event()
        self.started = threading.Event()
        self.finished = threading.Event()
        self.errors: list[BaseException] = []
        self.closed_while_running = False
        self.hold_text = False

    def refresh(
        self, progress: Callable[[int, int], None] | None = None, *, text: bool = True, jobs: int = 1
    ) -> RefreshStats:
        if text != self.hold_text:
            return super().refresh(progress, text=text, jobs=jobs)
        db = self.db
        self.started.set()
        self.release.wait(30)
        try:
            db.execute("SELECT count(*) FROM meta").fetchone()
            return super().refresh(progress, text=text, jobs=jobs)
        except BaseException as e:
            self.errors.append(e)
            raise
        finally:
            self.finished.set()

    def close(self) -> None:
        if self.started.is_set() and not self.finished.is_set():
            self.closed_while_running = True
        super().close()


@pytest.mark.parametrize("held", ["listing", "text index"])
async def test_escape_while_the_picker_refreshes_closes_the_library_after_the_thread(
    tmp_path: Path, held: str
) -> None:
    sample_session(tmp_path, "2026-01-01_first.jsonl")
    library = _HeldRefresh([tmp_path / "sessions"], db_path=tmp_path / "index.sqlite3")
    library.hold_text = held == "text index"
    app = make_app(tmp_path, None)
    async with app.run_test(size=SIZE) as pilot:
        picker = SessionPicker(library)
        app.push_screen(picker)
        try:
            if held == "text index":
                await wait_for(pilot, lambda: picker.searched == "", "listed")
                await pilot.press(*"parser")  # a search: the text index is brought up to date
            await wait_for(pilot, library.started.is_set, "the refresh running in its thread")
            await pilot.press("escape")
            await wait_for(pilot, lambda: not isinstance(app.screen, SessionPicker), "the picker closed")
        finally:
            library.release.set()
        await wait_for(pilot, library.finished.is_set, "the thread done")
        await wait_for(pilot, lambda: not library._connections, "the library closed")
    assert not library.closed_while_running
    assert library.errors == [], "the thread's connection was closed under it"
