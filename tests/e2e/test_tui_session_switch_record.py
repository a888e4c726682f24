"""A session the app leaves for another is recorded in the session library's index in a thread of
its own (recording re-reads the file: 0.15 s for 20,000 entries, which the new session's opening
waited for), and is free to be opened again at once."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

from agent_tui.library.search import Library
from agent_tui.library.search_index import IndexDatabase
from agent_tui.store.session import Session
from tests.support.pilot import wait_for
from tests.support.tui_fixtures import SIZE, ScriptedFactory, make_app, sample_session

pytestmark = [pytest.mark.timeout(60)]


async def test_the_session_left_is_recorded_off_the_event_loop(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = sample_session(tmp_path, "2026-01-01_first.jsonl")
    second = sample_session(tmp_path, "2026-01-02_second.jsonl")
    db = tmp_path / "index.sqlite3"
    with Library([first.parent], db_path=db) as library:
        library.refresh(text=False)  # listed once: the index exists
    recorded: list[tuple[Path, str]] = []
    refresh_file = IndexDatabase.refresh_file

    def recording(self: IndexDatabase, path: Path, **kwargs: Any) -> Any:
        recorded.append((path, threading.current_thread().name))
        return refresh_file(self, path, **kwargs)

    monkeypatch.setattr(IndexDatabase, "refresh_file", recording)
    app = make_app(tmp_path, first, search_index=db, agent_factory=ScriptedFactory(reply="quokka"))
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.session is not None and app.session.path == first, "opened")
        app.composer.set_text("tell me about marsupials")
        await pilot.press("enter")
        await wait_for(pilot, lambda: "quokka" in first.read_text() and not app.busy, "the reply written")
        assert app.open_session(second)
        with Session.open(first):  # the first's lock was freed at once (not after its recording)
            pass
        await wait_for(pilot, lambda: bool(recorded), "the first recorded")
        assert recorded[0][0] == first.resolve()
        assert recorded[0][1] != threading.main_thread().name  # not on the event loop's thread
        await wait_for(pilot, lambda: not any(t.is_alive() for t in app._recording), "the recording done")
    with Library([first.parent], db_path=db) as library:
        assert [h.session.path for h in library.search("marsupials")] == [str(first)]
